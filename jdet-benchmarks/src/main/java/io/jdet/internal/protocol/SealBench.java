package io.jdet.internal.protocol;

import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Locale;

/**
 * What sealing and opening cost per core, outside JMH and outside the engine: one thread seals a batch of frames
 * (each from native memory, as a registered region gives it, into the wire form the link sends), then opens the
 * batch as the peer, and prints the CPU time ({@code ThreadMXBean}) and the bytes allocated per frame of each side
 * (not a test: a measurement; the figures in docs/SECURITY.md come from it). "GB/s per core" is payload bytes per
 * CPU second of that side alone.
 *
 * <pre>
 * java -cp jdet-benchmarks/target/jdet-benchmarks.jar io.jdet.internal.protocol.SealBench \
 *     AUTH|ENCRYPT KEY_BYTES PAYLOAD_BYTES FRAMES_PER_ROUND
 * </pre>
 * KEY_BYTES is {@code FrameSeal.KEY_LENGTH} of the build measured (32 before AES-GCM for large frames, 48 after).
 */
public final class SealBench {
    private static final int BATCH = 32;
    private static final int MTU = 65_536;
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private SealBench() {
    }

    /**
     * Runs eight rounds and prints the last four.
     *
     * @param a mode, key bytes, payload bytes, frames per round
     */
    public static void main(final String[] a) {
        final Security.Mode mode = Security.Mode.valueOf(a[0]);
        final int keyLength = Integer.parseInt(a[1]);
        final int n = Integer.parseInt(a[2]);
        final int frames = Integer.parseInt(a[3]) / BATCH * BATCH;
        final byte[] k1 = new byte[keyLength];
        final byte[] k2 = new byte[keyLength];
        new java.util.Random(1).nextBytes(k1);
        new java.util.Random(2).nextBytes(k2);
        final Counters c = new Counters();
        final FrameSeal tx = new FrameSeal(mode, k1, k2, true, new byte[32], new SealBuffers(MTU), c);
        final FrameSeal rx = new FrameSeal(mode, k2, k1, false, new byte[32], new SealBuffers(MTU), c);
        final MemorySegment payload = Arena.global().allocate(n + 1);
        final ByteBuffer view = payload.asByteBuffer();
        final MemorySegment header = Arena.global().allocate(Frame.HEADER_LENGTH);
        final MemorySegment[] wire = new MemorySegment[BATCH];
        final int[] lengths = new int[BATCH];
        for (int i = 0; i < BATCH; i++) {
            wire[i] = Arena.global().allocate(MTU + 64);
        }
        final FrameGather g = new FrameGather(4);
        for (int round = 0; round < 8; round++) {
            long sealNs = 0;
            long openNs = 0;
            long sealBytes = 0;
            long openBytes = 0;
            for (int done = 0; done < frames; done += BATCH) {
                final long cpu0 = THREADS.getCurrentThreadCpuTime();
                final long alloc0 = THREADS.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < BATCH; i++) {
                    Frame.writeBase(header, Frame.OP_WRITE, 0, n, 7, 9, done + i, 0, 0, 0);
                    g.clear();
                    g.add(payload, view, 0, n);
                    tx.seal(header, g);
                    MemorySegment.copy(header, 0, wire[i], 0, Frame.HEADER_LENGTH);
                    g.copyTo(wire[i], Frame.HEADER_LENGTH);
                    lengths[i] = Frame.HEADER_LENGTH + g.totalLength();
                }
                final long cpu1 = THREADS.getCurrentThreadCpuTime();
                final long alloc1 = THREADS.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < BATCH; i++) {
                    wire[i].set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, 0);
                    if (rx.open(wire[i], lengths[i]) == null) {
                        throw new AssertionError("dropped");
                    }
                }
                final long cpu2 = THREADS.getCurrentThreadCpuTime();
                final long alloc2 = THREADS.getCurrentThreadAllocatedBytes();
                sealNs += cpu1 - cpu0;
                openNs += cpu2 - cpu1;
                sealBytes += alloc1 - alloc0;
                openBytes += alloc2 - alloc1;
            }
            if (round >= 4) {
                System.out.printf(Locale.ROOT, "%s %6d B: seal %7.0f ns/frame %5.2f GB/s per core, %5.0f B alloc;"
                        + " open %7.0f ns/frame %5.2f GB/s per core, %5.0f B alloc; seal+open on one core %5.2f GB/s%n",
                    mode, n, (double) sealNs / frames, (double) n * frames / sealNs, (double) sealBytes / frames,
                    (double) openNs / frames, (double) n * frames / openNs, (double) openBytes / frames,
                    (double) n * frames / (sealNs + openNs));
            }
        }
    }
}
