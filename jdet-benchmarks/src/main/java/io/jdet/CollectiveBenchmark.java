package io.jdet;

import io.jdet.bench.BenchMain;
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

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;

/**
 * A collective group's data path end to end: {@code members} members on the in-process fabric (each its own NIC,
 * domain, queue and group), driven by one thread that posts one collective on every member and polls them all
 * until each completes. Like {@link PostPollBenchmark}, every benchmark here must allocate nothing per operation
 * (the post's checks, its request, the schedule, the steps, the completions): run it with {@code -prof gc} and
 * read {@code gc.alloc.rate.norm}.
 *
 * <pre>
 * ./jdet bench CollectiveBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class CollectiveBenchmark {
    private static final long TAG = 0x4245_4e43_0000L;
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    /** Members of the group. */
    @Param({"2", "4"})
    int members;

    /** Bytes per member: the broadcast's and the reduction's message, each member's block of the allgather. */
    @Param({"8", "1024"})
    int size;

    private Det det;
    private Arena arena;
    private CompletionQueue[] cqs;
    private Collective[] cos;
    private DataSegment[] src;
    private DataSegment[] dst;
    private DataSegment[] gathered;
    private final WorkCompletion[] wc = {new WorkCompletion()};
    private boolean[] done;
    private long id;

    /** Opens the members and joins the group. */
    @Setup(Level.Trial)
    public void open() {
        det = Det.open(new Configuration().jmx(false));
        arena = Arena.ofShared();
        final String fabric = "loop:collective-bench-" + ProcessHandle.current().pid();
        cqs = new CompletionQueue[members];
        cos = new Collective[members];
        src = new DataSegment[members];
        dst = new DataSegment[members];
        gathered = new DataSegment[members];
        done = new boolean[members];
        final Nic[] nics = new Nic[members];
        for (int i = 0; i < members; i++) {
            nics[i] = det.openNic(fabric, null);
            final ProtectionDomain pd = nics[i].allocPd();
            cqs[i] = nics[i].createCq(64, null);
            cos[i] = pd.createCollective(cqs[i]);
            src[i] = segment(pd, size);
            dst[i] = segment(pd, size);
            gathered[i] = segment(pd, (long) size * members);
        }
        for (int i = 0; i < members; i++) {
            cos[i].join(++id, TAG + ProcessHandle.current().pid(), members, i, nics[0].address(), 0);
        }
        awaitAll();
    }

    private DataSegment segment(final ProtectionDomain pd, final long bytes) {
        final MemoryRegion mr = pd.regMr(arena.allocate(bytes, 64), Access.LOCAL_READ | Access.LOCAL_WRITE);
        return new DataSegment(mr.address(), (int) bytes, mr.lKey());
    }

    /** Closes the group and the device. */
    @TearDown(Level.Trial)
    public void close() {
        for (final Collective co : cos) {
            co.close();
        }
        det.close();
        arena.close();
    }

    /**
     * A broadcast of {@code size} bytes from member 0.
     *
     * @return the last operation's id
     */
    @Benchmark
    public long bcast() {
        id++;
        for (int i = 0; i < members; i++) {
            cos[i].bcast(id, 0, src[i], 0);
        }
        return awaitAll();
    }

    /**
     * An allreduce (sum of 64-bit integers) of {@code size} bytes.
     *
     * @return the last operation's id
     */
    @Benchmark
    public long allreduce() {
        id++;
        for (int i = 0; i < members; i++) {
            cos[i].allreduce(id, src[i], dst[i], ReduceOp.SUM, ReduceType.INT64, 0);
        }
        return awaitAll();
    }

    /**
     * An allgather of {@code size} bytes per member.
     *
     * @return the last operation's id
     */
    @Benchmark
    public long allgather() {
        id++;
        for (int i = 0; i < members; i++) {
            cos[i].allgather(id, src[i], gathered[i], 0);
        }
        return awaitAll();
    }

    private long awaitAll() {
        java.util.Arrays.fill(done, false);
        int have = 0;
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (have < members) {
            for (int i = 0; i < members; i++) {
                if (!done[i] && cqs[i].poll(wc) == 1) {
                    if (wc[0].status() != WcStatus.SUCCESS) {
                        throw new IllegalStateException("member " + i + ": " + wc[0]);
                    }
                    done[i] = true;
                    have++;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("a collective did not complete within 30 s");
            }
        }
        return wc[0].id();
    }

    /**
     * Runs this class's benchmarks.
     *
     * @param args JMH options
     */
    public static void main(final String[] args) {
        BenchMain.run(CollectiveBenchmark.class, args);
    }
}
