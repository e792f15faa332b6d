package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.Det;
import io.jdet.MemoryRegion;
import io.jdet.ProtectionDomain;
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
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The engine's key lookup, which every data segment of every post and every remote key of every RDMA request goes
 * through. {@link #keyTableLookup} measures the bare {@link KeyTable} (index from the key, then the caller's full
 * key compare); {@link #localRegion} measures {@code NicImpl.localRegion}, the check a post runs per segment, on a
 * real NIC with {@code entries} registered regions. Keys are visited in a shuffled order so that large tables pay
 * their cache misses. This class lives in the engine's package to reach the package-private table: the shaded jar
 * runs on the class path, where the split package is one runtime package. Allocation free.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class KeyTableBenchmark {
    /** Objects in the table; a power of two. */
    @Param({"16", "65536"})
    int entries;

    private final KeyTable table = new KeyTable();
    private int[] tableKeys;
    private int[] regionKeys;
    private int next;
    private Det det;
    private Arena arena;
    private NicImpl nic;

    /** A table entry that knows its full key, as regions and queue pairs do. */
    private static final class Keyed {
        private int key;
    }

    /** Fills the bare table and registers the regions, then shuffles the visiting orders. */
    @Setup(Level.Trial)
    public void fill() {
        tableKeys = new int[entries];
        for (int i = 0; i < entries; i++) {
            final Keyed entry = new Keyed();
            final int index = table.allocate(entry);
            entry.key = index << 8 | table.randomTag();
            tableKeys[i] = entry.key;
        }
        det = Det.open();
        arena = Arena.ofShared();
        nic = (NicImpl) det.openNic("loop:keys", null);
        final ProtectionDomain pd = nic.allocPd();
        final MemorySegment memory = arena.allocate(64L * entries, 64);
        regionKeys = new int[entries];
        for (int i = 0; i < entries; i++) {
            final MemoryRegion mr = pd.regMr(memory.asSlice(64L * i, 64), Access.LOCAL_READ | Access.LOCAL_WRITE);
            regionKeys[i] = mr.lKey();
        }
        final SplittableRandom random = new SplittableRandom(42);
        shuffle(tableKeys, random);
        shuffle(regionKeys, random);
    }

    private static void shuffle(final int[] keys, final SplittableRandom random) {
        for (int i = keys.length - 1; i > 0; i--) {
            final int j = random.nextInt(i + 1);
            final int t = keys[i];
            keys[i] = keys[j];
            keys[j] = t;
        }
    }

    /** Closes the device. */
    @TearDown(Level.Trial)
    public void close() {
        det.close();
        arena.close();
    }

    /**
     * One bare table lookup with the full-key check.
     *
     * @return the entry found, or null
     */
    @Benchmark
    public Object keyTableLookup() {
        final int key = tableKeys[next++ & entries - 1];
        final Object o = table.lookup(key);
        return o instanceof Keyed k && k.key == key ? k : null;
    }

    /**
     * One local key check as a post runs it for each data segment.
     *
     * @return the region found, or null
     */
    @Benchmark
    public Object localRegion() {
        return nic.localRegion(regionKeys[next++ & entries - 1]);
    }

    /**
     * Runs this class's benchmarks.
     *
     * @param args JMH options
     */
    public static void main(final String[] args) {
        BenchMain.run(KeyTableBenchmark.class, args);
    }
}
