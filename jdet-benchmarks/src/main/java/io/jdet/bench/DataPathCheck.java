package io.jdet.bench;

import io.jdet.WrFlags;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * A check outside JMH: runs one data-path loop for a number of rounds and prints, per round, the time per
 * operation and the bytes the calling thread allocated ({@code ThreadMXBean.getCurrentThreadAllocatedBytes}), then
 * both NICs' protocol counters. It answers "does the steady state allocate?" with exact bytes rather than a rate,
 * and shows warm-up and retransmissions that a JMH score hides.
 *
 * <pre>
 * java -cp jdet-benchmarks/target/jdet-benchmarks.jar io.jdet.bench.DataPathCheck MODE SIZE [NIC] [OPS] [ROUNDS]
 * </pre>
 * MODE is {@code pingpong} (send/recv round trip), {@code read}, {@code writeimm} (write with immediate until the
 * peer's receive completes), {@code write} (signaled write until it completes) or {@code stream} (one-way sends,
 * 64 in flight, into a 128-deep receive queue); NIC defaults to {@code loop:check}, OPS per round to 1,000,000 (a
 * tenth of that for {@code write}, which waits for the delayed acknowledgement), ROUNDS to 4.
 */
public final class DataPathCheck {
    private static final int SQ_DEPTH = 64;
    private static final int RQ_DEPTH = 128;

    private DataPathCheck() {
    }

    /**
     * Runs the check.
     *
     * @param args MODE SIZE [NIC] [OPS] [ROUNDS]
     */
    public static void main(final String[] args) {
        if (args.length < 2) {
            System.err.println("usage: DataPathCheck pingpong|read|writeimm|write|stream SIZE [NIC] [OPS] [ROUNDS]");
            System.exit(2);
        }
        final String mode = args[0];
        final int size = Integer.parseInt(args[1]);
        final String nic = args.length > 2 ? args[2] : "loop:check";
        final int ops = args.length > 3 ? Integer.parseInt(args[3]) : mode.equals("write") ? 100_000 : 1_000_000;
        final int rounds = args.length > 4 ? Integer.parseInt(args[4]) : 4;
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Connection c = new Connection(nic, Math.max(size, 64), SQ_DEPTH, RQ_DEPTH)) {
            final Endpoint a = c.a();
            final Endpoint b = c.b();
            a.fillReceives(size);
            b.fillReceives(size);
            for (int round = 1; round <= rounds; round++) {
                final long bytesBefore = threads.getCurrentThreadAllocatedBytes();
                final long start = System.nanoTime();
                for (int i = 0; i < ops; i++) {
                    once(mode, size, c, a, b);
                }
                final long elapsed = System.nanoTime() - start;
                final long bytes = threads.getCurrentThreadAllocatedBytes() - bytesBefore;
                System.out.printf(Locale.ROOT, "%s %d B on %s, round %d: %d ops, %.1f ns/op, %d bytes allocated%n",
                    mode, size, nic, round, ops, (double) elapsed / ops, bytes);
            }
            a.drainSends(b);
            b.drainSends(a);
            System.out.println("A " + a.nic().counters());
            System.out.println("B " + b.nic().counters());
        }
    }

    private static void once(final String mode, final int size, final Connection c, final Endpoint a,
                             final Endpoint b) {
        switch (mode) {
            case "pingpong" -> c.pingPong(size);
            case "read" -> {
                a.read(size, b.mr());
                pollUntilIdle(a, b);
            }
            case "write" -> {
                a.write(size, b.mr(), 0, 0);
                pollUntilIdle(a, b);
            }
            case "writeimm" -> {
                a.write(size, b.mr(), WrFlags.IMMEDIATE, 7);
                b.awaitRecv();
                b.postRecv(size);
                a.poll();
            }
            case "stream" -> {
                while (a.sendsOutstanding() >= SQ_DEPTH) {
                    b.poll();
                    b.takeRecvs();
                    b.fillReceives(size);
                    a.poll();
                }
                a.send(size);
                b.poll();
                b.takeRecvs();
                b.fillReceives(size);
                a.poll();
            }
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    private static void pollUntilIdle(final Endpoint a, final Endpoint b) {
        while (a.sendsOutstanding() > 0) {
            a.poll();
            b.poll();
        }
    }
}
