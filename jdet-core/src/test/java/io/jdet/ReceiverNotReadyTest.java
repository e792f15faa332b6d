package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A receiver not ready for longer than the ack timeout: its exact NAKs are answers, so the sender keeps retrying up
 * to {@code rnrRetryCount} rather than giving up with RETRY_EXCEEDED when {@code ackTimeoutMs} has passed
 * (PROTOCOL.md 6.5). Found by a stress run.
 */
@Timeout(60)
class ReceiverNotReadyTest {

    @Test
    void aReceiverNotReadyLongerThanTheAckTimeoutIsWaitedFor() {
        final Configuration c = new Configuration().rnrRetryCount(1_000_000).rnrDelayUs(1000).ackTimeoutMs(100);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c))) {
            pair.qpA.send(1, sge(pair.mrA, 0, 64), 1, 0, 0);
            Tests.assertNoCompletion(pair.cqA, 300); // three ack timeouts with the receiver not ready
            pair.qpB.recv(7, sge(pair.mrB, 0, 64), 1);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
        }
    }

    /** A receiver-not-ready delay longer than the ack timeout: the hold is the sender's own wait, not silence. */
    @Test
    void anRnrDelayLongerThanTheAckTimeoutEndsWithRnrRetryExceeded() {
        sendToAReceiverNeverReady(new Configuration().rnrRetryCount(2).rnrDelayUs(300_000).ackTimeoutMs(100));
    }

    @Test
    void aReceiverNeverReadyEndsWithRnrRetryExceeded() {
        // About 400 ms of retries, nearly three ack timeouts; a gap of 150 ms between two NAKs (a loaded machine
        // descheduling the peer) would still end it with RETRY_EXCEEDED, as it should: the peer did not answer.
        sendToAReceiverNeverReady(new Configuration().rnrRetryCount(40).rnrDelayUs(10_000).ackTimeoutMs(150));
    }

    /** A's send to B, which never posts a receive, ends with RNR_RETRY_EXCEEDED once the retries are spent. */
    private static void sendToAReceiverNeverReady(final Configuration c) {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c))) {
            pair.qpA.send(1, sge(pair.mrA, 0, 64), 1, 0, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.RNR_RETRY_EXCEEDED, wc.status(), wc.toString());
        }
    }
}
