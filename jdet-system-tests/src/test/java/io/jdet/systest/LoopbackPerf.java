package io.jdet.systest;

import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.QpModify;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A rough loopback comparison, in one run: a plain NIO {@code DatagramChannel} ping-pong and 64000-byte stream,
 * then jdet's send/receive ping-pong and RDMA write stream between two UDP NICs. Each end busy-polls in its own
 * thread. Not a test; run it by hand:
 *
 * <pre>
 * mvn -q -pl jdet-core,jdet-system-tests -am test-compile
 * java --enable-native-access=ALL-UNNAMED -cp jdet-core/target/classes:jdet-system-tests/target/test-classes \
 *     io.jdet.systest.LoopbackPerf [rounds]
 * </pre>
 */
public final class LoopbackPerf {
    private static final int PING_BYTES = 64;
    private static final int STREAM_BYTES = 64_000;
    private static final long STREAM_TOTAL = 2L << 30;
    private static final int CREDIT_EVERY = 16;
    private static final int WINDOW = 64;

    private LoopbackPerf() {
    }

    /**
     * Runs the measurements and prints one line per figure.
     *
     * @param args optionally the number of ping-pong rounds (default 50000)
     * @throws Exception if a channel fails
     */
    public static void main(final String[] args) throws Exception {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
        final double[] raw = rawPingPong(rounds);
        final double rawStream = rawStream();
        final double[] jdet = jdetPingPong(rounds);
        final double jdetWrite = jdetWrite();
        System.out.printf("%-44s median %6.2f us  mean %6.2f us  p99 %6.2f us%n",
            "NIO DatagramChannel ping-pong RTT, " + PING_BYTES + " B", raw[0], raw[1], raw[2]);
        System.out.printf("%-44s median %6.2f us  mean %6.2f us  p99 %6.2f us%n",
            "jdet send/recv ping-pong RTT, " + PING_BYTES + " B", jdet[0], jdet[1], jdet[2]);
        System.out.printf("%-44s %6.2f GB/s%n", "NIO DatagramChannel stream, " + STREAM_BYTES + " B", rawStream);
        System.out.printf("%-44s %6.2f GB/s%n", "jdet RDMA write stream, 1 MiB writes", jdetWrite);
    }

    // ---------------------------------------------------------------- plain NIO

    private static DatagramChannel[] pair() throws IOException {
        final DatagramChannel a = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        final DatagramChannel b = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        for (final DatagramChannel c : new DatagramChannel[] {a, b}) {
            c.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
            c.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
            c.configureBlocking(false);
        }
        a.connect(b.getLocalAddress());
        b.connect(a.getLocalAddress());
        return new DatagramChannel[] {a, b};
    }

