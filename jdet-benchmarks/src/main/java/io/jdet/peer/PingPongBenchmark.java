package io.jdet.peer;

import io.aeron.logbuffer.FragmentHandler;
import io.jdet.bench.BenchMain;
import io.jdet.bench.Connection;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Round trip of one message and its echo, jdet against Aeron, at the same sizes and in the same run; one thread
 * plays both ends (as in {@code ./jdet perf}), so the figure is a round trip through the library and its transport
 * with no thread hand-off on the application side.
 *
 * <ul>
 *   <li>{@link #jdet}: send/receive between two queue pairs on two NICs named by {@code nic}:
 *       {@code loop:bench} (in-process fabric) or {@code udp:127.0.0.1} (fails at setup, saying so, where this
 *       build has no UDP link).</li>
 *   <li>{@link #aeron}: an exclusive publication to a subscription that echoes on a second stream, through an
 *       embedded media driver ({@link AeronPeer}): {@code udp} over 127.0.0.1, or {@code ipc} over shared memory
 *       (the like of jdet's in-process fabric).</li>
 * </ul>
 *
 * <p>Sampled ({@link Mode#SampleTime}): read the median ({@code p0.50}). On a shared 2-vCPU machine a transport
 * that needs a second thread (Aeron's driver for UDP) is now and then descheduled for milliseconds, and those
 * round trips dominate a mean.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g",
    // Agrona reaches jdk.internal.misc.Unsafe (the driver fails to start without); Agrona's TransportPoller swaps
    // the NIO selector's selected-key set by reflection into sun.nio.ch when allowed (carries on without).
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PingPongBenchmark {
    private static final int DEPTH = 64;

    /** jdet's side: two connected queue pairs. */
    @State(Scope.Thread)
    public static class Jdet {
        /** The NIC both sides open. */
        @Param({"loop:bench", "udp:127.0.0.1"})
        String nic;

        /** Message size in bytes. */
        @Param({"8", "1024", "4096"})
        int size;

        Connection connection;

        /** Opens, connects and fills both receive queues. */
        @Setup(Level.Trial)
        public void open() {
            connection = new Connection(nic, Math.max(size, 64), DEPTH, DEPTH);
            connection.a().fillReceives(size);
            connection.b().fillReceives(size);
        }

        /** Closes everything. */
        @TearDown(Level.Trial)
        public void close() {
            connection.close();
        }
    }

    /** Aeron's side: a ping stream whose subscriber echoes on a pong stream. */
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
        FragmentHandler echo;
        FragmentHandler pongs;
        int received;

        /** Starts the driver and connects both streams. */
        @Setup(Level.Trial)
        public void open() {
            peer = new AeronPeer(transport, driverIdle, size);
            echo = AeronPeer.assembled((buffer, offset, length, header) ->
                AeronPeer.offer(peer.pong, buffer, offset, length));
            pongs = AeronPeer.assembled((buffer, offset, length, header) -> received++);
        }

        /** Closes the client and the driver. */
        @TearDown(Level.Trial)
        public void close() {
            peer.close();
        }
    }

    /**
     * One jdet round trip.
     *
     * @param s the connection
     * @return a value that depends on the work
     */
    @Benchmark
    public int jdet(final Jdet s) {
        return s.connection.pingPong(s.size);
    }

    /**
     * One Aeron round trip.
     *
     * @param s the streams
     * @return a value that depends on the work
     */
    @Benchmark
    public int aeron(final Aeron s) {
        final AeronPeer p = s.peer;
        AeronPeer.offer(p.ping, p.buffer, 0, s.size);
        while (p.pingIn.poll(s.echo, 1) == 0) {
            // spin, as jdet's side does
        }
        while (p.pongIn.poll(s.pongs, 1) == 0) {
            // spin
        }
        return s.received;
    }

    /**
     * Runs this class's benchmarks.
     *
     * @param args JMH options
     */
    public static void main(final String[] args) {
        BenchMain.run(PingPongBenchmark.class, args);
    }
}
