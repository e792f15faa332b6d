package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The protocol's own deadlines (a receiver-not-ready wait of {@code rnrDelayUs}, a retransmission timeout of
 * {@code minRtoUs}) are kept whatever the background tick ({@code timerPeriodUs}, up to 1 s): the tick only bounds
 * idle work. Before the fix the per-queue-pair timers ran only once per tick, polled or not, so a 100 us RNR wait or
 * RTO took up to a second.
 */
@Timeout(30)
class ProtocolDeadlineTest {
    /**
     * Five receiver-not-ready rounds in a row. Waiting for a 1 s tick, every round after the first starts just after
     * a tick and waits about a second for the next: at least 4 s in all. With its 100 us delay, each round takes a
     * round trip and the delay: milliseconds, far below the bound even on a loaded machine.
     */
    @Test
    void shouldRetryAfterTheRnrDelayNotTheTimerPeriod() {
        final Configuration c = new Configuration().timerPeriodUs(1_000_000).rnrDelayUs(100).rnrRetryCount(1000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c))) {
            Tests.fill(pair.bufA.asSlice(0, 100), 1);
            long waitedNs = 0;
            for (int round = 0; round < 5; round++) {
                final long naks = pair.nicA.counters().get("rnr.naks.received");
                pair.qpA.send(round, sge(pair.mrA, 0, 100), 1, 0, 0);
                Tests.await("the receiver-not-ready NAK", () -> pair.nicA.counters().get("rnr.naks.received") > naks);
                pair.qpB.recv(round, sge(pair.mrB, 0, 100), 1);
                final long posted = System.nanoTime();
                final WorkCompletion got = Tests.pollUntil(pair.cqB, 1, Duration.ofSeconds(10)).get(0);
                waitedNs += System.nanoTime() - posted;
                assertEquals(WcStatus.SUCCESS, got.status());
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            }
            final long ms = waitedNs / 1_000_000;
            assertTrue(ms < 2000, "five sends were retried " + ms + " ms in all after their receives were posted, "
                + "with rnrDelayUs 100: the timer period (1 s) decided, not the RNR delay");
        }
    }

    @Test
    void shouldRetransmitAfterTheRtoNotTheTimerPeriod() {
        // frames are lost often: about ten retransmission timeouts of 100 us each, each about a second (10 s in
        // all) when it waits for the 1 s tick
        final Configuration c = new Configuration().timerPeriodUs(1_000_000).minRtoUs(100).maxRtoUs(100)
            .faults(new FaultPlan(0.3, 0, 0, 0, 7));
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c))) {
            final long start = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                pair.qpA.write(i, sge(pair.mrA, 0, 64), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
                assertEquals(WcStatus.SUCCESS, Tests.pollUntil(pair.cqA, 1, Duration.ofSeconds(20)).get(0).status());
            }
            final long ms = (System.nanoTime() - start) / 1_000_000;
            final long timeouts = pair.nicA.counters().get("retransmit.timeouts")
                + pair.nicB.counters().get("retransmit.timeouts");
            assertTrue(timeouts > 0, "frames were lost: " + pair.nicA.counters());
            assertTrue(ms < 3000, "20 writes over 30% loss with a 100 us RTO took " + ms + " ms ("
                + timeouts + " timeouts): the timer period (1 s) decided, not the RTO");
        }
    }
}
