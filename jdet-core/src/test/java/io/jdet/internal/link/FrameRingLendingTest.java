package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Lent payloads on the in-process ring: a large piece of lent registered memory travels as a reference and is read
 * once, by the consumer; settling gives the sender its memory back; a closed arena loses the frame, never the ring.
 */
class FrameRingLendingTest {
    private static final int SIZE = FrameRing.LEND_MIN + 100;

    /** Keeps what a handler that takes payloads apart was given, and a copy of the bytes it would place. */
    private static class Apart implements FrameHandler {
        final List<MemorySegment> payloads = new ArrayList<>();
        final List<byte[]> bytes = new ArrayList<>();
        int whole;

        @Override
        public boolean takesPayloadApart() {
            return true;
        }

        @Override
        public void onFrame(final MemorySegment frame, final int length, final long peer) {
            whole++;
            payloads.add(frame);
            bytes.add(frame.asSlice(HEADER, length - HEADER).toArray(ValueLayout.JAVA_BYTE));
        }

        @Override
        public void onFrame(final MemorySegment frame, final int length, final long peer, final MemorySegment payload,
                            final long payloadOffset) {
            payloads.add(payload);
            bytes.add(payload.asSlice(payloadOffset, length - HEADER).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    private static FrameGather lent(final MemorySegment memory, final long offset, final int length) {
        final FrameGather gather = new FrameGather(2);
        gather.lend(memory, memory.asByteBuffer(), offset, length);
        return gather;
    }

    @Test
    void shouldHandTheSendersOwnMemoryToAHandlerThatTakesPayloadsApart() {
        final FrameRing ring = new FrameRing(8, HEADER + SIZE);
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(SIZE + 8);
            memory.fill((byte) 3);
            final FrameGather gather = lent(memory, 8, SIZE);
            assertTrue(ring.offer(4, false, LinkFrames.header(1, gather), HEADER, gather));
            final Apart handler = new Apart();
            assertEquals(1, ring.drain(handler, 8, new FrameCrc(), new long[2]));
            assertEquals(0, handler.whole, "handed apart");
            assertSame(memory, handler.payloads.get(0), "the sender's memory itself: no copy in the ring");
            assertEquals(SIZE, handler.bytes.get(0).length);
            assertEquals(3, handler.bytes.get(0)[SIZE - 1]);
        }
    }

    @Test
    void shouldCopyALentPayloadIntoTheSlotForAHandlerThatTakesWholeFrames() {
        final FrameRing ring = new FrameRing(8, HEADER + SIZE);
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(SIZE);
            memory.fill((byte) 9);
            final FrameGather gather = lent(memory, 0, SIZE);
            assertTrue(ring.offer(4, false, LinkFrames.header(1, gather), HEADER, gather));
            final LinkFrames.Received received = new LinkFrames.Received();
            assertEquals(1, ring.drain(received, 8, new FrameCrc(), new long[2]));
            assertEquals(HEADER + SIZE, received.frames.get(0).length);
            assertEquals(1, received.frames.get(0)[0], "the header");
            assertEquals(9, received.frames.get(0)[HEADER + SIZE - 1], "the payload, copied in at consume time");
        }
    }

