package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The in-process receive ring: bounded size, and a slot whose copy failed is published as aborted. */
class FrameRingTest {

    @Test
    void shouldRefuseARingLargerThanOneBufferCanHold() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new FrameRing(1 << 16, 65_507));
        assertTrue(e.getMessage().contains("bytes"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new FrameRing(12, 1024), "not a power of two");
        assertThrows(IllegalArgumentException.class, () -> new FrameRing(0, 1024));
    }

    /**
     * Every ring the configuration allows fits one buffer, the largest (32768 frames of 65507 bytes) included: its
     * slots give up their cache-line rounding for it. Checked on the stride alone, without allocating 2 GiB.
     */
    @Test
    void shouldFitTheLargestRingTheConfigurationAllows() {
        final int frames = io.jdet.Configuration.LOOP_RING_FRAMES_MAX;
        final long stride = FrameRing.stride(frames, 65_507);
        assertTrue(stride >= 65_507 + 16 && stride % 8 == 0, "stride " + stride);
        assertTrue((long) frames * stride + 64 <= Integer.MAX_VALUE, "stride " + stride);
        assertEquals(0, FrameRing.stride(1024, 65_000) % 64, "a smaller ring keeps its slots on cache lines");
    }

    @Test
    void shouldPublishAnAbortedSlotWhenTheCopyFailsAndKeepServingTheRing() {
        final FrameRing ring = new FrameRing(8, 512);
        final FrameGather gone = new FrameGather(1);
        final MemorySegment header;
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(64);
            gone.add(memory, memory.asByteBuffer(), 0, 64);
            header = LinkFrames.header(1, gone);
        }
        for (int i = 0; i < 8; i++) { // fill the ring with aborted frames: each slot is claimed once and freed
            assertThrows(IllegalStateException.class, () -> ring.offer(5, header, HEADER, gone));
        }
        final FrameGather payload = LinkFrames.payload(16, 4);
        final long[] aborted = new long[2];
        final LinkFrames.Received received = new LinkFrames.Received();
        assertFalse(ring.offer(6, LinkFrames.header(2, payload), HEADER, payload), "eight slots, all taken");
        assertEquals(8, ring.drain(received, 16, new FrameCrc(), aborted));
        assertEquals(0, received.frames.size());
        assertEquals(8, aborted[1]);
        assertTrue(ring.offer(6, LinkFrames.header(2, payload), HEADER, payload));
        assertEquals(1, ring.drain(received, 16, new FrameCrc(), aborted));
        assertEquals(1, received.frames.size());
        assertEquals(6L, received.peers.get(0));
        assertEquals(0, aborted[0], "no bad CRC");
    }
}
