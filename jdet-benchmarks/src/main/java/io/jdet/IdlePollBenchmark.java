package io.jdet;

import io.jdet.bench.Connection;
import io.jdet.bench.Endpoint;
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

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.TimeUnit;

/**
 * What a busy poll costs when nothing arrives: the period of a waiting thread's loop, half of which a message that
 * arrives waits on average before the loop sees it. {@link #jdetPoll} polls a connected queue pair's completion queue
 * (one engine pass: a {@code recvmmsg} on the link's socket and the timers); {@link #udpReceive} is a non-blocking
 * {@code DatagramChannel.receive} on an empty socket, the raw UDP ping-pong's loop.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class IdlePollBenchmark {
    /** The NIC both sides open: {@code udp:127.0.0.1} or {@code loop:bench} (in-process fabric). */
    @Param({"udp:127.0.0.1"})
    String nic;

    private Connection connection;
    private Endpoint a;
    private DatagramChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(2048);

    /** Opens and connects the two sides, and an empty non-blocking UDP socket. */
    @Setup(Level.Trial)
    public void open() throws IOException {
        connection = new Connection(nic, 64, 16, 16);
        a = connection.a();
        a.fillReceives(8);
        channel = DatagramChannel.open();
        channel.bind(new InetSocketAddress("127.0.0.1", 0));
        channel.configureBlocking(false);
    }

    /** Closes everything. */
    @TearDown(Level.Trial)
    public void close() throws IOException {
        channel.close();
        connection.close();
    }

    /**
     * One poll of a completion queue that nothing completes on.
     *
     * @return completions taken (always 0)
     */
    @Benchmark
    public int jdetPoll() {
        return a.poll();
    }

    /**
     * One non-blocking receive on an empty UDP socket.
     *
     * @return whether a datagram came (never)
     * @throws IOException if the receive fails
     */
    @Benchmark
    public boolean udpReceive() throws IOException {
        buffer.clear();
        return channel.receive(buffer) != null;
    }
}
