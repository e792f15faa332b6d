package io.jdet.internal.link;

import io.jdet.FaultPlan;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fault injection on its own, over a link that records what it is asked to send: each fault at rate 1 does exactly
 * what it says to each frame, the bytes of a held or corrupted frame are the wrapper's own copy, and a frame the
 * carrying link refuses is neither duplicated nor lost from the hold.
 */
class FaultyLinkTest {
    /** A link that keeps a copy of each frame it sends and can refuse them. */
    static final class RecordingLink implements Link {
        final List<byte[]> sent = new ArrayList<>();
        final List<Long> peers = new ArrayList<>();
        /** Frames {@link #receive} hands over, each from peer {@link #FROM}. */
        final List<byte[]> inbound = new ArrayList<>();
        static final long FROM = 9;
        String address = "loop:rec/7";
        boolean checksummed = true;
        boolean refuse;
        boolean closed;
        int receives;

        @Override
        public String address() {
            return address;
        }

        @Override
        public boolean checksummed(final long peer) {
            return checksummed;
        }

        @Override
        public int mtu() {
            return 256;
        }

        @Override
        public long resolve(final String address) {
            return 7;
        }

        @Override
        public String describe(final long peer) {
            return "loop:rec/" + peer;
        }

        @Override
        public boolean send(final long peer, final MemorySegment header, final int headerLength,
                            final FrameGather payload) {
            if (refuse) {
                return false;
            }
            final byte[] copy = new byte[headerLength + payload.totalLength()];
            MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, copy, 0, headerLength);
            final MemorySegment rest = MemorySegment.ofArray(new byte[payload.totalLength()]);
            payload.copyTo(rest, 0);
            System.arraycopy(rest.toArray(ValueLayout.JAVA_BYTE), 0, copy, headerLength, payload.totalLength());
            sent.add(copy);
            peers.add(peer);
            return true;
        }

        @Override
        public int receive(final FrameHandler handler, final int max) {
            receives++;
            final int n = Math.min(max, inbound.size());
            for (int i = 0; i < n; i++) {
                final byte[] f = inbound.remove(0);
                handler.onFrame(MemorySegment.ofArray(f), f.length, FROM);
            }
            return n;
        }

        @Override
        public void await(final int waiter, final long timeoutNs) {
        }

        @Override
        public void wakeup(final int waiter) {
        }

