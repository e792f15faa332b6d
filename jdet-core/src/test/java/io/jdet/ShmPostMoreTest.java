package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
            PostMoreTest.sendBursts(pair, bursts, burst);
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
