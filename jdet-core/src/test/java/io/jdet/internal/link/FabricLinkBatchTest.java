package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

import static io.jdet.internal.link.LinkFrames.counters;
import static io.jdet.internal.link.LinkFrames.assertFrames;
import static io.jdet.internal.link.LinkFrames.send;
import static io.jdet.internal.link.LinkFrames.HEADER;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fabric's batches: the first small frame of a batch leaves at once, alone; the small frames after it (and those
 * of a batch after a post flagged MORE) are staged and leave together in one ring slot, in order, each handed over
 * whole from offset 0; what cannot be staged leaves after what is staged for its peer.
 */
@Timeout(30)
class FabricLinkBatchTest {
    private static final AtomicLong NAMES = new AtomicLong();

    private static String fabric() {
        return "batch-test-" + NAMES.incrementAndGet();
    }

    /** Sends a frame tagged {@code tag} with {@code length} payload bytes of {@code tag}. */
    @Test
    void shouldSendTheFirstFrameAtOnceAndTheRestOfTheBatchInOneSlotInOrder() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 4096, 8); FabricLink b = new FabricLink(name, 4096, 8)) {
            a.cork();
            final int[] lengths = {0, 1, 2, 3, 5, 100, 1000};
            for (int k = 0; k < lengths.length; k++) {
                assertTrue(send(a, b, 10 + k, lengths[k]));
            }
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(1, b.receive(got, 8), "the first frame left at once, the rest wait for the batch's end");
            a.uncork();
            assertEquals(1, b.receive(got, 8), "one slot");
            assertFrames(got, 10, lengths);
            assertEquals(a.resolve(a.address()), got.peers.get(lengths.length - 1));
            assertEquals(1L, counters(a).get("link.tx.batches"));
            assertEquals((long) lengths.length - 1, counters(a).get("link.tx.batched_frames"));
        }
    }

    @Test
    void shouldStartANewSlotForAnotherPeerOrWhenTheSlotWouldOverflow() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8); FabricLink b = new FabricLink(name, 1024, 8);
             FabricLink c = new FabricLink(name, 1024, 8)) {
            a.cork();
            assertTrue(send(a, b, 1, 10));
            assertTrue(send(a, c, 2, 10));
            assertTrue(send(a, b, 3, 10));
            for (int k = 0; k < 4; k++) { // 4 frames of 80 + 200 bytes do not fit one 1024-byte slot
                assertTrue(send(a, c, 4 + k, 200));
            }
            a.uncork();
            final LinkFrames.Received atB = new LinkFrames.Received();
            assertEquals(2, b.receive(atB, 8), "b's frames were parted by c's");
            assertEquals(2, atB.frames.size());
            assertEquals(1, atB.frames.get(0)[0]);
            assertEquals(3, atB.frames.get(1)[0]);
            final LinkFrames.Received atC = new LinkFrames.Received();
            assertEquals(3, c.receive(atC, 8), "c's first frame alone, then 3 that fit, then the fourth");
            assertEquals(5, atC.frames.size());
            for (int k = 0; k < 5; k++) {
                assertEquals(2 + (k == 0 ? 0 : k + 1), atC.frames.get(k)[0], "c's frame " + k + " in order");
            }
        }
    }

    @Test
    void shouldSendALargeFrameAfterTheSmallOnesStagedBeforeIt() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 8192, 8); FabricLink b = new FabricLink(name, 8192, 8)) {
            a.cork();
            assertTrue(send(a, b, 1, 8));
            assertTrue(send(a, b, 2, 16));
            assertTrue(send(a, b, 3, FrameRing.LEND_MIN), "a large frame takes a slot of its own");
            assertTrue(send(a, b, 4, 8));
            a.uncork();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(4, b.receive(got, 8), "the first alone, the second staged, the large one, the last staged");
            assertFrames(got, 1, 8, 16, FrameRing.LEND_MIN, 8);
        }
    }

    @Test
    void shouldSendAtOnceOutsideABatch() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8); FabricLink b = new FabricLink(name, 1024, 8)) {
            assertTrue(send(a, b, 1, 8));
            assertTrue(b.mayHaveInput(), "a lone frame leaves at once");
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(1, b.receive(got, 8));
            assertFrames(got, 1, 8);
        }
    }

    @Test
    void shouldHoldThePostsAfterOneFlaggedMoreUntilABatchEndsWithoutIt() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8); FabricLink b = new FabricLink(name, 1024, 8)) {
            for (int k = 1; k <= 3; k++) { // a burst of posts flagged MORE, one frame each
                a.cork();
                assertTrue(send(a, b, k, 8));
                a.uncorkHolding();
                a.flush();
            }
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(1, b.receive(got, 8), "the burst's first frame went at once; a flush (the lock's release) "
                + "leaves the held ones staged");
            a.cork();
            assertTrue(send(a, b, 4, 8)); // the burst's last post
            a.uncork();
            assertEquals(1, b.receive(got, 8), "the rest in one slot");
            assertFrames(got, 1, 8, 8, 8, 8);
            a.cork();
            assertTrue(send(a, b, 5, 8));
            a.uncork();
            assertEquals(1, b.receive(got, 8), "after a batch without MORE, a lone frame goes at once again");
            assertEquals(1L, counters(a).get("link.tx.batches"));
        }
    }

    @Test
    void shouldKeepABatchStagedWhileThePeersRingIsFullAndSendItOnceThereIsRoom() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8); FabricLink b = new FabricLink(name, 1024, 8)) {
            for (int k = 0; k < 7; k++) {
                assertTrue(send(a, b, 1, 8), "slot " + k);
            }
            a.cork();
            assertTrue(send(a, b, 9, 8), "the last slot");
            assertTrue(send(a, b, 2, 8), "staging needs no room in the ring");
            assertTrue(send(a, b, 3, 8));
            a.uncork();
            assertFalse(send(a, b, 4, 8), "outside a batch: what is staged leaves first, and the ring is full");
            a.cork();
            assertTrue(send(a, b, 5, 8), "in a batch, staged behind them: the staging has room");
            a.uncork();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(8, b.receive(got, 8));
            a.flush();
            assertEquals(1, b.receive(got, 8), "the staged batch, once there was room");
            assertEquals(11, got.frames.size(), "the refused frame is not among them");
            assertEquals(9, got.frames.get(7)[0]);
            assertEquals(2, got.frames.get(8)[0]);
            assertEquals(3, got.frames.get(9)[0]);
            assertEquals(5, got.frames.get(10)[0]);
        }
    }

    @Test
    void shouldNotHoldUpOtherPeersBehindAPeerThatTakesNothing() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 4096, 8); FabricLink stuck = new FabricLink(name, 4096, 8);
             FabricLink c = new FabricLink(name, 4096, 8)) {
            for (int k = 0; k < 7; k++) {
                assertTrue(send(a, stuck, 1, 8), "slot " + k);
            }
            a.cork();
            assertTrue(send(a, stuck, 9, 8), "the last slot");
            assertTrue(send(a, stuck, 2, 8), "staged for the full ring");
            assertTrue(send(a, c, 3, 8), "another peer's frame goes alone");
            assertTrue(send(a, c, 4, 8));
            a.uncork();
            assertTrue(send(a, c, 5, FrameRing.LEND_MIN), "outside a batch too");
            final LinkFrames.Received atC = new LinkFrames.Received();
            assertEquals(3, c.receive(atC, 8));
            assertFrames(atC, 3, 8, 8, FrameRing.LEND_MIN);
            final LinkFrames.Received atStuck = new LinkFrames.Received();
            assertEquals(8, stuck.receive(atStuck, 8));
            a.flush();
            assertEquals(1, stuck.receive(atStuck, 8), "the staged frame once there was room");
            assertEquals(2, atStuck.frames.get(8)[0]);
        }
    }

    @Test
    void shouldCountStagedFramesForAPeerThatLeftAsSentToNobody() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8)) {
            final FabricLink b = new FabricLink(name, 1024, 8);
            a.cork();
            assertTrue(send(a, b, 1, 8), "at once");
            assertTrue(send(a, b, 2, 8), "staged");
            assertTrue(send(a, b, 3, 8), "staged");
            b.close();
            a.uncork();
            assertEquals(2L, counters(a).get("link.tx.peer_gone"));
        }
    }

    @Test
    void shouldDropAFrameWhoseMemoryClosedAndStageTheRest() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8); FabricLink b = new FabricLink(name, 1024, 8)) {
            final FrameGather gone = new FrameGather(1);
            final MemorySegment header;
            try (Arena arena = Arena.ofShared()) {
                final MemorySegment memory = arena.allocate(100);
                gone.add(memory, memory.asByteBuffer(), 0, 100);
                header = LinkFrames.header(9, gone);
            }
            a.cork();
            assertTrue(send(a, b, 1, 8));
            assertTrue(a.send(a.resolve(b.address()), header, HEADER, gone), "lost, as on a wire");
            assertTrue(send(a, b, 2, 8));
            a.uncork();
            assertEquals(1L, counters(a).get("link.tx.errors"));
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(2, b.receive(got, 8), "the first at once, the third staged");
            assertFrames(got, 1, 8, 8);
        }
    }

    @Test
    void shouldCheckEachSealedFrameOfABatchOnItsOwn() {
        final FrameRing ring = new FrameRing(8, 1024);
        final ByteBuffer view = ByteBuffer.allocateDirect(1024);
        final MemorySegment records = MemorySegment.ofBuffer(view);
        int end = 0;
        for (int k = 0; k < 3; k++) {
            final FrameGather payload = LinkFrames.payload(10 + k, k);
            final MemorySegment header = LinkFrames.header(k, payload);
            if (k > 0) {
                end = Staging.recordAlign(end);
                records.set(ValueLayout.JAVA_INT_UNALIGNED, end, HEADER + 10 + k);
                end += Staging.RECORD_PREFIX;
            }
            MemorySegment.copy(header, 0, records, end, HEADER);
            payload.copyTo(records, end + HEADER);
            if (k == 1) {
                records.set(ValueLayout.JAVA_BYTE, end + HEADER + 3, (byte) 0x7F); // corrupt the second frame
            }
            end += HEADER + 10 + k;
        }
        assertTrue(ring.offerBatch(3, true, records, HEADER + 10, end));
        final LinkFrames.Received got = new LinkFrames.Received();
        final long[] drops = new long[2];
        assertEquals(1, ring.drain(got, 8, new FrameCrc(), drops));
        assertEquals(1L, drops[FrameRing.BAD_CRC], "the corrupted frame alone");
        assertEquals(2, got.frames.size());
        assertEquals(0, got.frames.get(0)[0]);
        assertEquals(2, got.frames.get(1)[0]);
        assertEquals(HEADER + 12, got.frames.get(1).length);
        assertEquals(3L, got.peers.get(1));
    }

    @Test
    void shouldRefuseABatchLargerThanASlot() {
        final FrameRing ring = new FrameRing(8, 512);
        final MemorySegment records = MemorySegment.ofBuffer(ByteBuffer.allocateDirect(1024));
        assertThrows(IllegalArgumentException.class, () -> ring.offerBatch(1, false, records, 100, 513));
        assertThrows(IllegalArgumentException.class, () -> ring.offerBatch(1, false, records, 0, 100));
        assertThrows(IllegalArgumentException.class, () -> ring.offerBatch(1, false, records, 200, 100));
        assertTrue(ring.isEmpty(), "nothing claimed");
    }

    @Test
    void shouldCarryWhatTheStagingHeldWhenTheSenderCloses() {
        final String name = fabric();
        try (FabricLink b = new FabricLink(name, 1024, 8)) {
            final FabricLink a = new FabricLink(name, 1024, 8);
            a.cork();
            assertTrue(send(a, b, 1, 8), "at once");
            assertTrue(send(a, b, 2, 8), "staged");
            a.uncorkHolding();
            a.close();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(2, b.receive(got, 8));
            assertFrames(got, 1, 8, 8);
        }
    }

    /**
     * NicImpl closes its link holding the engine lock, and letting go of it flushes the link: what close could not
     * publish (the peer's ring was full) must be gone by then, not leave from a closed endpoint once there is room.
     */
    @Test
    void shouldDropWhatTheStagingHeldWhenTheSenderClosesOnAFullRing() {
        final String name = fabric();
        try (FabricLink b = new FabricLink(name, 1024, 2); FabricLink c = new FabricLink(name, 1024, 2)) {
            final FabricLink a = new FabricLink(name, 1024, 2);
            a.cork();
            assertTrue(send(a, b, 1, 8), "at once");
            assertTrue(send(a, b, 2, 8), "staged");
            assertTrue(send(a, b, 3, 8), "staged");
            assertTrue(send(c, b, 9, 8), "the ring's last slot");
            a.uncork();
            a.close();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(2, b.receive(got, 8));
            a.flush(); // as LinkLock.unlock does right after NicImpl's shutdown closed the link
            a.cork();
            a.uncork();
            assertEquals(0, b.receive(got, 8), "nothing leaves a closed link");
            assertEquals(2L, counters(a).get("link.tx.errors"), "the staged frames were lost, and counted");
        }
    }

    @Test
    void shouldPushWhatIsStagedInsideABatchAndStageWhatFollows() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 4096, 8); FabricLink b = new FabricLink(name, 4096, 8)) {
            LinkFrames.assertPushInsideABatch(a, b);
        }
    }
}
