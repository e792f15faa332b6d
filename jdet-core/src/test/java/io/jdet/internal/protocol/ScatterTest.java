package io.jdet.internal.protocol;

import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A work request's segments: a message offset maps to the right piece of the right region for sending (gather)
 * and for placing (place), across piece boundaries and empty pieces; revocation is seen on any piece.
 */
class ScatterTest {
    private final Arena arena = Arena.ofConfined();

    /** A region over its own memory; addTo records the piece in the gather list. */
    private static final class FakeRegion implements Region {
        final MemorySegment memory;
        int key;
        boolean usable = true;

        FakeRegion(final MemorySegment memory, final int key) {
            this.memory = memory;
            this.key = key;
        }

        @Override
        public boolean usable() {
            return usable;
        }

        @Override
        public int currentKey() {
            return key;
        }

        @Override
        public void addTo(final FrameGather gather, final long offset, final int length) {
            gather.add(memory, null, offset, length);
        }

        @Override
        public MemorySegment segment() {
            return memory;
        }
    }

    @AfterEach
    void close() {
        arena.close();
    }

    private final FakeRegion a = region(64, 1);
    private final FakeRegion b = region(64, 2);
    private final FakeRegion c = region(64, 3);

    private FakeRegion region(final int size, final int key) {
        return new FakeRegion(arena.allocate(size), key);
    }

    /** Pieces: a[4, 14), b[0, 0) (empty), b[8, 28), c[1, 6): 10 + 0 + 20 + 5 = 35 bytes. */
    private Scatter scatter() {
        final Scatter s = new Scatter(4);
        load(s, 0, a, 4, 10);
        load(s, 1, b, 0, 0);
        load(s, 2, b, 8, 20);
        load(s, 3, c, 1, 5);
        s.finish(4, 35);
        return s;
    }

    private static void load(final Scatter s, final int i, final FakeRegion r, final long offset, final int length) {
        s.regions[i] = r;
        s.offsets[i] = offset;
        s.lengths[i] = length;
        s.keys[i] = r.key;
    }

