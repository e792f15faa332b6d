import io.jdet.internal.link.*;
import io.jdet.internal.wire.*;
import java.lang.foreign.*;
/**
 * Thread CPU time (user + system) of the UDP link's send path plus receiving the same frames, one thread driving two
 * links over loopback, per MiB of payload: frames of SIZE bytes lent from a 2 MiB region, sealed by FrameCrc as the
 * engine seals them, PER_BATCH of them sent between cork and uncork, then received; BATCHES batches per round, the
 * median of 7 rounds printed. Run against a jar's classes (the internal link classes are public on the class path):
 * <pre>
 * javac -cp jdet-perf/target/jdet-perf.jar -d /tmp/lc tools/udpcost/LinkCost.java
 * java --enable-native-access=ALL-UNNAMED -cp jdet-perf/target/jdet-perf.jar:/tmp/lc LinkCost 65427 16 200
 * </pre>
 */
public class LinkCost {
    public static void main(String[] a) throws Exception {
        var threads = java.lang.management.ManagementFactory.getThreadMXBean();
        final int size = Integer.parseInt(a[0]);
        final int perBatch = Integer.parseInt(a[1]);
        final int batches = Integer.parseInt(a[2]);
        try (UdpLink s = new UdpLink("udp:127.0.0.1"); UdpLink r = new UdpLink("udp:127.0.0.1"); Arena arena = Arena.ofShared()) {
            long peer = s.resolve(r.address());
            MemorySegment header = arena.allocate(80, 8);
            var hv = header.asByteBuffer();
            header.set(ValueLayout.JAVA_SHORT_UNALIGNED, 6, (short) size);
            MemorySegment region = arena.allocate(1L << 21, 64);
            for (long i = 0; i < region.byteSize(); i += 8) region.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            var view = region.asByteBuffer();
            FrameGather g = new FrameGather(4);
            FrameCrc crc = new FrameCrc();
            final long[] got = {0};
            FrameHandler h = (f, l, p) -> got[0]++;
            double[] perMiB = new double[7];
            for (int round = 0; round < perMiB.length; round++) {
                long c0 = threads.getCurrentThreadCpuTime();
                long sent = 0;
                got[0] = 0;
                for (int b = 0; b < batches; b++) {
                    s.cork();
                    for (int i = 0; i < perBatch; i++) {
                        g.clear();
                        g.lend(region, view, (long) i * size % (region.byteSize() - size), size);
                        crc.seal(header, hv, 80, g);
                        while (!s.send(peer, header, 80, g)) { }
                        sent++;
                    }
                    s.uncork();
                    long deadline = System.nanoTime() + 1_000_000_000L;
                    while (got[0] < sent && System.nanoTime() < deadline) r.receive(h, 16);
                    if (got[0] < sent) { sent = got[0]; }   // lost by the kernel: count only what arrived
                }
                perMiB[round] = (threads.getCurrentThreadCpuTime() - c0) / ((double) got[0] * size / (1 << 20)) / 1e3;
            }
            java.util.Arrays.sort(perMiB);
            System.out.printf("size %d x %d per batch: thread CPU per MiB (us): min %.0f median %.0f max %.0f%n", size, perBatch, perMiB[0], perMiB[3], perMiB[6]);
        }
    }
}
