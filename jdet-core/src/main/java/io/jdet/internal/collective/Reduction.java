package io.jdet.internal.collective;

import io.jdet.ReduceOp;
import io.jdet.ReduceType;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Element-wise reductions of 8-byte elements in native order: {@code dst[i] = op(dst[i], src[i])}. */
final class Reduction {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    private Reduction() {
    }

    static void apply(final ReduceOp op, final ReduceType type, final MemorySegment src, final long srcOff,
                      final MemorySegment dst, final long dstOff, final long len) {
        if (type == ReduceType.FLOAT64) {
            for (long i = 0; i < len; i += 8) {
                final double a = dst.get(DOUBLE, dstOff + i);
                final double b = src.get(DOUBLE, srcOff + i);
                final double r = switch (op) {
                    case SUM -> a + b;
                    case MIN -> Math.min(a, b);
                    case MAX -> Math.max(a, b);
                    default -> throw new IllegalStateException("bitwise " + op + " on doubles");
                };
                // Which operand's NaN survives depends on the order, and partners combine in opposite orders:
                // one NaN for all, so that every member of an all-reduce holds the same bits.
                dst.set(DOUBLE, dstOff + i, r != r ? Double.NaN : r);
            }
            return;
        }
        for (long i = 0; i < len; i += 8) {
            final long a = dst.get(LONG, dstOff + i);
            final long b = src.get(LONG, srcOff + i);
            dst.set(LONG, dstOff + i, switch (op) {
                case SUM -> a + b;
                case MIN -> Math.min(a, b);
                case MAX -> Math.max(a, b);
                case BAND -> a & b;
                case BOR -> a | b;
                case BXOR -> a ^ b;
            });
        }
    }
}
