package io.jdet.systest;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.MemoryRegion;
import io.jdet.ProtectionDomain;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

/**
 * Every collective verb run by one member of a group, each result checked against a plain computation of what the
 * other members (which run the same workload with their own rank) contributed. Sizes cross the switch points of
 * the default tunables for four members (binomial and long broadcast, recursive doubling and ring all-gather and
 * all-reduce, all-at-once and pairwise all-to-all). Throws {@link AssertionError} on a wrong result or a failed
 * completion.
 */
final class CollectiveWorkload implements AutoCloseable {
    private final Collective co;
    private final CompletionQueue cq;
    private final ProtectionDomain pd;
    private final Arena arena = Arena.ofShared();
    private final WorkCompletion[] wc = {new WorkCompletion()};
    private final int r;
    private final int p;
    private long id;

    CollectiveWorkload(final Collective co, final ProtectionDomain pd, final CompletionQueue cq) {
        this.co = co;
        this.pd = pd;
        this.cq = cq;
        this.r = co.rank();
        this.p = co.size();
    }

    /** Runs every verb; returns how many collectives completed. */
    long run() {
        barrier();
        for (final int n : new int[] {100, 20_000, 600_000}) {
            bcast(n % p, n);
        }
        scatter(2 % p, 1000);
        gather(3 % p, 1500);
        scatterv(0);
        gatherv(1 % p);
        for (final int block : new int[] {10, 3000, 200_000}) {
            allgather(block);
        }
        allgatherv();
        for (final int block : new int[] {8, 500, 40_000}) {
            alltoall(block);
        }
        alltoallv();
        for (final int count : new int[] {3, 100, 20_000}) {
            allreduceLong(ReduceOp.SUM, count);
        }
        allreduceLong(ReduceOp.BXOR, 700);
        allreduceMaxDouble(5000);
        reduceSum(p - 1, 4000);
        barrier();
        return id;
    }

    /** The byte member {@code rank} contributes at {@code at} of a buffer labelled {@code salt}. */
    static byte pattern(final int rank, final long at, final int salt) {
        return (byte) (rank * 31 + at * 7 + salt * 13 + (at >>> 9));
    }

    private MemoryRegion region(final long bytes) {
        final MemorySegment seg = arena.allocate(Math.max(bytes, 8), 64);
        return pd.regMr(seg, Access.LOCAL_READ | Access.LOCAL_WRITE);
    }

    private static DataSegment ds(final MemoryRegion mr, final long off, final long len) {
        return new DataSegment(mr.address() + off, (int) len, mr.lKey());
    }

    private MemoryRegion filled(final long bytes, final int rank, final int salt, final long base) {
        final MemoryRegion mr = region(bytes);
        for (long i = 0; i < bytes; i++) {
            mr.segment().set(ValueLayout.JAVA_BYTE, i, pattern(rank, base + i, salt));
        }
        return mr;
    }

    private static void check(final MemoryRegion mr, final long off, final long len, final int rank, final int salt,
                              final long base, final String what) {
        for (long i = 0; i < len; i++) {
            final byte got = mr.segment().get(ValueLayout.JAVA_BYTE, off + i);
            if (got != pattern(rank, base + i, salt)) {
                throw new AssertionError(what + ": byte " + (off + i) + " is " + got + ", expected "
                    + pattern(rank, base + i, salt) + " (from rank " + rank + ")");
            }
        }
    }

