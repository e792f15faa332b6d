package io.jdet.collective;

import io.jdet.Access;
import io.jdet.CollectiveTuning;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.MemoryRegion;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every verb on 2, 3, 4, 7, 8, 16 and 64 members of the in-process fabric, against a plain computation, under three
 * tunings that between them select every algorithm: MPICH's defaults (binomial broadcast, recursive doubling or
 * Bruck all-gather, Bruck or all-at-once all-to-all, recursive-doubling all-reduce), "long" (every switch at 0:
 * scatter plus ring broadcast, ring all-gather, pairwise all-to-all, ring all-reduce) and "medium" (scatter plus
 * recursive-doubling broadcast, Bruck all-gather everywhere, all-at-once all-to-all, Rabenseifner's all-reduce on
 * the power-of-two sizes and a ring on the others); and with each message of at least a byte (rendezvous) or 17
 * bytes (mixed) going by rendezvous, under the long and the default switches.
 */
class CollectiveVerbsTest {
    private static final int SLOT = 64;

    static Stream<Arguments> cases() {
        final List<Arguments> out = new ArrayList<>();
        for (final int p : Integer.getInteger("co.ranks") != null ? new int[] {Integer.getInteger("co.ranks")} : new int[] {2, 3, 4, 7, 8, 16, 64}) {
            out.add(Arguments.of(p, "mpich"));
            if (p <= 16) {
                out.add(Arguments.of(p, "long"));
                out.add(Arguments.of(p, "medium"));
                out.add(Arguments.of(p, "rendezvous"));
                out.add(Arguments.of(p, "mixed"));
            }
        }
        out.add(Arguments.of(64, "long"));
        return out.stream();
    }

    static Configuration tuning(final int p, final String name) {
        // 64 joins through one root take about 10 s on a quiet 2-core machine and over 30 s at a load of 40: a
        // generous join and step timeout
        final CollectiveTuning d = CollectiveTuning.DEFAULT.withTimeoutMs(p > 16 ? 120_000 : 20_000);
        // small slots so that messages travel in many chunks and credits run out
        final int slots = p > 16 ? 4 : 3;
        final CollectiveTuning t = switch (name) {
            case "mpich" -> d.withSlots(SLOT, slots);
            case "long" -> new CollectiveTuning(d.timeoutMs(), d.maxSize(), d.depth(), SLOT, slots, 0, 0, 2, 0, 0,
                0, 0, 2, 0, 0);
            case "rendezvous" -> new CollectiveTuning(d.timeoutMs(), d.maxSize(), d.depth(), SLOT, slots, 0, 0, 2,
                0, 0, 0, 0, 2, 0, 0, 1);
            case "mixed" -> d.withSlots(SLOT, slots).withRendezvousBytes(17);
            default -> new CollectiveTuning(d.timeoutMs(), d.maxSize(), d.depth(), SLOT, slots, 0, 1 << 30, 2,
                1 << 30, 0, 0, 1 << 30, 2, 0, Integer.MAX_VALUE);
        };
        return new Configuration().collectives(t);
    }

    private static byte val(final int rank, final int block, final int k) {
        return (byte) (rank * 31 + block * 7 + k * 3 + 1);
    }

    private static void fill(final MemorySegment m, final long off, final long len, final int rank,
                             final int block) {
        for (int k = 0; k < len; k++) {
            m.set(ValueLayout.JAVA_BYTE, off + k, val(rank, block, k));
        }
    }

    private static void check(final MemorySegment m, final long off, final long len, final int rank,
                              final int block, final String what) {
        for (int k = 0; k < len; k++) {
            assertEquals(val(rank, block, k), m.get(ValueLayout.JAVA_BYTE, off + k),
                what + ": block of rank " + rank + "/" + block + ", byte " + k);
        }
    }

    @ParameterizedTest(name = "p={0} {1}")
    @MethodSource("cases")
    void everyVerb(final int p, final String tuning) {
        try (Group g = new Group(p, tuning(p, tuning)).joined()) {
            everyVerbOn(g);
        }
    }

    /**
     * The same over shared memory (every member its own NIC on one group of the shared-memory link): the
     * collectives run on any link, the rendezvous's writes included.
     */
    @ParameterizedTest(name = "p={0} {1}")
    @CsvSource({"2,mpich", "3,rendezvous", "4,mixed", "4,long"})
    void everyVerbOverSharedMemory(final int p, final String tuning) {
        try (Group g = new Group(p, tuning(p, tuning), Tests.uniqueShmGroup("co")).joined()) {
            everyVerbOn(g);
        }
    }

