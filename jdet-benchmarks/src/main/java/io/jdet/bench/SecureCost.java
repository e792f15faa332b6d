package io.jdet.bench;

import io.jdet.Security;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * What protection costs, outside JMH: in one JVM, alternating rounds of an 8-byte send/receive ping-pong over a
 * plain connection and over an AUTH one (the ratio is what counts: both see the same machine load), then RDMA write
 * bandwidth at 1 MiB over plain, AUTH and ENCRYPT connections. Prints time per operation, bytes the calling thread
 * allocated per operation ({@code ThreadMXBean}), and GB/s.
 *
 * <pre>
 * java -cp jdet-benchmarks/target/jdet-benchmarks.jar io.jdet.bench.SecureCost [NIC] [PINGS] [ROUNDS] [WRITES]
 * </pre>
 * NIC defaults to {@code loop:secure}, PINGS per round to 100,000, ROUNDS to 5, WRITES (1 MiB each) to 2,000.
 */
public final class SecureCost {
    private static final int PING_SIZE = 8;
    private static final int WRITE_SIZE = 1 << 20;
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private SecureCost() {
    }

    /**
     * Runs the measurement.
     *
     * @param args [NIC] [PINGS] [ROUNDS] [WRITES]
     */
    public static void main(final String[] args) {
        final String nic = args.length > 0 ? args[0] : "loop:secure";
        final int pings = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        final int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        final int writes = args.length > 3 ? Integer.parseInt(args[3]) : 2_000;
        try (Connection plain = new Connection(nic, 64, 64, 128, Security.NONE);
             Connection auth = new Connection(nic, 64, 64, 128, Security.of(Security.Mode.AUTH));
             Connection enc = new Connection(nic, 64, 64, 128, Security.of(Security.Mode.ENCRYPT))) {
            for (final Connection c : new Connection[] {plain, auth, enc}) {
                c.a().fillReceives(PING_SIZE);
                c.b().fillReceives(PING_SIZE);
            }
            for (int round = 1; round <= rounds; round++) {
                final double p = pingPong(plain, pings);
                final double a = pingPong(auth, pings);
                final double e = pingPong(enc, pings);
                System.out.printf(Locale.ROOT, "round %d: 8 B ping-pong plain %.0f ns, auth %.0f ns (%.2fx), "
                    + "encrypt %.0f ns (%.2fx)%n", round, p, a, a / p, e, e / p);
            }
        }
        for (final Security s : new Security[] {Security.NONE, Security.of(Security.Mode.AUTH),
            Security.of(Security.Mode.ENCRYPT)}) {
            try (Connection c = new Connection(nic, WRITE_SIZE, 64, 128, s)) {
                writeBandwidth(c, s, writes / 4); // warm-up
                writeBandwidth(c, s, writes);
            }
        }
    }

    private static double pingPong(final Connection c, final int pings) {
        final long bytes = THREADS.getCurrentThreadAllocatedBytes();
        final long start = System.nanoTime();
        for (int i = 0; i < pings; i++) {
            c.pingPong(PING_SIZE);
        }
        final double ns = (double) (System.nanoTime() - start) / pings;
        final long allocated = THREADS.getCurrentThreadAllocatedBytes() - bytes;
        System.out.printf(Locale.ROOT, "  %-8s %.0f ns/round trip, %.1f bytes allocated per round trip%n",
            label(c), ns, (double) allocated / pings);
        return ns;
    }

    private static void writeBandwidth(final Connection c, final Security s, final int writes) {
        final Endpoint a = c.a();
        final Endpoint b = c.b();
        final long bytes = THREADS.getCurrentThreadAllocatedBytes();
        final long cpu = THREADS.getCurrentThreadCpuTime();
        final long start = System.nanoTime();
        for (int i = 0; i < writes; i++) {
            a.write(WRITE_SIZE, b.mr(), 0, 0); // waits for a send slot, polling
            b.poll();
            a.poll();
        }
        a.drainSends(b);
        final long ns = System.nanoTime() - start;
        final long cpuNs = THREADS.getCurrentThreadCpuTime() - cpu;
        final long allocated = THREADS.getCurrentThreadAllocatedBytes() - bytes;
        // One thread drives both ends: its CPU time (user + system) carries sealing, opening, engine and link alike
        System.out.printf(Locale.ROOT, "bw-write 1 MiB %-8s %d writes: %.2f GB/s, %.2f GB per CPU second of the one"
                + " thread driving both ends, %.1f bytes allocated per 1 MiB%n",
            s.mode(), writes, (double) writes * WRITE_SIZE / ns, (double) writes * WRITE_SIZE / cpuNs,
            (double) allocated / writes);
    }

    private static String label(final Connection c) {
        final Security s = c.a().nic().connectionManager().security();
        return s.mode().toString();
    }
}
