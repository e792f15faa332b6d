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

/**
 * {@link WrFlags#MORE}: over UDP the frames of posts flagged MORE wait in the link for the next posts' frames, so
 * that a burst shares datagrams; the post without it sends them all; a held frame still leaves when nothing else
 * is posted. Without the flag every post sends its frame at once, as before.
 */
@Timeout(60)
class PostMoreTest {
    private static final int BURST = 16;

    private static Loopback udpPair() {
        return Loopback.open(new Loopback.Options().nic("udp:127.0.0.1").depth(64, 64));
    }

    private static long coalesced(final Loopback pair) {
        return pair.nicA.counters().get("link.tx.coalesced");
    }

    @Test
    void aBurstFlaggedMoreSharesDatagramsAndItsLastPostSendsThem() {
        try (Loopback pair = udpPair()) {
            for (int i = 0; i <= BURST; i++) {
                pair.qpB.recv(i, sge(pair.mrB, 8L * i, 8), 1);
                pair.bufA.set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i, 1000 + i);
            }
            final long before = coalesced(pair);
            for (int i = 0; i < BURST; i++) {
                pair.qpA.send(i, sge(pair.mrA, 8L * i, 8), 1, WrFlags.MORE | WrFlags.SUPPRESSED, 0);
            }
            // Each frame joined the datagram staged before it. The NIC's progress thread, which sees no polls yet,
            // may send what is staged at its timer ticks: on a loaded machine a burst can straddle a few of them.
            assertTrue(coalesced(pair) - before >= BURST / 4, (coalesced(pair) - before) + " frames coalesced");
            pair.qpA.send(BURST, sge(pair.mrA, 8L * BURST, 8), 1, 0, 0);
            final List<WorkCompletion> got = Tests.expectSuccess(pair.cqB, BURST + 1);
            for (int i = 0; i <= BURST; i++) {
                assertEquals(i, got.get(i).id(), "in posting order");
                assertEquals(1000 + i, pair.bufB.get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i));
            }
            assertEquals(BURST, Tests.expectSuccess(pair.cqA, 1).get(0).id());
        }
    }

    @Test
    void burstsFlaggedMoreArriveExactlyOnceAndInOrderThroughLossDuplicationReorderingAndCorruption() {
        // Shared datagrams are lost, duplicated, reordered and corrupted whole: every message of every burst must
        // still land once, in order, with its bytes.
        final Configuration faulty = new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0.01, 31))
            .minRtoUs(300).maxRtoUs(10_000).rnrRetryCount(1_000_000).rnrDelayUs(200);
        final int bursts = 20;
        final int burst = 32;
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(faulty).nic("udp:127.0.0.1")
            .depth(64, 64))) {
            sendBursts(pair, bursts, burst);
            assertTrue(coalesced(pair) > 0, "frames shared datagrams");
            assertTrue(pair.nicB.counters().get("rx.duplicates") + pair.nicA.counters().get("frames.retransmitted") > 0,
                "the faults were felt");
        }
    }

    @Test
    void withoutTheFlagEveryPostSendsItsFrameAtOnce() {
        try (Loopback pair = udpPair()) {
            for (int i = 0; i < BURST; i++) {
                pair.qpB.recv(i, sge(pair.mrB, 8L * i, 8), 1);
            }
            final long before = coalesced(pair);
            for (int i = 0; i < BURST; i++) {
                pair.qpA.send(i, sge(pair.mrA, 8L * i, 8), 1, WrFlags.SUPPRESSED, 0);
            }
            assertEquals(before, coalesced(pair), "no frame waited for company");
            Tests.expectSuccess(pair.cqB, BURST);
        }
    }

    @Test
    void aHeldFrameGatheredFromARegionLeavesWholeWhenTheRegionIsDeregistered() {
        // 4 KiB from its own region: the staged datagram points into registered memory (gathered, not copied), so
        // deregistering the region must settle the link (send or copy what is staged) before it returns.
        try (Loopback pair = udpPair(); java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            final int n = 4096;
            final java.lang.foreign.MemorySegment memory = arena.allocate(n, 64);
            Tests.fill(memory, 77);
            final MemoryRegion own = pair.pdA.regMr(memory, Access.LOCAL_READ);
            pair.qpB.recv(1, sge(pair.mrB, 0, n), 1);
            pair.qpA.send(2, sge(own, 0, n), 1, WrFlags.MORE, 0);
            own.close();
            memory.fill((byte) 0); // the application's again: nothing may read it any more
            assertEquals(n, Tests.expectSuccess(pair.cqB, 1).get(0).length());
            final java.lang.foreign.MemorySegment expected = arena.allocate(n);
            Tests.fill(expected, 77);
            Tests.assertSameBytes(expected, pair.bufB.asSlice(0, n));
        }
    }

    @Test
    void aHeldFrameLeavesThoughNothingElseIsPosted() {
        try (Loopback pair = udpPair()) {
            pair.qpB.recv(1, sge(pair.mrB, 0, 8), 1);
            pair.qpA.send(2, sge(pair.mrA, 0, 8), 1, WrFlags.MORE, 0);
            // Only B polls: A's progress thread sends what A's link holds within a timer period.
            assertEquals(1, Tests.expectSuccess(pair.cqB, 1).get(0).id());
            assertEquals(2, Tests.expectSuccess(pair.cqA, 1).get(0).id());
        }
    }

    /**
     * The fabric holds the frames of posts flagged MORE too, and the next poll that finds its queue empty must send
     * them (an engine pass does; a lock release leaves them held). An idle poll on the fabric skips most passes when
     * its ring is empty: it must not skip one that has held frames to send.
     */
    @Test
    void onTheFabricAPollThatFindsItsQueueEmptySendsWhatPostsFlaggedMoreHeld() {
        pollSendsWhatMoreHeld(new Loopback.Options());
    }

    /**
     * Sends {@code bursts} bursts of {@code burst} 8-byte messages, each post but a burst's last flagged MORE, and
     * checks that every message arrives once, in posting order, with its bytes, and that each burst's last send
     * completes.
     */
    static void sendBursts(final Loopback pair, final int bursts, final int burst) {
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
    }

    /**
     * Twenty rounds of three posts flagged MORE (the first leaves at once, the other two are held) and one poll that
     * finds its queue empty: that poll's pass must send the two held frames, in one slot. The NIC's progress thread
     * may run a pass between two posts of a round (it ends the burst's batch: nothing is held then, and no slot of
     * two); the timer period of a second keeps that to a sender preempted for half a millisecond, so at least 18 of
     * the 20 rounds must show the slot. Without the poll's pass, about half did.
     */
    static void pollSendsWhatMoreHeld(final Loopback.Options options) {
        try (Loopback pair = Loopback.open(options.configuration(new Configuration().timerPeriodUs(1_000_000))
            .depth(64, 64))) {
            final WorkCompletion[] wc = {new WorkCompletion()};
            int batched = 0;
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < 3; i++) {
                    pair.qpB.recv(i, sge(pair.mrB, 8L * i, 8), 1);
                }
                final long before = pair.nicA.counters().get("link.tx.batches");
                for (int i = 0; i < 3; i++) {
                    pair.qpA.send(i, sge(pair.mrA, 8L * i, 8), 1, WrFlags.MORE | WrFlags.SUPPRESSED, 0);
                }
                assertEquals(0, pair.cqA.poll(wc));
                if (pair.nicA.counters().get("link.tx.batches") == before + 1) {
                    batched++;
                }
                Tests.expectSuccess(pair.cqB, 3);
            }
            assertTrue(batched >= 18, batched + " of 20 polls sent the two held frames in one slot");
        }
    }
}
