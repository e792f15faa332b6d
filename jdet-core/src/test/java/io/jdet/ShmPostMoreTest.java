package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** WrFlags.MORE on the shared-memory link: held frames leave, bursts arrive once and in order, faults or not. */
@Timeout(60)
class ShmPostMoreTest {
    @Test
    void aPollThatFindsItsQueueEmptySendsWhatPostsFlaggedMoreHeld() {
        PostMoreTest.pollSendsWhatMoreHeld(new Loopback.Options().nic(Tests.uniqueShmGroup("more")));
    }

    private static void bursts(final Configuration configuration, final int bursts, final int burst) {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(configuration)
            .nic(Tests.uniqueShmGroup("burst")).depth(64, 64))) {
            long next = 0;
            for (int b = 0; b < bursts; b++) {
                for (int i = 0; i < burst; i++) {
                    pair.qpB.recv(next + i, sge(pair.mrB, 8L * i, 8), 1);
                    pair.bufA.set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i, next + i);
                }
                for (int i = 0; i < burst; i++) {
                    pair.qpA.send(next + i, sge(pair.mrA, 8L * i, 8), 1,
                        i == burst - 1 ? 0 : WrFlags.MORE | WrFlags.SUPPRESSED, 0);
                }
                final List<WorkCompletion> got = Tests.expectSuccess(pair.cqB, burst);
                for (int i = 0; i < burst; i++) {
                    assertEquals(next + i, got.get(i).id(), "in posting order");
                    assertEquals(next + i, pair.bufB.get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i));
                }
                assertEquals(next + burst - 1, Tests.expectSuccess(pair.cqA, 1).get(0).id());
                next += burst;
            }
            Tests.assertNoCompletion(pair.cqB, 20);
            assertTrue(pair.nicA.counters().get("link.tx.batches") > 0, "frames shared slots");
        }
    }

    @Test
    void burstsFlaggedMoreArriveOnceAndInOrderThroughFaults() {
        bursts(new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0.01, 31)).minRtoUs(300)
            .maxRtoUs(10_000).rnrRetryCount(1_000_000).rnrDelayUs(200), 20, 32);
    }

    @Test
    void burstsFlaggedMoreArriveOnceAndInOrderThroughATinyRing() {
        bursts(new Configuration().shmRingFrames(8).shmMtu(512), 20, 60);
    }
}
