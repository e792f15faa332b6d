package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static io.jdet.testing.Tests.assertSameBytes;
import static io.jdet.testing.Tests.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The in-process fabric as devices share it: one frame size per fabric, NIC numbers reused, rings bounded. */
@Timeout(60)
class LoopFabricTest {

    @Test
    void shouldCarryLargeMessagesBothWaysBetweenDevicesConfiguredWithDifferentMtus() {
        final String fabric = Tests.uniqueFabric("mtu");
        final int length = 20_000; // several frames at either MTU
        try (Det first = Det.open(new Configuration().loopMtu(4176));
             Det second = Det.open(new Configuration().loopMtu(1500));
             Arena arena = Arena.ofShared()) {
            final Nic nicA = first.openNic(fabric, null);
            final Nic nicB = second.openNic(fabric, null);
            assertEquals(4176, nicA.query().mtu());
            assertEquals(4176, nicB.query().mtu(), "a NIC adopts the frame size of the fabric it joins");
            final ProtectionDomain pdA = nicA.allocPd();
            final ProtectionDomain pdB = nicB.allocPd();
            final CompletionQueue cqA = nicA.createCq(16, null);
            final CompletionQueue cqB = nicB.createCq(16, null);
            final QueuePair qpA = pdA.createQp(QpCreate.of(cqA, 4, 1));
            final QueuePair qpB = pdB.createQp(QpCreate.of(cqB, 4, 1));
            final MemorySegment bufA = arena.allocate(2L * length);
            final MemorySegment bufB = arena.allocate(2L * length);
            final MemoryRegion mrA = pdA.regMr(bufA, Loopback.ALL_RIGHTS);
            final MemoryRegion mrB = pdB.regMr(bufB, Loopback.ALL_RIGHTS);
            Loopback.connect(qpA, nicB, qpB);
            Loopback.connect(qpB, nicA, qpA);
            fill(bufA.asSlice(0, length), 1);
            fill(bufB.asSlice(0, length), 2);

            qpB.recv(1, sge(mrB, length, length), 1);
            qpA.recv(2, sge(mrA, length, length), 1);
            qpA.send(3, sge(mrA, 0, length), 1, 0, 0);
            qpB.send(4, sge(mrB, 0, length), 1, 0, 0);
            Tests.expectSuccess(cqA, 2);
            Tests.expectSuccess(cqB, 2);
            assertSameBytes(bufA.asSlice(0, length), bufB.asSlice(length, length));
            assertSameBytes(bufB.asSlice(0, length), bufA.asSlice(length, length));
            assertEquals(0L, nicA.counters().get("engine.errors"));
            assertEquals(0L, nicB.counters().get("engine.errors"));
            qpA.close();
            qpB.close();
            mrA.close();
            mrB.close();
        }
    }

    @Test
    void idlePollsSkipMostEnginePassesYetTheFirstPollAfterAFrameTakesIt() {
        final int polls = 1000;
        try (Loopback pair = Loopback.open()) {
            final WorkCompletion[] wc = {new WorkCompletion()};
            final long before = pair.nicA.counters().get("engine.idle_passes_skipped");
            for (int i = 0; i < polls; i++) {
                assertEquals(0, pair.cqA.poll(wc));
            }
            final long skipped = pair.nicA.counters().get("engine.idle_passes_skipped") - before;
            assertTrue(skipped >= polls / 2, skipped + " of " + polls + " idle passes skipped");
            assertTrue(skipped <= polls - polls / 64, skipped + " skipped: every 64th idle pass must run (timers)");
            pair.qpA.recv(1, sge(pair.mrA, 0, 8), 1);
            pair.qpB.send(2, sge(pair.mrB, 0, 8), 1, WrFlags.SUPPRESSED, 0); // lands in A's ring within the post
            assertEquals(1, pair.cqA.poll(wc), "the frame in the ring makes the next poll's pass run");
            assertEquals(1, wc[0].id());
            assertEquals(WcStatus.SUCCESS, wc[0].status());
        }
    }

    @Test
    void aLinkThatCannotTellItIsIdleNeverSkipsAPass() {
        try (Loopback pair = Loopback.open(new Loopback.Options().nic("udp:127.0.0.1"))) {
            final WorkCompletion[] wc = {new WorkCompletion()};
            for (int i = 0; i < 200; i++) {
                pair.cqA.poll(wc);
            }
            assertEquals(0, pair.nicA.counters().get("engine.idle_passes_skipped"));
        }
    }

    @Test
    void shouldReuseNicNumbersWhenNicsAreOpenedAndClosedForEver() {
        final String fabric = Tests.uniqueFabric("reuse");
        try (Det det = Det.open(new Configuration().loopMtu(1024).loopRingFrames(8))) {
            final Nic stays = det.openNic(fabric, null);
            final Set<String> addresses = new HashSet<>();
            for (int i = 0; i < 300; i++) {
                final Nic passing = det.openNic(fabric, null);
                addresses.add(passing.address());
                passing.close();
            }
            assertTrue(addresses.size() < 32, "300 NICs, one at a time, took " + addresses.size() + " numbers");
            assertEquals(0L, stays.counters().get("engine.errors"));
        }
    }

    @Test
    void shouldGiveAFabricANewMtuOnceItsLastNicClosed() {
        final String fabric = Tests.uniqueFabric("again");
        try (Det big = Det.open(new Configuration().loopMtu(8000));
             Det small = Det.open(new Configuration().loopMtu(1500))) {
            big.openNic(fabric, null).close();
            assertEquals(1500, small.openNic(fabric, null).query().mtu());
        }
    }

    @Test
    void shouldRefuseARingTooLargeForOneBufferWithEinval() {
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().loopRingFrames(1 << 16)));
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().loopRingFrames(1 << 30)));
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().loopRingFrames(Integer.MIN_VALUE)));
        try (Det det = Det.open(new Configuration().loopMtu(512).loopRingFrames(Configuration.LOOP_RING_FRAMES_MAX))) {
            assertEquals(512, det.openNic(Tests.uniqueFabric("ring"), null).query().mtu());
        }
    }
}