    @Test
    void shouldGiveTheSenderItsMemoryBackWhenItSettles() {
        final FrameRing ring = new FrameRing(8, HEADER + SIZE);
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(SIZE);
            memory.fill((byte) 1);
            final FrameGather gather = lent(memory, 0, SIZE);
            assertTrue(ring.offer(4, false, LinkFrames.header(1, gather), HEADER, gather));
            assertTrue(ring.offer(5, false, LinkFrames.header(2, gather), HEADER, gather));
            ring.settle(4, true); // peer 4 wants its memory back; peer 5's frame stays lent
            memory.fill((byte) 2); // the application reuses it
            final Apart handler = new Apart();
            assertEquals(2, ring.drain(handler, 8, new FrameCrc(), new long[2]));
            assertEquals(1, handler.whole, "the settled frame is whole now");
            assertEquals(1, handler.bytes.get(0)[0], "bytes as they were when sent");
            assertEquals(1, handler.bytes.get(0)[SIZE - 1]);
            assertSame(memory, handler.payloads.get(1), "the other peer's frame is still lent");
            assertEquals(2, handler.bytes.get(1)[0]);
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(30)
    void aSettleFromInsideAHandlerWaitsForAnotherConsumerOnlySoLong() throws Exception {
        // Another thread's consumer holds the lent frame for good (as two consumers settling each other's frames
        // from inside their handlers would): the settle of a sender inside its own handler gives up after a bound
        // instead of deadlocking, and an unbounded settle would still be waiting.
        final FrameRing ring = new FrameRing(8, HEADER + SIZE);
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(SIZE);
            final FrameGather gather = lent(memory, 0, SIZE);
            assertTrue(ring.offer(4, false, LinkFrames.header(1, gather), HEADER, gather));
            final java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
            final java.util.concurrent.CountDownLatch leave = new java.util.concurrent.CountDownLatch(1);
            final Apart holding = new Apart() {
                @Override
                public void onFrame(final MemorySegment frame, final int length, final long peer,
                                    final MemorySegment payload, final long payloadOffset) {
                    inside.countDown();
                    try {
                        leave.await();
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            final Thread consumer = Thread.ofPlatform().start(
                () -> ring.drain(holding, 8, new FrameCrc(), new long[2]));
            assertTrue(inside.await(10, java.util.concurrent.TimeUnit.SECONDS));
            ring.settle(4, false); // returns: bounded
            final Thread unbounded = Thread.ofPlatform().start(() -> ring.settle(4, true));
            unbounded.join(200);
            assertTrue(unbounded.isAlive(), "an unbounded settle waits for the consumer");
            leave.countDown();
            unbounded.join(10_000);
            consumer.join(10_000);
            assertFalse(unbounded.isAlive() || consumer.isAlive());
        }
    }

    @Test
    void shouldLoseAFrameWhoseLentMemoryWasClosedAndKeepServingTheRing() {
        final FrameRing ring = new FrameRing(8, HEADER + SIZE);
        final long[] drops = new long[2];
        final Apart handler = new Apart();
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(SIZE);
            final FrameGather gather = lent(memory, 0, SIZE);
            assertTrue(ring.offer(4, false, LinkFrames.header(1, gather), HEADER, gather));
            assertTrue(ring.offer(4, false, LinkFrames.header(2, gather), HEADER, gather));
        }
        ring.settle(4, true); // copying from the closed arena fails: both frames are aborted in their slots
        final FrameGather small = LinkFrames.payload(16, 5);
        assertTrue(ring.offer(6, LinkFrames.header(3, small), HEADER, small));
        assertEquals(3, ring.drain(handler, 8, new FrameCrc(), drops));
        assertEquals(2, drops[FrameRing.ABORTED], "both frames of the closed arena are lost, as on a wire");
        assertEquals(1, handler.bytes.size(), "the small frame still arrives");
        assertEquals(5, handler.bytes.get(0)[15]);
    }

    @Test
    void shouldCopySmallPiecesCopiedPiecesAndSealedFramesAsBefore() {
        final FrameRing ring = new FrameRing(8, HEADER + SIZE);
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(SIZE);
            final FrameGather small = lent(memory, 0, FrameRing.LEND_MIN - 1);
            final FrameGather copied = new FrameGather(1);
            copied.add(memory, memory.asByteBuffer(), 0, SIZE);
            final FrameGather sealed = lent(memory, 0, SIZE);
            final FrameGather twoPieces = lent(memory, 0, SIZE / 2);
            twoPieces.lend(memory, memory.asByteBuffer(), SIZE / 2, SIZE - SIZE / 2);
            assertTrue(ring.offer(4, false, LinkFrames.header(1, small), HEADER, small));
            assertTrue(ring.offer(4, false, LinkFrames.header(2, copied), HEADER, copied));
            assertTrue(ring.offer(4, true, LinkFrames.header(3, sealed), HEADER, sealed));
            assertTrue(ring.offer(4, false, LinkFrames.header(4, twoPieces), HEADER, twoPieces));
            final Apart handler = new Apart();
            final long[] drops = new long[2];
            assertEquals(4, ring.drain(handler, 8, new FrameCrc(), drops));
            assertEquals(4, handler.whole, "none lent");
            assertEquals(0, drops[FrameRing.BAD_CRC], "the sealed frame's CRC checks out in the slot");
        }
    }
}