    private static String pieces(final FrameGather g) {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < g.count(); i++) {
            sb.append(g.segment(i).byteSize() == 64 ? "" : "?").append(g.offset(i)).append('+').append(g.length(i))
                .append(' ');
        }
        return sb.toString().trim();
    }

    private String gather(final Scatter s, final long from, final int length) {
        final FrameGather g = new FrameGather(8);
        s.gather(g, from, length);
        assertEquals(length, g.totalLength(), "bytes gathered from " + from);
        return pieces(g);
    }

    @Test
    void gathersThePiecesCoveringARangeOfTheMessage() {
        final Scatter s = scatter();
        assertEquals("4+10 8+20 1+5", gather(s, 0, 35));
        assertEquals("4+10", gather(s, 0, 10), "exactly the first piece");
        assertEquals("8+20", gather(s, 10, 20), "starts exactly where a piece ends, skips the empty one");
        assertEquals("13+1 8+3", gather(s, 9, 4), "across a boundary");
        assertEquals("27+1 1+2", gather(s, 29, 3));
        assertEquals("5+1", gather(s, 34, 1), "the last byte");
        assertEquals("", gather(s, 35, 0));
        assertEquals("", gather(s, 3, 0), "nothing asked, nothing gathered");
    }

    @Test
    void placesBytesWhereTheMessageOffsetLies() {
        final Scatter s = scatter();
        final MemorySegment src = arena.allocate(100);
        for (int i = 0; i < 100; i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
        }
        s.place(src, 50, 9, 4); // message bytes 9..12: a[13], b[8], b[9], b[10]
        assertEquals(51, a.memory.get(ValueLayout.JAVA_BYTE, 13));
        assertEquals(0, a.memory.get(ValueLayout.JAVA_BYTE, 12), "before the range");
        assertEquals(0, a.memory.get(ValueLayout.JAVA_BYTE, 14), "past the piece");
        assertEquals(52, b.memory.get(ValueLayout.JAVA_BYTE, 8));
        assertEquals(53, b.memory.get(ValueLayout.JAVA_BYTE, 9));
        assertEquals(54, b.memory.get(ValueLayout.JAVA_BYTE, 10));
        assertEquals(0, b.memory.get(ValueLayout.JAVA_BYTE, 11), "past the range");
        assertEquals(0, b.memory.get(ValueLayout.JAVA_BYTE, 7));

        s.place(src, 0, 30, 5); // message bytes 30..34: c[1..5]
        for (int i = 0; i < 5; i++) {
            assertEquals(i + 1, c.memory.get(ValueLayout.JAVA_BYTE, 1 + i), "c[" + (1 + i) + "]");
        }
        assertEquals(0, c.memory.get(ValueLayout.JAVA_BYTE, 0));
        assertEquals(0, c.memory.get(ValueLayout.JAVA_BYTE, 6));

        s.place(src, 0, 10, 1); // exactly at the start of b's second piece
        assertEquals(1, b.memory.get(ValueLayout.JAVA_BYTE, 8));
        assertEquals(0, a.memory.get(ValueLayout.JAVA_BYTE, 4), "not at the first piece's start");
    }

    @Test
    void placingTheWholeMessageFillsEveryPieceAndNothingElse() {
        final Scatter s = scatter();
        final MemorySegment src = arena.allocate(35);
        src.fill((byte) 9);
        s.place(src, 0, 0, 35);
        assertEquals(10, count(a.memory, (byte) 9));
        assertEquals(20, count(b.memory, (byte) 9));
        assertEquals(5, count(c.memory, (byte) 9));
    }

    private static int count(final MemorySegment m, final byte value) {
        int n = 0;
        for (long i = 0; i < m.byteSize(); i++) {
            n += m.get(ValueLayout.JAVA_BYTE, i) == value ? 1 : 0;
        }
        return n;
    }

    @Test
    void copiesWithTheLastByteLastAndNothingForAnEmptyCopy() {
        final MemorySegment src = arena.allocate(8);
        src.fill((byte) 5);
        final MemorySegment dst = arena.allocate(8);
        Scatter.copyLastByteLast(src, 0, dst, 2, 0);
        Scatter.copyLastByteLast(src, 0, dst, 2, -3);
        assertEquals(0, count(dst, (byte) 5));
        Scatter.copyLastByteLast(src, 0, dst, 2, 1);
        assertEquals(1, count(dst, (byte) 5));
        assertEquals(5, dst.get(ValueLayout.JAVA_BYTE, 2));
        Scatter.copyLastByteLast(src, 0, dst, 4, 3);
        assertEquals(4, count(dst, (byte) 5));
        assertEquals(5, dst.get(ValueLayout.JAVA_BYTE, 6));
        assertEquals(0, dst.get(ValueLayout.JAVA_BYTE, 7));
    }

    @Test
    void holdsARangeExactlyWhereLendPlaceLendsIt() {
        final Scatter s = scatter();
        assertTrue(s.holds(0, 10));
        assertFalse(s.holds(0, 11), "runs past a's piece");
        assertTrue(s.holds(10, 20), "b's piece, after the empty one");
        assertFalse(s.holds(29, 2), "across b's end");
        assertTrue(s.holds(30, 5));
        assertFalse(s.holds(35, 1), "past the message");
        for (int at = 0; at <= 36; at++) {
            for (int length = 1; length <= 36; length++) {
                final FrameGather g = new FrameGather(1);
                assertEquals(s.lendPlace(g, at, length), s.holds(at, length), at + "+" + length);
            }
        }
    }

    @Test
    void isValidOnlyWhileEveryRegionIsUsableWithItsKeyOfPostTime() {
        final Scatter s = scatter();
        assertTrue(s.stillValid());
        c.usable = false;
        assertFalse(s.stillValid(), "the last piece's region deregistered");
        c.usable = true;
        b.key = 22;
        assertFalse(s.stillValid(), "a region re-keyed by modify");
        b.key = 2;
        assertTrue(s.stillValid());
        s.finish(1, 10);
        c.usable = false;
        b.key = 99;
        assertTrue(s.stillValid(), "only the loaded pieces count");
    }

    @Test
    void finishForgetsTheRegionsOfALongerEarlierLoad() {
        final Scatter s = scatter();
        assertEquals(4, s.count);
        assertEquals(35, s.total);
        s.finish(2, 10);
        assertEquals(2, s.count);
        assertEquals(10, s.total);
        assertSame(a, s.regions[0]);
        assertSame(b, s.regions[1]);
        assertNull(s.regions[2], "no reference kept to a region of an earlier post");
        assertNull(s.regions[3]);
        s.finish(0, 0);
        assertNull(s.regions[0]);
        assertTrue(s.stillValid(), "no segments: nothing to revoke");
    }
}
