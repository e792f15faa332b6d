package io.jdet.internal.verbs;

import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.WrFlags;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The last frame of a signaled work request asks for an immediate acknowledgement (FORCE_ACK), so the request
 * completes in about one round trip, not after the responder's delayed-ack time; unsignaled traffic keeps the
 * delayed ack. The delayed-ack time here is ten minutes, far beyond every deadline of the test, so a completion
 * can only come from the requested ack.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AckRequestTest {
    private static final Configuration LATE_ACKS = new Configuration().ackDelayUs(600_000_000);

    @ParameterizedTest(name = "responder polled by the application: {0}")
    @ValueSource(booleans = {false, true})
    void shouldCompleteSignaledWriteWithoutWaitingForTheDelayedAck(final boolean responderPolled) {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(LATE_ACKS))) {
            final DataSegment[] from = {new DataSegment().set(pair.mrA, 0, 8)};
            final WorkCompletion[] wc = {new WorkCompletion()};
            final WorkCompletion[] none = {new WorkCompletion()};
            for (int round = 0; round < 3; round++) {
                pair.qpA.write(round, from, 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
                final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
                while (pair.cqA.poll(wc) == 0) {
                    if (responderPolled) {
                        assertEquals(0, pair.cqB.poll(none), "a write completes nothing at B");
                    }
                    if (System.nanoTime() - deadline > 0) {
                        fail("round " + round + ": the write did not complete within " + Tests.TIMEOUT + ": "
                            + pair.nicA.counters() + " / " + pair.nicB.counters());
                    }
                    Thread.onSpinWait();
                }
                assertEquals(WcStatus.SUCCESS, wc[0].status());
                assertEquals(round, wc[0].id());
            }
            assertTrue(pair.nicB.counters().get("acks.sent") >= 3, pair.nicB.counters().toString());
        }
    }

    @Test
    void shouldKeepTheDelayedAckForUnsignaledWrites() {
        // No retransmission either within the test: a retransmitted frame asks for an ack.
        final Configuration noRetransmission = new Configuration().ackDelayUs(600_000_000).minRtoUs(600_000_000)
            .maxRtoUs(600_000_000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(noRetransmission))) {
            final NicImpl b = (NicImpl) pair.nicB;
            final long acksBefore = pair.nicB.counters().get("acks.sent");
            pair.bufA.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 0x1122334455667788L);
            final DataSegment[] from = {new DataSegment().set(pair.mrA, 0, 8)};
            pair.qpA.write(1, from, 1, pair.mrB.address(), pair.mrB.rKey(), WrFlags.SUPPRESSED, 0);
            Tests.await("the write lands at B",
                () -> pair.bufB.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) == 0x1122334455667788L);
            // B's progress pass placed it under its engine lock, and would have sent a requested ack in that pass.
            b.lock.lock();
            try {
                assertEquals(acksBefore, b.counters.acksSent,
                    "nothing asked for an ack: it waits for the delayed-ack time");
            } finally {
                b.lock.unlock();
            }
            // A signaled write behind it asks, and its completion reaps the unsignaled one.
            pair.qpA.write(2, from, 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            final WorkCompletion done = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.SUCCESS, done.status());
            assertEquals(2, done.id());
        }
    }
}
