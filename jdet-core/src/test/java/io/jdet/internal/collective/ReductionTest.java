package io.jdet.internal.collective;

import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Each reduction of 8-byte elements, at offsets, over exactly the length asked. */
class ReductionTest {
    private static final long[] DST = {5, -3, 0x0F0F, Long.MIN_VALUE, 12};
    private static final long[] SRC = {-2, 7, 0x00FF, Long.MAX_VALUE, 99};

    private static long[] apply(final ReduceOp op) {
        // dst elements 1..3 at byte offset 8, src elements 0..2 at byte offset 24 of a larger segment
        final MemorySegment dst = MemorySegment.ofArray(DST.clone());
        final long[] srcArr = new long[8];
        System.arraycopy(SRC, 0, srcArr, 3, 3);
        final MemorySegment src = MemorySegment.ofArray(srcArr);
        Reduction.apply(op, ReduceType.INT64, src, 24, dst, 8, 24);
        return dst.toArray(ValueLayout.JAVA_LONG);
    }

    @Test
    void integerReductionsCombineEachElementAndTouchNothingElse() {
        assertArrayEquals(new long[] {5, -5, 0x0F0F + 7, Long.MIN_VALUE + 0xFF, 12}, apply(ReduceOp.SUM));
        assertArrayEquals(new long[] {5, -3, 7, Long.MIN_VALUE, 12}, apply(ReduceOp.MIN));
        assertArrayEquals(new long[] {5, -2, 0x0F0F, 0xFF, 12}, apply(ReduceOp.MAX));
        assertArrayEquals(new long[] {5, -3 & -2, 0x0F0F & 7, 0, 12}, apply(ReduceOp.BAND));
        assertArrayEquals(new long[] {5, -3 | -2, 0x0F0F | 7, Long.MIN_VALUE | 0xFF, 12}, apply(ReduceOp.BOR));
        assertArrayEquals(new long[] {5, -3 ^ -2, 0x0F0F ^ 7, Long.MIN_VALUE ^ 0xFF, 12}, apply(ReduceOp.BXOR));
    }

    private static double[] applyReal(final ReduceOp op) {
        final MemorySegment dst = MemorySegment.ofArray(new double[] {1.5, -4.0, 2.0, 100.0});
        final MemorySegment src = MemorySegment.ofArray(new double[] {9.0, 0.25, -1.0, 3.0});
        Reduction.apply(op, ReduceType.FLOAT64, src, 8, dst, 0, 24);
        return dst.toArray(ValueLayout.JAVA_DOUBLE);
    }

    @Test
    void realReductionsCombineEachElementAndTouchNothingElse() {
        assertArrayEquals(new double[] {1.75, -5.0, 5.0, 100.0}, applyReal(ReduceOp.SUM));
        assertArrayEquals(new double[] {0.25, -4.0, 2.0, 100.0}, applyReal(ReduceOp.MIN));
        assertArrayEquals(new double[] {1.5, -1.0, 3.0, 100.0}, applyReal(ReduceOp.MAX));
    }

    /** Partners combine in opposite orders (mine, theirs): a NaN result must not depend on which comes first. */
    @Test
    void aNaNResultIsTheCanonicalNaNWhateverTheOrder() {
        final double one = Double.longBitsToDouble(0x7ff8_0000_0000_0001L);
        final double two = Double.longBitsToDouble(0x7ff8_0000_0000_0002L);
        for (final ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MIN, ReduceOp.MAX}) {
            for (final double[] pair : new double[][] {{one, two}, {two, one}, {one, 5.0}, {5.0, two}}) {
                final MemorySegment dst = MemorySegment.ofArray(new double[] {pair[0]});
                final MemorySegment src = MemorySegment.ofArray(new double[] {pair[1]});
                Reduction.apply(op, ReduceType.FLOAT64, src, 0, dst, 0, 8);
                assertEquals(Double.doubleToRawLongBits(Double.NaN),
                    Double.doubleToRawLongBits(dst.get(ValueLayout.JAVA_DOUBLE, 0)), op.toString());
            }
        }
    }

    @Test
    void aBitwiseReductionOfRealsIsRefused() {
        for (final ReduceOp op : new ReduceOp[] {ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR}) {
            final MemorySegment m = MemorySegment.ofArray(new double[] {1.0});
            assertThrows(IllegalStateException.class, () -> Reduction.apply(op, ReduceType.FLOAT64, m, 0, m, 0, 8));
        }
    }

    @Test
    void nothingToReduceChangesNothing() {
        final MemorySegment dst = MemorySegment.ofArray(new long[] {42});
        Reduction.apply(ReduceOp.SUM, ReduceType.INT64, MemorySegment.ofArray(new long[] {1}), 0, dst, 0, 0);
        Reduction.apply(ReduceOp.SUM, ReduceType.FLOAT64, MemorySegment.ofArray(new long[] {1}), 0, dst, 0, 0);
        assertEquals(42, dst.get(ValueLayout.JAVA_LONG, 0));
    }
}