    private static void everyVerbOn(final Group g) {
        final int p = g.p;
        barrier(g);
        bcast(g, p - 1, 100);
        bcast(g, 0, 0);
        scatter(g, 1 % p, 24);
        scatterv(g, p / 2);
        gather(g, p - 1, 16);
        gatherv(g, 0);
        allgather(g, 24);
        allgatherv(g);
        alltoall(g, 16);
        alltoallv(g);
        allreduce(g, ReduceOp.SUM, ReduceType.INT64, p + 3);
        allreduce(g, ReduceOp.BXOR, ReduceType.INT64, 3);
        allreduce(g, ReduceOp.MIN, ReduceType.FLOAT64, 2 * p + 1);
        reduce(g, p / 2, ReduceOp.MAX, ReduceType.INT64, p + 1);
        inFlight(g);
    }

    /**
     * {@code bcast} asks only LOCAL_READ of the root's buffer, so the long algorithms (scatter, then an all-gather
     * by recursive doubling or a ring) send nothing back to the root: it holds every block already. The root here
     * registers read-only memory (a write would fail its member with LOCAL_OP_ERR).
     */
    @ParameterizedTest
    @ValueSource(strings = {"long", "medium"})
    void aLongBroadcastNeverWritesTheRootsBuffer(final String name) {
        final int p = 5;
        final int root = 2;
        final int n = 1000;
        try (Group g = new Group(p, tuning(p, name)).joined()) {
            final MemorySegment source = g.arena.allocate(n, 64);
            for (int k = 0; k < n; k++) {
                source.set(ValueLayout.JAVA_BYTE, k, (byte) (k * 7 + 1));
            }
            final MemoryRegion[] mr = new MemoryRegion[p];
            for (int i = 0; i < p; i++) {
                mr[i] = i == root ? g.pds[i].regMr(source.asReadOnly(), Access.LOCAL_READ) : g.region(i, n);
                g.cos[i].bcast(1, root, Group.ds(mr[i], 0, n), 0);
            }
            g.expectAll(WcType.BCAST, n);
            for (int i = 0; i < p; i++) {
                for (int k = 0; k < n; k++) {
                    assertEquals(source.get(ValueLayout.JAVA_BYTE, k), mr[i].segment().get(ValueLayout.JAVA_BYTE, k),
                        "member " + i + ", byte " + k);
                }
            }
        }
    }

    @Test
    void segmentsInsideLargerRegionsMoveOnlyTheirBytes() {
        // Each member's source and destination lie 24 bytes into one region, between guard bytes: the group
        // keeps the region's memory and the segment's offset in it, and must touch exactly the segment.
        final int p = 3;
        final int n = 40;
        final int guard = 24;
        try (Group g = new Group(p, tuning(p, "mpich")).joined()) {
            final MemoryRegion[] mr = new MemoryRegion[p];
            for (int i = 0; i < p; i++) {
                mr[i] = g.region(i, guard + n + guard + (long) n * p + guard);
                mr[i].segment().fill((byte) 0x3C);
                fill(mr[i].segment(), guard, n, i, 0);
            }
            for (int i = 0; i < p; i++) {
                g.cos[i].allgather(30, Group.ds(mr[i], guard, n), Group.ds(mr[i], 2 * guard + n, n * p), 0);
            }
            g.expectAll(WcType.ALLGATHER, n * p);
            for (int i = 0; i < p; i++) {
                g.cos[i].bcast(31, 1, Group.ds(mr[i], guard, n), 0);
            }
            g.expectAll(WcType.BCAST, n);
            for (int i = 0; i < p; i++) {
                final MemorySegment m = mr[i].segment();
                check(m, guard, n, 1, 0, "bcast at " + i);
                for (int j = 0; j < p; j++) {
                    check(m, 2 * guard + n + (long) j * n, n, j, 0, "allgather at " + i);
                }
                for (final long[] span : new long[][] {{0, guard}, {guard + n, 2 * guard + n},
                    {2 * guard + n + (long) n * p, m.byteSize()}}) {
                    for (long k = span[0]; k < span[1]; k++) {
                        assertEquals((byte) 0x3C, m.get(ValueLayout.JAVA_BYTE, k), "guard byte " + k + " at " + i);
                    }
                }
            }
        }
    }

