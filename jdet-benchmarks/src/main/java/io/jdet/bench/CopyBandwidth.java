package io.jdet.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * The machine's memory-copy floor for one thread, the bound of any single-copy transfer (the in-process fabric's
 * {@code bw-write}): copies chunks of 16 KiB, 65 000 B and 1 MiB through a 64 MiB working set (streaming, as a
 * transfer's buffers are) and over one cache-resident chunk, with {@link MemorySegment#copy} (what jdet uses) and
 * with glibc's {@code memcpy} through a downcall.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp jdet-benchmarks/target/jdet-benchmarks.jar io.jdet.bench.CopyBandwidth
 * </pre>
 */
public final class CopyBandwidth {
    private static final long WORKING_SET = 64L << 20;
    private static final int[] CHUNKS = {16_384, 65_000, 1 << 20};
    private static final int ROUNDS = 4;

    private CopyBandwidth() {
    }

    /**
     * Prints GB/s per chunk size and way, for a few rounds (read the last).
     *
     * @param args none
     * @throws Throwable if the downcall fails
     */
    public static void main(final String[] args) throws Throwable {
        final Linker linker = Linker.nativeLinker();
        final MethodHandle memcpy = linker.downcallHandle(linker.defaultLookup().find("memcpy").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                ValueLayout.JAVA_LONG));
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment src = arena.allocate(WORKING_SET, 4096).fill((byte) 1);
            final MemorySegment dst = arena.allocate(WORKING_SET, 4096).fill((byte) 2);
            for (int round = 0; round < ROUNDS; round++) {
                for (final int chunk : CHUNKS) {
                    System.out.printf(Locale.ROOT, "%8d B  streaming: java %5.1f  memcpy %5.1f GB/s   "
                            + "cache-resident: java %5.1f  memcpy %5.1f GB/s%n", chunk,
                        rate(memcpy, src, dst, chunk, true, false), rate(memcpy, src, dst, chunk, true, true),
                        rate(memcpy, src, dst, chunk, false, false), rate(memcpy, src, dst, chunk, false, true));
                }
            }
        }
    }

    private static double rate(final MethodHandle memcpy, final MemorySegment src, final MemorySegment dst,
                               final int chunk, final boolean streaming, final boolean viaMemcpy) throws Throwable {
        long bytes = 0;
        final long start = System.nanoTime();
        final int passes = streaming ? 20 : 1;
        final long span = streaming ? WORKING_SET - chunk : 0;
        final long repeats = streaming ? 1 : (1L << 30) / chunk;
        for (int pass = 0; pass < passes; pass++) {
            for (long r = 0; r < repeats; r++) {
                for (long off = 0; off <= span; off += chunk) {
                    if (viaMemcpy) {
                        final MemorySegment ignored = (MemorySegment) memcpy.invokeExact(
                            MemorySegment.ofAddress(dst.address() + off), MemorySegment.ofAddress(src.address() + off),
                            (long) chunk);
                    } else {
                        MemorySegment.copy(src, off, dst, off, chunk);
                    }
                    bytes += chunk;
                }
            }
        }
        return bytes / ((System.nanoTime() - start) / 1e9) / 1e9;
    }
}
