package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The in-process receive ring at its limits: slot size, CRC, batch size, laps, and the consumer's wait. */
class FrameRingEdgesTest {
    private static final FrameGather NONE = new FrameGather(0);

    @Test
    void theSmallestRingHasTwoSlotsOfAtLeastOneByte() {
        final FrameRing two = new FrameRing(2, HEADER);
        assertTrue(two.offer(1, LinkFrames.header(1, NONE), HEADER, NONE));
        assertThrows(IllegalArgumentException.class, () -> new FrameRing(1, 1024));
        assertThrows(IllegalArgumentException.class, () -> new FrameRing(8, 0));
        assertThrows(IllegalArgumentException.class, () -> new FrameRing(8, -1));
    }

    @Test
    void aFrameFillsAtMostOneSlot() {
        final FrameRing ring = new FrameRing(4, HEADER + 16);
        final FrameGather exact = LinkFrames.payload(16, 3);
        assertTrue(ring.offer(1, LinkFrames.header(1, exact), HEADER, exact), "exactly a slot");
        final FrameGather over = LinkFrames.payload(17, 3);
        assertThrows(IllegalArgumentException.class, () -> ring.offer(1, LinkFrames.header(1, over), HEADER, over));
        final LinkFrames.Received got = new LinkFrames.Received();
        assertEquals(1, ring.drain(got, 8, new FrameCrc(), new long[2]), "the refused frame claimed no slot");
        assertEquals(HEADER + 16, got.frames.get(0).length);
        assertEquals(3, got.frames.get(0)[HEADER + 15]);
    }

    @Test
    void aBadCrcIsDroppedOnlyWhereTheCrcIsChecked() {
        final FrameRing ring = new FrameRing(4, 256);
        final FrameGather payload = LinkFrames.payload(20, 1);
        final MemorySegment header = LinkFrames.header(9, payload);
        header.set(ValueLayout.JAVA_BYTE, 1, (byte) 0x55); // after the CRC was computed
        assertTrue(ring.offer(1, true, header, HEADER, payload));
        assertTrue(ring.offer(2, false, header, HEADER, payload));
        final long[] drops = new long[2];
        final LinkFrames.Received got = new LinkFrames.Received();
        assertEquals(2, ring.drain(got, 8, new FrameCrc(), drops));
        assertEquals(1, drops[FrameRing.BAD_CRC]);
        assertEquals(0, drops[FrameRing.ABORTED]);
        assertEquals(1, got.frames.size(), "the frame whose CRC the link does not check is delivered");
        assertEquals(2L, got.peers.get(0));
        final MemorySegment good = LinkFrames.header(10, payload);
        assertTrue(ring.offer(3, good, HEADER, payload), "the CRC is checked by default");
        assertEquals(1, ring.drain(got, 8, new FrameCrc(), drops));
        assertEquals(2, got.frames.size());
        assertEquals(1, drops[FrameRing.BAD_CRC]);
    }

    @Test
    void aHandlerThatThrowsStillFreesItsSlot() {
        final FrameRing ring = new FrameRing(2, 256);
        assertTrue(ring.offer(1, LinkFrames.header(1, NONE), HEADER, NONE));
        assertTrue(ring.offer(1, LinkFrames.header(2, NONE), HEADER, NONE));
        assertFalse(ring.offer(1, LinkFrames.header(3, NONE), HEADER, NONE), "both slots taken");
        final FrameHandler failing = (frame, length, peer) -> {
            throw new IllegalStateException("the handler failed");
        };
        assertThrows(IllegalStateException.class, () -> ring.drain(failing, 8, new FrameCrc(), new long[2]));
        assertTrue(ring.offer(1, LinkFrames.header(4, NONE), HEADER, NONE), "the failed frame's slot is free again");
        final LinkFrames.Received got = new LinkFrames.Received();
        assertEquals(2, ring.drain(got, 8, new FrameCrc(), new long[2]), "the frame behind it, then the new one");
        assertEquals(2, got.frames.size());
        assertTrue(ring.isEmpty());
    }

    @Test
    void drainsInOrderAtMostTheFramesAskedForOverManyLaps() {
        final FrameRing ring = new FrameRing(4, 256);
        final LinkFrames.Received got = new LinkFrames.Received();
        int next = 0;
        for (int lap = 0; lap < 10; lap++) {
            for (int k = 0; k < 4; k++) {
                assertTrue(ring.offer(100 + k, LinkFrames.header(lap * 4 + k, NONE), HEADER, NONE));
            }
            assertFalse(ring.offer(7, LinkFrames.header(0, NONE), HEADER, NONE), "four slots, all full");
            assertFalse(ring.isEmpty());
            assertEquals(3, ring.drain(got, 3, new FrameCrc(), new long[2]));
            assertEquals(1, ring.drain(got, 3, new FrameCrc(), new long[2]));
            assertTrue(ring.isEmpty());
            assertEquals(0, ring.drain(got, 3, new FrameCrc(), new long[2]));
            for (int k = 0; k < 4; k++, next++) {
                assertEquals((byte) next, got.frames.get(next)[0], "frame " + next);
                assertEquals(100L + k, got.peers.get(next));
            }
        }
    }

    @Test
    void aWaitingConsumerWakesForAFrameOrItsTimeout() throws Exception {
        final FrameRing ring = new FrameRing(4, 256);
        final Thread timed = Thread.ofPlatform().start(() ->
            ring.await(Link.PROGRESS, TimeUnit.MILLISECONDS.toNanos(10)));
        timed.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(timed.isAlive(), "a 10 ms wait did not end");
        final Thread waiter = Thread.ofPlatform().start(() -> ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(600)));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (waiter.getState() != Thread.State.TIMED_WAITING) {
            assertTrue(System.nanoTime() - deadline < 0, "the consumer never parked");
            Thread.onSpinWait();
        }
        assertTrue(ring.offer(1, LinkFrames.header(1, NONE), HEADER, NONE));
        waiter.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(waiter.isAlive(), "a frame did not wake the consumer");
        final Thread ready = Thread.ofPlatform().start(() -> ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(600)));
        ready.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(ready.isAlive(), "a frame waits: no park");
        final Thread closing = Thread.ofPlatform().start(() -> {
            ring.drain(new LinkFrames.Received(), 8, new FrameCrc(), new long[2]);
            ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(600));
        });
        while (closing.isAlive() && closing.getState() != Thread.State.TIMED_WAITING) {
            assertTrue(System.nanoTime() - deadline < 0, "the consumer never parked again");
            Thread.onSpinWait();
        }
        ring.wakeup(Link.PROGRESS);
        closing.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(closing.isAlive(), "wakeup did not end the wait");
    }
}