    static void barrier(final Group g) {
        for (int i = 0; i < g.p; i++) {
            g.cos[i].barrier(1, 0);
        }
        g.expectAll(WcType.BARRIER, 0);
    }

    static void bcast(final Group g, final int root, final int n) {
        final MemoryRegion[] mr = new MemoryRegion[g.p];
        for (int i = 0; i < g.p; i++) {
            mr[i] = g.region(i, n);
            if (i == root) {
                fill(mr[i].segment(), 0, n, root, 0);
            }
            g.cos[i].bcast(2, root, Group.ds(mr[i], 0, n), 0);
        }
        final WorkCompletion[] wc = g.expectAll(WcType.BCAST, n);
        for (int i = 0; i < g.p; i++) {
            assertEquals(n, wc[i].length());
            check(mr[i].segment(), 0, n, root, 0, "bcast at " + i);
        }
    }

    static void scatter(final Group g, final int root, final int blk) {
        final MemoryRegion src = g.region(root, (long) blk * g.p);
        for (int j = 0; j < g.p; j++) {
            fill(src.segment(), (long) j * blk, blk, root, j);
        }
        final MemoryRegion[] dst = new MemoryRegion[g.p];
        for (int i = 0; i < g.p; i++) {
            dst[i] = g.region(i, blk);
            g.cos[i].scatter(3, root, i == root ? Group.ds(src) : null, Group.ds(dst[i], 0, blk), 0);
        }
        g.expectAll(WcType.SCATTER, 0);
        for (int i = 0; i < g.p; i++) {
            check(dst[i].segment(), 0, blk, root, i, "scatter at " + i);
        }
    }

    static void scatterv(final Group g, final int root) {
        final DataSegment[] src = new DataSegment[g.p];
        final MemoryRegion[] dst = new MemoryRegion[g.p];
        for (int j = 0; j < g.p; j++) {
            final int len = 8 + 3 * j;
            final MemoryRegion m = g.region(root, len);
            fill(m.segment(), 0, len, root, j);
            src[j] = Group.ds(m, 0, len);
            dst[j] = g.region(j, len);
        }
        for (int i = 0; i < g.p; i++) {
            g.cos[i].scatterv(4, root, i == root ? src : null, Group.ds(dst[i], 0, 8 + 3 * i), 0);
        }
        g.expectAll(WcType.SCATTERV, 0);
        for (int i = 0; i < g.p; i++) {
            check(dst[i].segment(), 0, 8 + 3 * i, root, i, "scatterv at " + i);
        }
    }

    static void gather(final Group g, final int root, final int blk) {
        final MemoryRegion dst = g.region(root, (long) blk * g.p);
        for (int i = 0; i < g.p; i++) {
            final MemoryRegion src = g.region(i, blk);
            fill(src.segment(), 0, blk, i, 0);
            g.cos[i].gather(5, root, Group.ds(src, 0, blk), i == root ? Group.ds(dst) : null, 0);
        }
        g.expectAll(WcType.GATHER, 0);
        for (int j = 0; j < g.p; j++) {
            check(dst.segment(), (long) j * blk, blk, j, 0, "gather block " + j);
        }
    }

    static void gatherv(final Group g, final int root) {
        final DataSegment[] dst = new DataSegment[g.p];
        final MemoryRegion[] dm = new MemoryRegion[g.p];
        for (int j = 0; j < g.p; j++) {
            dm[j] = g.region(root, 1 + j);
            dst[j] = Group.ds(dm[j], 0, 1 + j);
        }
        for (int i = 0; i < g.p; i++) {
            final MemoryRegion src = g.region(i, 1 + i);
            fill(src.segment(), 0, 1 + i, i, 1);
            g.cos[i].gatherv(6, root, Group.ds(src, 0, 1 + i), i == root ? dst : null, 0);
        }
        g.expectAll(WcType.GATHERV, 0);
        for (int j = 0; j < g.p; j++) {
            check(dm[j].segment(), 0, 1 + j, j, 1, "gatherv block " + j);
        }
    }

    static void allgather(final Group g, final int blk) {
        final MemoryRegion[] dst = new MemoryRegion[g.p];
        for (int i = 0; i < g.p; i++) {
            final MemoryRegion src = g.region(i, blk);
            fill(src.segment(), 0, blk, i, 2);
            dst[i] = g.region(i, (long) blk * g.p);
            g.cos[i].allgather(7, Group.ds(src, 0, blk), Group.ds(dst[i]), 0);
        }
        g.expectAll(WcType.ALLGATHER, (long) blk * g.p);
        for (int i = 0; i < g.p; i++) {
            for (int j = 0; j < g.p; j++) {
                check(dst[i].segment(), (long) j * blk, blk, j, 2, "allgather at " + i);
            }
        }
    }

