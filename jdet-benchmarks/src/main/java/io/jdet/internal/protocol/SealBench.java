package io.jdet.internal.protocol;

import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * What sealing and opening cost per core, outside JMH and outside the engine: one thread seals a frame and opens
 * it at the other side, and prints CPU time and bytes allocated per frame (not a test: a measurement; the figures
 * in docs/SECURITY.md come from it).
 *
 * <pre>
 * java -cp jdet-benchmarks/target/jdet-benchmarks.jar io.jdet.internal.protocol.SealBench \
 *     AUTH|ENCRYPT 32 PAYLOAD_BYTES FRAMES_PER_ROUND
 * </pre>
 */
public final class SealBench {
    private SealBench() {
    }

    private static final com.sun.management.ThreadMXBean TB = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    /**
     * Runs six rounds and prints the last three.
     *
     * @param a mode, key bytes, payload bytes, frames per round
     */
    public static void main(final String[] a) {
        final Security.Mode mode = Security.Mode.valueOf(a[0]);
        final int keyLen = Integer.parseInt(a[1]);
        final int n = Integer.parseInt(a[2]);
        final int iters = Integer.parseInt(a[3]);
        byte[] k1 = new byte[keyLen], k2 = new byte[keyLen], ctl = new byte[32];
        new java.util.Random(1).nextBytes(k1); new java.util.Random(2).nextBytes(k2);
        Counters c = new Counters();
        FrameSeal tx = new FrameSeal(mode, k1, k2, true, ctl, new SealBuffers(65536), c);
        FrameSeal rx = new FrameSeal(mode, k2, k1, false, ctl, new SealBuffers(65536), c);
        MemorySegment payload = Arena.global().allocate(n + 1);
        ByteBuffer view = payload.asByteBuffer();
        MemorySegment header = Arena.global().allocate(Frame.HEADER_LENGTH);
        MemorySegment wire = Arena.global().allocate(65536 + 64);
        FrameGather g = new FrameGather(4);
        for (int round = 0; round < 6; round++) {
            long cpu = TB.getCurrentThreadCpuTime(), alloc = TB.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < iters; i++) {
                Frame.writeBase(header, Frame.OP_WRITE, 0, n, 7, 9, i, 0, 0, 0);
                g.clear();
                g.add(payload, view, 0, n);
                tx.seal(header, g);
                MemorySegment.copy(header, 0, wire, 0, Frame.HEADER_LENGTH);
                g.copyTo(wire, Frame.HEADER_LENGTH);
                int len = Frame.HEADER_LENGTH + g.totalLength();
                wire.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, 0);
                if (rx.open(wire, len) == null) throw new AssertionError("dropped");
            }
            long ns = TB.getCurrentThreadCpuTime() - cpu;
            long bytes = TB.getCurrentThreadAllocatedBytes() - alloc;
            if (round >= 3) System.out.printf("%s %6d B: seal+open %8.0f ns/frame, %6.0f MB/s per core (each byte sealed and opened), %5.0f B allocated/frame%n",
                mode, n, (double) ns / iters, (double) n * iters / ns * 1000, (double) bytes / iters);
        }
    }
}