        @Override
        public void addCounters(final Map<String, Long> counters) {
            counters.merge("inner.frames", (long) sent.size(), Long::sum);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private final RecordingLink inner = new RecordingLink();

    private static FaultPlan plan(final double loss, final double dup, final double reorder, final double corrupt) {
        return new FaultPlan(loss, dup, reorder, corrupt, 42);
    }

    private boolean send(final Link link, final int tag, final long peer) {
        final FrameGather payload = LinkFrames.payload(20, tag);
        return link.send(peer, LinkFrames.header(tag, payload), LinkFrames.HEADER, payload);
    }

    private int tag(final int i) {
        return inner.sent.get(i)[0];
    }

    private Map<String, Long> counters(final Link link) {
        final Map<String, Long> c = new HashMap<>();
        link.addCounters(c);
        return c;
    }

    @Test
    void lossAtRateOneSendsNothingAndSaysSent() {
        final FaultyLink link = new FaultyLink(inner, plan(1, 1, 1, 1));
        for (int i = 0; i < 5; i++) {
            assertTrue(send(link, i, 3), "a lost frame counts as sent");
        }
        assertEquals(0, inner.sent.size());
        assertEquals(5L, counters(link).get("fault.dropped"));
        assertEquals(0L, counters(link).get("fault.duplicated"));
        assertEquals(0L, counters(link).get("inner.frames"), "the inner link's counters are kept");
    }

    @Test
    void duplicationAtRateOneSendsEachFrameTwiceButNotARefusedOne() {
        final FaultyLink link = new FaultyLink(inner, plan(0, 1, 0, 0));
        assertTrue(send(link, 1, 3));
        assertTrue(send(link, 2, 4));
        assertEquals(4, inner.sent.size());
        assertArrayEquals(inner.sent.get(0), inner.sent.get(1));
        assertEquals(List.of(3L, 3L, 4L, 4L), inner.peers);
        assertEquals(2, tag(2));
        inner.refuse = true;
        assertFalse(send(link, 3, 3), "the carrying link's refusal goes back to the engine");
        assertEquals(2L, counters(link).get("fault.duplicated"));
    }

    @Test
    void reorderingAtRateOneHoldsAFrameUntilTheNextOneLeaves() {
        final FaultyLink link = new FaultyLink(inner, plan(0, 0, 1, 0));
        final FrameGather payload = LinkFrames.payload(20, 1);
        final MemorySegment header = LinkFrames.header(1, payload);
        assertTrue(link.send(5, header, LinkFrames.HEADER, payload));
        assertEquals(0, inner.sent.size(), "held back");
        header.set(ValueLayout.JAVA_BYTE, 0, (byte) 99); // the engine reuses its buffers at once
        payload.segment(0).fill((byte) 99);
        assertTrue(send(link, 2, 6));
        assertEquals(2, inner.sent.size());
        assertEquals(2, tag(0), "the second frame overtakes the first");
        assertEquals(1, tag(1), "the held frame is the wrapper's own copy");
        assertEquals(1, inner.sent.get(1)[LinkFrames.HEADER + 19]);
        assertEquals(LinkFrames.HEADER + 20, inner.sent.get(1).length);
        assertEquals(List.of(6L, 5L), inner.peers, "each to its own peer");
        assertTrue(send(link, 3, 5));
        assertEquals(2, inner.sent.size(), "only one frame is held at a time, and the hold is free again");
        link.receive(new LinkFrames.Received(), 1);
        assertEquals(3, inner.sent.size(), "receiving releases a held frame too");
        assertEquals(3, tag(2));
        assertEquals(1, inner.receives);
        assertEquals(2L, counters(link).get("fault.reordered"));
    }

    @Test
    void aHeldFrameTheCarryingLinkRefusesStaysHeldUntilItTakesIt() {
        final FaultyLink link = new FaultyLink(inner, plan(0, 0, 1, 0));
        assertTrue(send(link, 1, 5));
        inner.refuse = true;
        link.receive(new LinkFrames.Received(), 1);
        inner.refuse = false;
        assertEquals(0, inner.sent.size());
        link.receive(new LinkFrames.Received(), 1);
        assertEquals(1, inner.sent.size());
        link.receive(new LinkFrames.Received(), 1);
        assertEquals(1, inner.sent.size(), "sent once only");
    }

    @Test
    void corruptionAsksForACrcToEveryPeerAndOtherFaultsAskWhatTheInnerLinkAsks() {
        inner.checksummed = false; // as shared memory, or UDP to a loopback peer
        assertFalse(new FaultyLink(inner, plan(0.5, 0.5, 0.5, 0)).checksummed(3));
        assertTrue(new FaultyLink(inner, plan(0, 0, 0, 0.01)).checksummed(3),
            "a corrupted frame must fail its CRC at the receiver");
        inner.checksummed = true;
        assertTrue(new FaultyLink(inner, plan(0.5, 0, 0, 0)).checksummed(3));
    }

    @Test
    void aFrameWhoseCrcFieldIsZeroIsNeverCorrupted() {
        // over loopback a 0 means "no CRC", so the receiver would take a corrupted frame unchecked
        final FaultyLink link = new FaultyLink(inner, plan(0, 0, 0, 1));
        final FrameGather payload = LinkFrames.payload(20, 5);
        final MemorySegment header = LinkFrames.header(5, payload);
        header.set(ValueLayout.JAVA_INT_UNALIGNED, FrameCrc.CRC_OFFSET, 0);
        final byte[] original = new byte[LinkFrames.HEADER + 20];
        MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, original, 0, LinkFrames.HEADER);
        Arrays.fill(original, LinkFrames.HEADER, original.length, (byte) 5);
        assertTrue(link.send(1, header, LinkFrames.HEADER, payload));
        assertArrayEquals(original, inner.sent.get(0));
        assertEquals(0L, counters(link).get("fault.corrupted"));
        assertTrue(send(link, 6, 1));
        assertEquals(1L, counters(link).get("fault.corrupted"), "a frame with a CRC still is");
    }

    @Test
    void corruptionAtRateOneFlipsExactlyOneByteOfACopy() {
        final FaultyLink link = new FaultyLink(inner, plan(0, 0, 0, 1));
        for (int i = 0; i < 40; i++) {
            final FrameGather payload = LinkFrames.payload(20, i);
            final MemorySegment header = LinkFrames.header(i, payload);
            final byte[] original = new byte[LinkFrames.HEADER + 20];
            MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, original, 0, LinkFrames.HEADER);
            Arrays.fill(original, LinkFrames.HEADER, original.length, (byte) i);
            final byte[] before = original.clone();
            assertTrue(link.send(1, header, LinkFrames.HEADER, payload));
            final byte[] got = inner.sent.get(i);
            assertEquals(original.length, got.length);
            int differ = 0;
            for (int k = 0; k < got.length; k++) {
                differ += got[k] != original[k] ? 1 : 0;
            }
            assertEquals(1, differ, "frame " + i);
            final byte[] after = new byte[original.length];
            MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, after, 0, LinkFrames.HEADER);
            MemorySegment.copy(payload.segment(0), ValueLayout.JAVA_BYTE, 0, after, LinkFrames.HEADER, 20);
            assertArrayEquals(before, after, "the engine's own bytes are never touched");
        }
        assertEquals(40L, counters(link).get("fault.corrupted"));
    }

    @Test
    void closingClosesTheCarryingLink() {
        final FaultyLink link = new FaultyLink(inner, plan(0.5, 0, 0, 0));
        link.close();
        assertTrue(inner.closed);
    }
}