    static void allgatherv(final Group g) {
        final MemoryRegion[][] dst = new MemoryRegion[g.p][g.p];
        for (int i = 0; i < g.p; i++) {
            final DataSegment[] ds = new DataSegment[g.p];
            for (int j = 0; j < g.p; j++) {
                dst[i][j] = g.region(i, 5 + j);
                ds[j] = Group.ds(dst[i][j], 0, 5 + j);
            }
            fill(dst[i][i].segment(), 0, 5 + i, i, 3); // in place
            g.cos[i].allgatherv(8, null, ds, 0);
        }
        g.expectAll(WcType.ALLGATHERV, 0);
        for (int i = 0; i < g.p; i++) {
            for (int j = 0; j < g.p; j++) {
                check(dst[i][j].segment(), 0, 5 + j, j, 3, "allgatherv at " + i);
            }
        }
    }

    static void alltoall(final Group g, final int blk) {
        final MemoryRegion[] dst = new MemoryRegion[g.p];
        for (int i = 0; i < g.p; i++) {
            final MemoryRegion src = g.region(i, (long) blk * g.p);
            for (int j = 0; j < g.p; j++) {
                fill(src.segment(), (long) j * blk, blk, i, j);
            }
            dst[i] = g.region(i, (long) blk * g.p);
            g.cos[i].alltoall(9, Group.ds(src), Group.ds(dst[i]), 0);
        }
        g.expectAll(WcType.ALLTOALL, (long) blk * g.p);
        for (int i = 0; i < g.p; i++) {
            for (int j = 0; j < g.p; j++) {
                check(dst[i].segment(), (long) j * blk, blk, j, i, "alltoall at " + i);
            }
        }
    }

    private static int vlen(final int from, final int to) {
        return 1 + (from + 2 * to) % 5;
    }

    static void alltoallv(final Group g) {
        final MemoryRegion[][] dst = new MemoryRegion[g.p][g.p];
        for (int i = 0; i < g.p; i++) {
            final DataSegment[] s = new DataSegment[g.p];
            final DataSegment[] d = new DataSegment[g.p];
            for (int j = 0; j < g.p; j++) {
                final MemoryRegion m = g.region(i, vlen(i, j));
                fill(m.segment(), 0, vlen(i, j), i, j);
                s[j] = Group.ds(m, 0, vlen(i, j));
                dst[i][j] = g.region(i, vlen(j, i));
                d[j] = Group.ds(dst[i][j], 0, vlen(j, i));
            }
            g.cos[i].alltoallv(10, s, d, 0);
        }
        g.expectAll(WcType.ALLTOALLV, 0);
        for (int i = 0; i < g.p; i++) {
            for (int j = 0; j < g.p; j++) {
                check(dst[i][j].segment(), 0, vlen(j, i), j, i, "alltoallv at " + i);
            }
        }
    }

    private static long element(final int rank, final int e) {
        return (rank * 0x9E3779B97F4A7C15L + e * 0x632BE59BD9B4E019L) >> 20;
    }

    private static long combine(final ReduceOp op, final ReduceType type, final long a, final long b) {
        if (type == ReduceType.FLOAT64) {
            final double x = a;
            final double y = b;
            return Double.doubleToRawLongBits(switch (op) {
                case SUM -> x + y;
                case MIN -> Math.min(x, y);
                default -> Math.max(x, y);
            });
        }
        return switch (op) {
            case SUM -> a + b;
            case MIN -> Math.min(a, b);
            case MAX -> Math.max(a, b);
            case BAND -> a & b;
            case BOR -> a | b;
            case BXOR -> a ^ b;
        };
    }

    private static long expected(final int p, final ReduceOp op, final ReduceType type, final int e) {
        if (type == ReduceType.FLOAT64) {
            double acc = element(0, e);
            for (int j = 1; j < p; j++) {
                acc = Double.longBitsToDouble(combine(op, type, Double.doubleToRawLongBits(acc) == 0 ? 0 : 0, 0))
                    * 0 + switch (op) {
                        case SUM -> acc + element(j, e);
                        case MIN -> Math.min(acc, element(j, e));
                        default -> Math.max(acc, element(j, e));
                    };
            }
            return Double.doubleToRawLongBits(acc);
        }
        long acc = element(0, e);
        for (int j = 1; j < p; j++) {
            acc = combine(op, type, acc, element(j, e));
        }
        return acc;
    }