    private void await(final WcType type, final long length) {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (cq.poll(wc) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no " + type + " completion within 60 s at rank " + r + ": " + co);
            }
            Thread.onSpinWait();
        }
        final WorkCompletion c = wc[0];
        if (c.status() != WcStatus.SUCCESS || c.type() != type || c.id() != id || c.length() != length) {
            throw new AssertionError("rank " + r + " expected " + type + " id " + id + " length " + length
                + ", got " + c);
        }
    }

    private void barrier() {
        co.barrier(++id, 0);
        await(WcType.BARRIER, 0);
    }

    private void bcast(final int root, final int n) {
        final MemoryRegion mr = r == root ? filled(n, root, n, 0) : region(n);
        co.bcast(++id, root, ds(mr, 0, n), 0);
        await(WcType.BCAST, n);
        check(mr, 0, n, root, n, 0, "bcast " + n);
    }

    private void scatter(final int root, final int block) {
        final MemoryRegion src = r == root ? filled((long) block * p, root, 1, 0) : null;
        final MemoryRegion dst = region(block);
        co.scatter(++id, root, src == null ? null : ds(src, 0, (long) block * p), ds(dst, 0, block), 0);
        await(WcType.SCATTER, r == root ? (long) block * p : block);
        check(dst, 0, block, root, 1, (long) r * block, "scatter");
    }

    private void gather(final int root, final int block) {
        final MemoryRegion src = filled(block, r, 2, 0);
        final MemoryRegion dst = region((long) block * p);
        co.gather(++id, root, ds(src, 0, block), r == root ? ds(dst, 0, (long) block * p) : null, 0);
        await(WcType.GATHER, r == root ? (long) block * p : block);
        if (r == root) {
            for (int i = 0; i < p; i++) {
                check(dst, (long) i * block, block, i, 2, 0, "gather block " + i);
            }
        }
    }

    private static int vlen(final int i) {
        return 100 + 1000 * i;
    }

    private void scatterv(final int root) {
        final DataSegment[] src = new DataSegment[p];
        if (r == root) {
            for (int i = 0; i < p; i++) {
                src[i] = ds(filled(vlen(i), root, 3, (long) i << 20), 0, vlen(i));
            }
        }
        final MemoryRegion dst = region(vlen(r));
        co.scatterv(++id, root, r == root ? src : null, ds(dst, 0, vlen(r)), 0);
        await(WcType.SCATTERV, r == root ? total() : vlen(r));
        check(dst, 0, vlen(r), root, 3, (long) r << 20, "scatterv");
    }

    private long total() {
        long t = 0;
        for (int i = 0; i < p; i++) {
            t += vlen(i);
        }
        return t;
    }

    private void gatherv(final int root) {
        final MemoryRegion src = filled(vlen(r), r, 4, 0);
        final MemoryRegion[] dst = new MemoryRegion[p];
        final DataSegment[] ds = new DataSegment[p];
        for (int i = 0; i < p; i++) {
            dst[i] = region(vlen(i));
            ds[i] = ds(dst[i], 0, vlen(i));
        }
        co.gatherv(++id, root, ds(src, 0, vlen(r)), r == root ? ds : null, 0);
        await(WcType.GATHERV, r == root ? total() : vlen(r));
        if (r == root) {
            for (int i = 0; i < p; i++) {
                check(dst[i], 0, vlen(i), i, 4, 0, "gatherv from " + i);
            }
        }
    }

    private void allgather(final int block) {
        final MemoryRegion src = filled(block, r, 5, 0);
        final MemoryRegion dst = region((long) block * p);
        co.allgather(++id, ds(src, 0, block), ds(dst, 0, (long) block * p), 0);
        await(WcType.ALLGATHER, (long) block * p);
        for (int i = 0; i < p; i++) {
            check(dst, (long) i * block, block, i, 5, 0, "allgather " + block + " block " + i);
        }
    }

    private void allgatherv() {
        final MemoryRegion src = filled(vlen(r), r, 6, 0);
        final MemoryRegion[] dst = new MemoryRegion[p];
        final DataSegment[] ds = new DataSegment[p];
        for (int i = 0; i < p; i++) {
            dst[i] = region(vlen(i));
            ds[i] = ds(dst[i], 0, vlen(i));
        }
        co.allgatherv(++id, ds(src, 0, vlen(r)), ds, 0);
        await(WcType.ALLGATHERV, total());
        for (int i = 0; i < p; i++) {
            check(dst[i], 0, vlen(i), i, 6, 0, "allgatherv from " + i);
        }
    }

    private void alltoall(final int block) {
        // block j of rank i's source is labelled with its destination j: pattern(i, j << 24 + k)
        final MemoryRegion src = region((long) block * p);
        for (int j = 0; j < p; j++) {
            for (int k = 0; k < block; k++) {
                src.segment().set(ValueLayout.JAVA_BYTE, (long) j * block + k, pattern(r, ((long) j << 24) + k, 7));
            }
        }
        final MemoryRegion dst = region((long) block * p);
        co.alltoall(++id, ds(src, 0, (long) block * p), ds(dst, 0, (long) block * p), 0);
        await(WcType.ALLTOALL, (long) block * p);
        for (int i = 0; i < p; i++) {
            check(dst, (long) i * block, block, i, 7, (long) r << 24, "alltoall " + block + " from " + i);
        }
    }

    private static int pairLen(final int from, final int to) {
        return 50 + 300 * from + 70 * to;
    }

    private void alltoallv() {
        final DataSegment[] src = new DataSegment[p];
        final DataSegment[] dst = new DataSegment[p];
        final MemoryRegion[] in = new MemoryRegion[p];
        long received = 0;
        for (int j = 0; j < p; j++) {
            src[j] = ds(filled(pairLen(r, j), r, 8, (long) j << 24), 0, pairLen(r, j));
            in[j] = region(pairLen(j, r));
            dst[j] = ds(in[j], 0, pairLen(j, r));
            received += pairLen(j, r);
        }
        co.alltoallv(++id, src, dst, 0);
        await(WcType.ALLTOALLV, received);
        for (int i = 0; i < p; i++) {
            check(in[i], 0, pairLen(i, r), i, 8, (long) r << 24, "alltoallv from " + i);
        }
    }

    private static long element(final int rank, final int k) {
        return (rank + 1L) * 1_000_003L * (k + 1) ^ ((long) k << 40);
    }

    private void allreduceLong(final ReduceOp op, final int count) {
        final MemoryRegion src = region(8L * count);
        final MemoryRegion dst = region(8L * count);
        for (int k = 0; k < count; k++) {
            src.segment().setAtIndex(ValueLayout.JAVA_LONG, k, element(r, k));
        }
        co.allreduce(++id, ds(src, 0, 8L * count), ds(dst, 0, 8L * count), op, ReduceType.INT64, 0);
        await(WcType.ALLREDUCE, 8L * count);
        for (int k = 0; k < count; k++) {
            long want = element(0, k);
            for (int i = 1; i < p; i++) {
                want = op == ReduceOp.SUM ? want + element(i, k) : want ^ element(i, k);
            }
            final long got = dst.segment().getAtIndex(ValueLayout.JAVA_LONG, k);
            if (got != want) {
                throw new AssertionError("allreduce " + op + " " + count + ": element " + k + " is " + got
                    + ", expected " + want);
            }
        }
    }

    private static double real(final int rank, final int k) {
        return Math.sin(rank * 7.0 + k) * 1e6;
    }

    private void allreduceMaxDouble(final int count) {
        final MemoryRegion buf = region(8L * count);
        for (int k = 0; k < count; k++) {
            buf.segment().setAtIndex(ValueLayout.JAVA_DOUBLE, k, real(r, k));
        }
        co.allreduce(++id, null, ds(buf, 0, 8L * count), ReduceOp.MAX, ReduceType.FLOAT64, 0);
        await(WcType.ALLREDUCE, 8L * count);
        for (int k = 0; k < count; k++) {
            double want = real(0, k);
            for (int i = 1; i < p; i++) {
                want = Math.max(want, real(i, k));
            }
            final double got = buf.segment().getAtIndex(ValueLayout.JAVA_DOUBLE, k);
            if (Double.compare(got, want) != 0) {
                throw new AssertionError("allreduce max: element " + k + " is " + got + ", expected " + want);
            }
        }
    }

    private void reduceSum(final int root, final int count) {
        final MemoryRegion src = region(8L * count);
        final MemoryRegion dst = region(8L * count);
        for (int k = 0; k < count; k++) {
            src.segment().setAtIndex(ValueLayout.JAVA_LONG, k, element(r, k));
        }
        co.reduce(++id, root, ds(src, 0, 8L * count), ds(dst, 0, 8L * count), ReduceOp.SUM, ReduceType.INT64, 0);
        await(WcType.REDUCE, 8L * count);
        if (r == root) {
            for (int k = 0; k < count; k++) {
                long want = 0;
                for (int i = 0; i < p; i++) {
                    want += element(i, k);
                }
                if (dst.segment().getAtIndex(ValueLayout.JAVA_LONG, k) != want) {
                    throw new AssertionError("reduce: element " + k + " differs");
                }
            }
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