    private static double[] rawPingPong(final int rounds) throws Exception {
        final DatagramChannel[] c = pair();
        final AtomicBoolean stop = new AtomicBoolean();
        final CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(PING_BYTES);
            try {
                while (!stop.get()) {
                    buffer.clear();
                    if (c[1].read(buffer) > 0) {
                        buffer.flip();
                        c[1].write(buffer);
                    }
                }
            } catch (final IOException e) {
                throw new IllegalStateException(e);
            }
        });
        final ByteBuffer buffer = ByteBuffer.allocateDirect(PING_BYTES);
        final long[] rtt = new long[rounds];
        for (int i = -rounds / 2; i < rounds; i++) {
            final long start = System.nanoTime();
            buffer.clear();
            c[0].write(buffer);
            buffer.clear();
            final long deadline = start + 1_000_000_000L;
            while (c[0].read(buffer) <= 0) {
                if (System.nanoTime() > deadline) {
                    break; // a lost datagram: count the round as a second
                }
            }
            if (i >= 0) {
                rtt[i] = System.nanoTime() - start;
            }
        }
        stop.set(true);
        echo.get();
        c[0].close();
        c[1].close();
        return stats(rtt);
    }

    private static double rawStream() throws Exception {
        final DatagramChannel[] c = pair();
        final long datagrams = STREAM_TOTAL / STREAM_BYTES;
        final CompletableFuture<Long> receiver = CompletableFuture.supplyAsync(() -> {
            final ByteBuffer buffer = ByteBuffer.allocateDirect(65_536);
            final ByteBuffer credit = ByteBuffer.allocateDirect(8);
            long got = 0;
            long idleSince = System.nanoTime();
            try {
                while (got < datagrams && System.nanoTime() - idleSince < 500_000_000L) {
                    buffer.clear();
                    if (c[1].read(buffer) > 0) {
                        got++;
                        idleSince = System.nanoTime();
                        if (got % CREDIT_EVERY == 0) {
                            credit.clear();
                            credit.putLong(0, got);
                            c[1].write(credit);
                        }
                    }
                }
            } catch (final IOException e) {
                throw new IllegalStateException(e);
            }
            return got;
        });
        final ByteBuffer data = ByteBuffer.allocateDirect(STREAM_BYTES);
        final ByteBuffer credit = ByteBuffer.allocateDirect(16);
        long sent = 0;
        long credited = 0;
        long lost = 0; // datagrams given up on: the receiver's count lags the sender's by this many
        final long start = System.nanoTime();
        long waitingSince = start;
        while (sent < datagrams) {
            credit.clear();
            while (c[0].read(credit) > 0) {
                credited = Math.max(credited, credit.getLong(0) + lost);
                credit.clear();
            }
            if (sent - credited >= WINDOW && System.nanoTime() - waitingSince > 5_000_000L) {
                lost += sent - credited; // no credit for 5 ms: what is outstanding was dropped
                credited = sent;
            }
            if (sent - credited < WINDOW) {
                data.clear();
                if (c[0].write(data) > 0) {
                    sent++;
                    waitingSince = System.nanoTime();
                }
            }
        }
        final long got = receiver.get();
        final double seconds = (System.nanoTime() - start) / 1e9;
        c[0].close();
        c[1].close();
        return got * (double) STREAM_BYTES / seconds / 1e9;
    }

    // ---------------------------------------------------------------- jdet

    private static double[] jdetPingPong(final int rounds) throws Exception {
        try (Det det = Det.open(new Configuration());
             Endpoint a = new Endpoint(det, "udp:127.0.0.1", 1 << 20, 64);
             Endpoint b = new Endpoint(det, "udp:127.0.0.1", 1 << 20, 64)) {
            connect(a, b);
            final int total = rounds + rounds / 2;
            final CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                final WorkCompletion[] wc = new WorkCompletion[16];
                Arrays.setAll(wc, k -> new WorkCompletion());
                for (int r = 0; r < 32; r++) {
                    b.qp.recv(r, b.at(4096, PING_BYTES), 1);
                }
                for (int i = 0; i < total; i++) {
                    poll(b.recvCq, wc);
                    b.qp.recv(i, b.at(4096, PING_BYTES), 1);
                    b.qp.send(i, b.at(0, PING_BYTES), 1, 0, 0);
                    if (i % 8 == 7) {
                        b.sendCq.poll(wc);
                    }
                }
            });
            final WorkCompletion[] wc = new WorkCompletion[16];
            Arrays.setAll(wc, k -> new WorkCompletion());
            for (int r = 0; r < 32; r++) {
                a.qp.recv(r, a.at(4096, PING_BYTES), 1);
            }
            final long[] rtt = new long[rounds];
            for (int i = 0; i < total; i++) {
                final long start = System.nanoTime();
                a.qp.send(i, a.at(0, PING_BYTES), 1, 0, 0);
                poll(a.recvCq, wc);
                if (i >= rounds / 2) {
                    rtt[i - rounds / 2] = System.nanoTime() - start;
                }
                a.qp.recv(i, a.at(4096, PING_BYTES), 1);
                if (i % 8 == 7) {
                    a.sendCq.poll(wc);
                }
            }
            echo.get();
            return stats(rtt);
        }
    }

    private static double jdetWrite() throws Exception {
        final int size = 1 << 20;
        final int inFlight = 8;
        final long writes = STREAM_TOTAL / size;
        try (Det det = Det.open(new Configuration());
             Endpoint a = new Endpoint(det, "udp:127.0.0.1", 16L << 20, 64);
             Endpoint b = new Endpoint(det, "udp:127.0.0.1", 16L << 20, 64)) {
            connect(a, b);
            final AtomicBoolean stop = new AtomicBoolean();
            final CompletableFuture<Void> target = CompletableFuture.runAsync(() -> {
                final WorkCompletion[] wc = {new WorkCompletion()};
                while (!stop.get()) {
                    b.recvCq.poll(wc); // drives the target's receive path: placement and acks
                }
            });
            final WorkCompletion[] wc = {new WorkCompletion()};
            final long start = System.nanoTime();
            long posted = 0;
            long done = 0;
            while (done < writes) {
                while (posted < writes && posted - done < inFlight) {
                    a.qp.write(posted, a.at(posted % 8 * size, size), 1, b.region.address() + posted % 8 * size,
                        b.region.rKey(), 0, 0);
                    posted++;
                }
                poll(a.sendCq, wc);
                done++;
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            stop.set(true);
            target.get();
            System.out.println("jdet write counters: " + a.nic.counters());
            return writes * (double) size / seconds / 1e9;
        }
    }

    private static void connect(final Endpoint a, final Endpoint b) {
        a.qp.modify(new QpModify().connect(b.nic.address(), b.qp.number(), b.qp.query().localPsn()));
        b.qp.modify(new QpModify().connect(a.nic.address(), a.qp.number(), a.qp.query().localPsn()));
    }

    private static void poll(final CompletionQueue cq, final WorkCompletion[] wc) {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (cq.poll(wc, 1) == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no completion within 10 s");
            }
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("failed: " + wc[0]);
        }
    }

    private static double[] stats(final long[] ns) {
        final long[] sorted = ns.clone();
        Arrays.sort(sorted);
        final double mean = Arrays.stream(ns).average().orElse(0);
        return new double[] {sorted[sorted.length / 2] / 1e3, mean / 1e3, sorted[(int) (sorted.length * 0.99)] / 1e3};
    }
}