    private static void put(final MemorySegment m, final ReduceType type, final int rank, final int count) {
        for (int e = 0; e < count; e++) {
            if (type == ReduceType.FLOAT64) {
                m.setAtIndex(ValueLayout.JAVA_DOUBLE, e, element(rank, e));
            } else {
                m.setAtIndex(ValueLayout.JAVA_LONG, e, element(rank, e));
            }
        }
    }

    private static long got(final MemorySegment m, final ReduceType type, final int e) {
        return type == ReduceType.FLOAT64 ? Double.doubleToRawLongBits(m.getAtIndex(ValueLayout.JAVA_DOUBLE, e))
            : m.getAtIndex(ValueLayout.JAVA_LONG, e);
    }

    static void allreduce(final Group g, final ReduceOp op, final ReduceType type, final int count) {
        final MemoryRegion[] dst = new MemoryRegion[g.p];
        for (int i = 0; i < g.p; i++) {
            final MemoryRegion src = g.region(i, 8L * count);
            put(src.segment(), type, i, count);
            dst[i] = g.region(i, 8L * count);
            g.cos[i].allreduce(11, Group.ds(src), Group.ds(dst[i]), op, type, 0);
        }
        g.expectAll(WcType.ALLREDUCE, 8L * count);
        for (int i = 0; i < g.p; i++) {
            for (int e = 0; e < count; e++) {
                assertEquals(expected(g.p, op, type, e), got(dst[i].segment(), type, e),
                    "allreduce " + op + " at " + i + ", element " + e);
            }
        }
    }

    /** An all-reduce in place (no source): each member's buffer holds its values, then the result. */
    static void allreduceInPlace(final Group g, final ReduceOp op, final ReduceType type, final int count) {
        final MemoryRegion[] buf = new MemoryRegion[g.p];
        for (int i = 0; i < g.p; i++) {
            buf[i] = g.region(i, 8L * count);
            put(buf[i].segment(), type, i, count);
            g.cos[i].allreduce(13, null, Group.ds(buf[i]), op, type, 0);
        }
        g.expectAll(WcType.ALLREDUCE, 8L * count);
        for (int i = 0; i < g.p; i++) {
            for (int e = 0; e < count; e++) {
                assertEquals(expected(g.p, op, type, e), got(buf[i].segment(), type, e),
                    "allreduce in place " + op + " at " + i + ", element " + e);
            }
        }
    }

    static void reduce(final Group g, final int root, final ReduceOp op, final ReduceType type, final int count) {
        final MemoryRegion dst = g.region(root, 8L * count);
        for (int i = 0; i < g.p; i++) {
            final MemoryRegion src = g.region(i, 8L * count);
            put(src.segment(), type, i, count);
            g.cos[i].reduce(12, root, Group.ds(src), i == root ? Group.ds(dst) : null, op, type, 0);
        }
        g.expectAll(WcType.REDUCE, 8L * count);
        for (int e = 0; e < count; e++) {
            assertEquals(expected(g.p, op, type, e), got(dst.segment(), type, e), "reduce element " + e);
        }
    }

    /** Three collectives posted back to back complete in posting order on every member. */
    static void inFlight(final Group g) {
        final MemoryRegion[] b = new MemoryRegion[g.p];
        for (int i = 0; i < g.p; i++) {
            b[i] = g.region(i, 8L * g.p);
            b[i].segment().setAtIndex(ValueLayout.JAVA_LONG, 0, i + 1);
            g.cos[i].allreduce(20, null, Group.ds(b[i], 0, 8), ReduceOp.SUM, ReduceType.INT64, 0);
            g.cos[i].barrier(21, 0);
            g.cos[i].bcast(22, 0, Group.ds(b[i], 0, 8), 0);
        }
        g.expectAll(WcType.ALLREDUCE, 8);
        g.expectAll(WcType.BARRIER, 0);
        g.expectAll(WcType.BCAST, 8);
        for (int i = 0; i < g.p; i++) {
            assertEquals((long) g.p * (g.p + 1) / 2, b[i].segment().getAtIndex(ValueLayout.JAVA_LONG, 0));
        }
    }
}
