package io.jdet;

import io.jdet.bench.BenchMain;
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

import java.util.concurrent.TimeUnit;

/**
 * The verbs data path end to end: post and poll between two NICs driven by one thread, through the whole engine
 * (the verb's checks, the requester, frame build and CRC, the link, the receive path, the responder, completion).
 * Every benchmark here must allocate nothing per operation: run it with {@code -prof gc} and read
 * {@code gc.alloc.rate.norm}.
 *
 * <ul>
 *   <li>{@link #sendRecvPingPong}: A sends {@code size} bytes, B's receive completes, B sends them back, A's
 *       receive completes. One operation is one round trip; send completions ride on the replies.</li>
 *   <li>{@link #writePoll}: A posts an RDMA write and polls until it completes (B is polled too, so that it takes
 *       the write in and acknowledges it).</li>
 *   <li>{@link #writeImmediatePoll}: an RDMA write with immediate data, until B's receive completes: one way.</li>
 *   <li>{@link #readPoll}: A posts an RDMA read of {@code size} bytes and polls until it completes.</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class PostPollBenchmark {
    private static final int DEPTH = 64;

    /** The NIC both sides open: {@code loop:bench} (in-process fabric) or {@code udp:127.0.0.1}. */
    @Param({"loop:bench"})
    String nic;

    /** Message size in bytes. */
    @Param({"8", "1024", "4096"})
    int size;

    private Connection connection;
    private Endpoint a;
    private Endpoint b;

    /** Opens and connects the two sides and fills both receive queues. */
    @Setup(Level.Trial)
    public void open() {
        connection = new Connection(nic, Math.max(size, 64), DEPTH, DEPTH);
        a = connection.a();
        b = connection.b();
        a.fillReceives(size);
        b.fillReceives(size);
    }

    /** Lets outstanding work complete between iterations, outside the measurement. */
    @TearDown(Level.Iteration)
    public void quiesce() {
        a.drainSends(b);
        b.drainSends(a);
        a.takeRecvs();
        b.takeRecvs();
        a.fillReceives(size);
        b.fillReceives(size);
    }

    /** Closes everything. */
    @TearDown(Level.Trial)
    public void close() {
        connection.close();
    }

    /**
     * One send/receive round trip.
     *
     * @return B's outstanding receive count, so that nothing is optimised away
     */
    @Benchmark
    public int sendRecvPingPong() {
        return connection.pingPong(size);
    }

    /**
     * One RDMA write, posted and polled to completion.
     *
     * @return A's outstanding count
     */
    @Benchmark
    public int writePoll() {
        a.write(size, b.mr(), 0, 0);
        while (a.sendsOutstanding() > 0) {
            a.poll();
            b.poll();
        }
        return a.sendsOutstanding();
    }

    /**
     * One RDMA write with immediate data, until the peer's receive completes (A's own completion is taken later,
     * when acknowledgements come back).
     *
     * @return B's outstanding receive count
     */
    @Benchmark
    public int writeImmediatePoll() {
        a.write(size, b.mr(), WrFlags.IMMEDIATE, 7);
        b.awaitRecv();
        b.postRecv(size);
        a.poll();
        return b.recvsOutstanding();
    }

    /**
     * One RDMA read, posted and polled to completion.
     *
     * @return A's outstanding count
     */
    @Benchmark
    public int readPoll() {
        a.read(size, b.mr());
        while (a.sendsOutstanding() > 0) {
            a.poll();
            b.poll();
        }
        return a.sendsOutstanding();
    }

    /**
     * Runs this class's benchmarks.
     *
     * @param args JMH options
     */
    public static void main(final String[] args) {
        BenchMain.run(PostPollBenchmark.class, args);
    }
}
