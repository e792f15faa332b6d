package io.jdet.perf.collective;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.perf.PerfException;
import io.jdet.perf.TestKind;

import java.lang.foreign.Arena;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The members of one collective group in this JVM, each on its own NIC (UDP on loopback, or the in-process fabric),
 * driven by the calling thread alone: an operation is posted on every member in rank order, then every member is
 * polled in turn until each has completed it (jdet's progress is driven by the caller, so one thread suffices); or,
 * with {@link #threaded}, by a thread per member, each timing its own back-to-back operations as an MPI rank does.
 */
final class Members implements AutoCloseable {
    private static final long TAG_BASE = 0x5045_5246_0000L;
    private static int tags;

    final int p;
    private final Det det;
    private final Nic[] nics;
    private final ProtectionDomain[] pds;
    private final CompletionQueue[] cqs;
    private final Collective[] cos;
    private Arena arena;
    private final long timeoutMs;
    /** Idle polls between yields in {@link #awaitOne}, less one (0: yield after every empty poll). */
    private final int yieldMask;
    private final WorkCompletion[] wc = {new WorkCompletion()};
    private final boolean[] done;
    private MemoryRegion[] src;
    private MemoryRegion[] dst;
    private long id;

    /**
     * Opens and joins the group.
     *
     * @param nic       {@code loop} for the in-process fabric, else a UDP NIC name such as {@code udp:127.0.0.1}
     * @param p         members
     * @param config    the device configuration (its collective tunables choose the algorithms)
     * @param timeoutMs the longest any wait may last
     */
    Members(final String nic, final int p, final Configuration config, final long timeoutMs) {
        this.p = p;
        this.timeoutMs = timeoutMs;
        // Asked once: the JVM answers with a system call (and may read the cgroup's files), once per operation
        // it cost a member about as much as a receive.
        yieldMask = p >= Runtime.getRuntime().availableProcessors() ? 0 : 63;
        // Without JMX (the members' NICs are many and short-lived), unless -Djdet.jmx=true asks for them, so that
        // `jdet stat` can read their counters during a run.
        det = Det.open(config.jmx(Boolean.getBoolean(Configuration.JMX_PROP)));
        final EventQueue events = det.createEvent(null);
        nics = new Nic[p];
        pds = new ProtectionDomain[p];
        cqs = new CompletionQueue[p];
        cos = new Collective[p];
        done = new boolean[p];
        final long tag = TAG_BASE + ProcessHandle.current().pid() * 64 + nextTag();
        final String name = nic.startsWith("loop") ? "loop:co-perf-" + tag : nic;
        try {
            for (int i = 0; i < p; i++) {
                nics[i] = det.openNic(name, events);
                pds[i] = nics[i].allocPd();
                cqs[i] = nics[i].createCq(64, null);
                cos[i] = pds[i].createCollective(cqs[i]);
            }
            for (int i = 0; i < p; i++) {
                cos[i].join(++id, tag, p, i, nics[0].address(), 0);
            }
            awaitAll("join");
        } catch (final RuntimeException e) {
            close();
            throw e;
        }
    }

    private static synchronized int nextTag() {
        return ++tags;
    }

    /** Sizes every member's source and destination buffers for a test at a size. */
    void buffers(final TestKind kind, final int size) {
        final long in = switch (kind) {
            case CO_ALLGATHER -> size;
            case CO_ALLTOALL -> (long) size * p;
            default -> size;
        };
        final long out = switch (kind) {
            case CO_ALLGATHER, CO_ALLTOALL -> (long) size * p;
            default -> size;
        };
        release();
        arena = Arena.ofShared();
        src = new MemoryRegion[p];
        dst = new MemoryRegion[p];
        for (int i = 0; i < p; i++) {
            src[i] = pds[i].regMr(arena.allocate(Math.max(8, in), 64), Access.LOCAL_READ | Access.LOCAL_WRITE);
            dst[i] = pds[i].regMr(arena.allocate(Math.max(8, out), 64), Access.LOCAL_READ | Access.LOCAL_WRITE);
        }
    }

    /** Frees the buffers of the last {@link #buffers} (their memory too). */
    void release() {
        for (int i = 0; src != null && i < p; i++) {
            src[i].close();
            dst[i].close();
        }
        src = null;
        dst = null;
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }

    private static DataSegment ds(final MemoryRegion mr) {
        return new DataSegment(mr.address(), (int) mr.length(), mr.lKey());
    }

    /**
     * The sum over the members' NICs of a counter ({@link Nic#counters}), such as {@code frames.sent}.
     *
     * @param name the counter
     * @return its sum, 0 where a NIC does not count it
     */
    long counter(final String name) {
        long sum = 0;
        for (final Nic nic : nics) {
            sum += nic.counters().getOrDefault(name, 0L);
        }
        return sum;
    }

    /**
     * Runs one operation on every member and waits for all of them.
     *
     * @param kind the collective
     * @param root the root of a broadcast
     */
    void once(final TestKind kind, final int root) {
        id++;
        for (int i = 0; i < p; i++) {
            post(i, kind, root, id);
        }
        awaitAll(kind.label());
    }

    private void post(final int i, final TestKind kind, final int root, final long opId) {
        switch (kind) {
            case CO_BARRIER -> cos[i].barrier(opId, 0);
            case CO_BCAST -> cos[i].bcast(opId, root, ds(i == root ? src[i] : dst[i]), 0);
            case CO_ALLGATHER -> cos[i].allgather(opId, ds(src[i]), ds(dst[i]), 0);
            case CO_ALLTOALL -> cos[i].alltoall(opId, ds(src[i]), ds(dst[i]), 0);
            case CO_ALLREDUCE -> cos[i].allreduce(opId, ds(src[i]), ds(dst[i]), ReduceOp.SUM, ReduceType.INT64, 0);
            default -> throw new IllegalArgumentException(kind + " is not a collective");
        }
    }

    /**
     * Runs {@code warmup} then {@code iterations} operations (root 0) with a thread per member: each posts, polls
     * its own queue until its completion and goes on at once, timing its own loop of {@code iterations} after its
     * untimed {@code warmup} ones, as each rank of co_bench.c times its loop after its warm-up. (The one-thread
     * warm-up before does not compile this loop, nor teach the threads' polls to wait for each other.)
     *
     * @return the members' average microseconds per operation, averaged over the members
     * @throws PerfException if an operation fails or a wait runs out
     */
    double threaded(final TestKind kind, final long warmup, final long iterations) {
        final double[] avg = new double[p];
        final AtomicReference<String> error = new AtomicReference<>();
        final CyclicBarrier start = new CyclicBarrier(p);
        final long first = id + 1;
        final Thread[] threads = new Thread[p];
        for (int m = 0; m < p; m++) {
            final int i = m;
            threads[i] = Thread.ofPlatform().name("jdet-perf-member-" + i).start(() -> {
                try {
                    start.await(timeoutMs, TimeUnit.MILLISECONDS);
                    final WorkCompletion[] mine = {new WorkCompletion()};
                    long t0 = System.nanoTime();
                    for (long k = 0; k < warmup + iterations && error.get() == null; k++) {
                        if (k == warmup) {
                            t0 = System.nanoTime();
                        }
                        post(i, kind, 0, first + k);
                        awaitOne(i, mine, kind.label());
                    }
                    avg[i] = (System.nanoTime() - t0) / 1e3 / iterations;
                } catch (final InterruptedException | BrokenBarrierException | TimeoutException
                               | RuntimeException e) {
                    error.compareAndSet(null, "member " + i + ": " + e);
                    start.reset();
                }
            });
        }
        id += warmup + iterations;
        for (final Thread t : threads) {
            try {
                t.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PerfException("interrupted while the members ran", e);
            }
        }
        if (error.get() != null) {
            throw new PerfException(kind.label() + " with a thread per member failed: " + error.get());
        }
        double sum = 0;
        for (final double a : avg) {
            sum += a;
        }
        return sum / p;
    }

    /**
     * Polls member i's queue until one completion, a success, within the timeout. While idle it yields: after
     * every empty poll when the members are at least as many as the cores (the JVM's own threads then compete
     * with them, and a member that spins out its time slice holds up the one it waits for: on 2 vCPUs a 2-member
     * barrier took 6 or 39 µs by where the scheduler put the threads), as Open MPI's ranks yield whenever idle on
     * a full node; else after every 64, to check the deadline.
     */
    private void awaitOne(final int i, final WorkCompletion[] wc, final String what) {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int idle = 1; cqs[i].poll(wc) == 0; idle++) {
            if ((idle & yieldMask) == 0) {
                if ((idle & 63) == 0 && System.nanoTime() - deadline > 0) {
                    throw new PerfException(what + " at rank " + i + " did not complete within " + timeoutMs
                        + " ms");
                }
                Thread.yield();
            }
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            throw new PerfException(what + " failed at rank " + i + ": " + wc[0]);
        }
    }

    private void awaitAll(final String what) {
        java.util.Arrays.fill(done, false);
        int have = 0;
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (have < p) {
            for (int i = 0; i < p; i++) {
                if (!done[i] && cqs[i].poll(wc) == 1) {
                    if (wc[0].status() != WcStatus.SUCCESS) {
                        throw new PerfException(what + " failed at rank " + i + ": " + wc[0]);
                    }
                    done[i] = true;
                    have++;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new PerfException(what + " of " + p + " members did not complete within " + timeoutMs + " ms");
            }
        }
    }

    /** The first member's NIC address. */
    String address() {
        return nics[0].address();
    }

    @Override
    public void close() {
        release();
        for (final Collective co : cos) {
            if (co != null) {
                co.close();
            }
        }
        det.close();
    }
}
