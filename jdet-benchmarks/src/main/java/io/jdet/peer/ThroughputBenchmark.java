package io.jdet.peer;

import io.aeron.logbuffer.FragmentHandler;
import io.jdet.bench.BenchMain;
import io.jdet.bench.Connection;
import io.jdet.WrFlags;
import io.jdet.bench.Endpoint;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * One-way message rate, jdet against Aeron, at the same sizes and in the same run. One thread sends and receives:
 * each operation sends one message (waiting, while polling, when flow control says the window is full) and then
 * polls the receiving end once, so the score is messages per second delivered through a full pipeline. At the end
 * of each iteration everything sent is drained and checked as received (outside the measurement). Multiply by the
 * size for bytes per second.
 *
 * <ul>
 *   <li>{@link #jdet}: sends on a queue pair with a 64-deep send queue into a 128-deep receive queue that is
 *       refilled as it is consumed; {@code nic} as in {@link PingPongBenchmark}.</li>
 *   <li>{@link #jdetBurst}: the same, in bursts of {@link #BURST} posts flagged {@code WrFlags.MORE} but the last, so
 *       their frames share datagrams (ring slots on the fabric): the path of the perf tool's bandwidth tests. Scored
 *       per message.</li>
 *   <li>{@link #aeron}: an exclusive publication offering into its subscription ({@link AeronPeer}), back-pressured
 *       by Aeron's own flow control.</li>
 * </ul>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g",
    // Agrona reaches jdk.internal.misc.Unsafe (the driver fails to start without); Agrona's TransportPoller swaps
    // the NIO selector's selected-key set by reflection into sun.nio.ch when allowed (carries on without).
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"})
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
public class ThroughputBenchmark {
    private static final int SQ_DEPTH = 64;
    private static final int RQ_DEPTH = 128;
    private static final long DRAIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    /** The most messages one poll takes, on both sides. */
    private static final int FRAGMENT_LIMIT = 16;
    /** Messages per burst of {@link #jdetBurst}: one poll takes them all. */
    static final int BURST = 16;

    /** jdet's side: a sender and a receiver queue pair. */
    @State(Scope.Thread)
    public static class Jdet {
        /** The NIC both sides open. */
        @Param({"loop:bench", "udp:127.0.0.1"})
        String nic;

        /** Message size in bytes. */
        @Param({"8", "1024", "4096"})
        int size;

        Connection connection;
        Endpoint a;
        Endpoint b;
        long sent;
        long received;

        /** Opens, connects and fills the receive queue. */
        @Setup(Level.Trial)
        public void open() {
            connection = new Connection(nic, Math.max(size, 64), SQ_DEPTH, RQ_DEPTH);
            a = connection.a();
            b = connection.b();
            b.fillReceives(size);
        }

        /** Drains what is in flight and checks that every message sent arrived. */
        @TearDown(Level.Iteration)
        public void drain() {
            final long deadline = System.nanoTime() + DRAIN_TIMEOUT_NS;
            while (received < sent || a.sendsOutstanding() > 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("jdet: " + (sent - received) + " messages did not arrive");
                }
                receive();
                a.poll();
            }
        }

        void receive() {
            b.poll();
            received += b.takeRecvs();
            b.fillReceives(size);
        }

        /** Closes everything. */
        @TearDown(Level.Trial)
        public void close() {
            connection.close();
        }
    }

    /** Aeron's side: one stream, offered and polled by the same thread. */
    @State(Scope.Thread)
    public static class Aeron {
        /** {@code udp} (127.0.0.1) or {@code ipc} (shared memory). */
        @Param({"udp", "ipc"})
        String transport;

        /** The media driver's idle strategy: {@code spin} or {@code backoff}. */
        @Param({"spin"})
        String driverIdle;

        /** Message size in bytes. */
        @Param({"8", "1024", "4096"})
        int size;

        AeronPeer peer;
        FragmentHandler counter;
        long sent;
        long received;

        /** Starts the driver and connects the stream. */
        @Setup(Level.Trial)
        public void open() {
            peer = new AeronPeer(transport, driverIdle, size);
            counter = AeronPeer.assembled((buffer, offset, length, header) -> received++);
        }

        /** Drains what is in flight and checks that every message sent arrived. */
        @TearDown(Level.Iteration)
        public void drain() {
            final long deadline = System.nanoTime() + DRAIN_TIMEOUT_NS;
            while (received < sent) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("Aeron: " + (sent - received) + " messages did not arrive");
                }
                peer.pingIn.poll(counter, FRAGMENT_LIMIT);
            }
        }

        /** Closes the client and the driver. */
        @TearDown(Level.Trial)
        public void close() {
            peer.close();
        }
    }

    /**
     * Sends one jdet message and polls both ends once.
     *
     * @param s the connection
     * @return messages received so far
     */
    @Benchmark
    public long jdet(final Jdet s) {
        final Endpoint a = s.a;
        while (a.sendsOutstanding() >= SQ_DEPTH) {
            s.receive();
            a.poll();
        }
        a.send(s.size);
        s.sent++;
        s.receive();
        a.poll();
        return s.received;
    }

    /**
     * Sends a burst of {@link #BURST} jdet messages, each but the last flagged {@code MORE}, and polls both ends once.
     *
     * @param s the connection
     * @return messages received so far
     */
    @Benchmark
    @OperationsPerInvocation(BURST)
    public long jdetBurst(final Jdet s) {
        final Endpoint a = s.a;
        while (a.sendsOutstanding() > SQ_DEPTH - BURST) {
            s.receive();
            a.poll();
        }
        for (int i = 0; i < BURST; i++) {
            a.send(s.size, i < BURST - 1 ? WrFlags.MORE : 0);
        }
        s.sent += BURST;
        s.receive();
        a.poll();
        return s.received;
    }

    /**
     * Offers one Aeron message (polling the subscription while back-pressured) and polls once.
     *
     * @param s the stream
     * @return messages received so far
     */
    @Benchmark
    public long aeron(final Aeron s) {
        final AeronPeer p = s.peer;
        long result;
        while ((result = p.ping.offer(p.buffer, 0, s.size)) < 0) {
            AeronPeer.checkOffer(result);
            p.pingIn.poll(s.counter, FRAGMENT_LIMIT);
        }
        s.sent++;
        p.pingIn.poll(s.counter, FRAGMENT_LIMIT);
        return s.received;
    }

    /**
     * Runs this class's benchmarks.
     *
     * @param args JMH options
     */
    public static void main(final String[] args) {
        BenchMain.run(ThroughputBenchmark.class, args);
    }
}
