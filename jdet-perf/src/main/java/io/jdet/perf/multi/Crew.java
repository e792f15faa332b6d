package io.jdet.perf.multi;

import io.jdet.perf.PerfException;
import io.jdet.perf.report.ThreadShare;
import io.jdet.perf.rig.Abort;
import io.jdet.perf.rig.LatencyRig;
import io.jdet.perf.rig.StopSignal;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads of one end of a multi-QP bandwidth test, one per {@link Lane}: each phase runs on all of them at
 * once, each lane at its own pace, and ends when the last is done. The caller's thread only hands out the phases
 * and waits (blocked, so that it takes no CPU from the lanes). A lane that fails raises the run's abort flag, so
 * that the others stop at their next idle poll instead of waiting out their deadline; the first failure is the
 * one reported.
 */
public final class Crew implements AutoCloseable {
    private static final AtomicInteger CREWS = new AtomicInteger();

    private final Lane[] lanes;
    private final Abort abort;
    private final long timeoutNs;
    private final ExecutorService pool;

    /**
     * Starts one thread per lane.
     *
     * @param lanes     the lanes, one per thread
     * @param abort     the run's abort flag
     * @param timeoutNs the longest a phase may go without any lane finishing it (beyond the lanes' own deadlines)
     */
    public Crew(final List<Lane> lanes, final Abort abort, final long timeoutNs) {
        this.lanes = lanes.toArray(Lane[]::new);
        this.abort = abort;
        this.timeoutNs = timeoutNs;
        final int crew = CREWS.incrementAndGet();
        final AtomicInteger n = new AtomicInteger();
        this.pool = Executors.newFixedThreadPool(this.lanes.length, task -> Thread.ofPlatform().daemon()
            .name("jdet-perf-crew" + crew + "-lane" + n.getAndIncrement()).unstarted(task));
    }

    /** One lane's work in a phase, returning its wall time. */
    @FunctionalInterface
    private interface Work {
        long run(Lane lane);
    }

    /**
     * Sends messages {@code first} to {@code first + count - 1} on every queue pair.
     *
     * @param first    the first sequence number, on a burst boundary
     * @param count    messages per queue pair
     * @param burst    messages per burst
     * @param measured whether the lanes count the phase in their figures
     * @return the phase's wall time, to the last lane's end
     * @throws PerfException if a lane fails or the phase outlasts its deadline
     */
    public long send(final long first, final long count, final int burst, final boolean measured) {
        return run(lane -> lane.send(first, count, burst, measured, lanes.length));
    }

    /**
     * Gets every lane ready for messages up to {@code total} per queue pair (on the caller's thread: posting
     * receives before the phase's barrier).
     *
     * @param total messages per queue pair so far
     */
    public void expect(final long total) {
        for (final Lane lane : lanes) {
            lane.expect(total);
        }
    }

    /**
     * Receives one phase on every lane. For one-sided operations the caller's thread waits for the sender's
     * end-of-phase signal on the side channel and passes it on to the lanes.
     *
     * @param total    messages per queue pair so far, this phase included
     * @param burst    the sender's burst
     * @param stop     the side channel's end-of-phase signal
     * @param oneSided whether the lanes wait for the signal (else for their messages)
     */
    public void receive(final long total, final int burst, final StopSignal stop, final boolean oneSided) {
        final Flag flag = new Flag();
        final List<Future<Long>> futures = start(lane -> {
            lane.receive(total, burst, flag);
            return 0;
        });
        if (oneSided) {
            if (!stop.awaitStop(timeoutNs)) {
                abort.raise();
            }
            flag.raise();
        }
        collect(futures);
    }

    /** Forgets every lane's measured counts, before a measurement. */
    public void resetMeasure() {
        for (final Lane lane : lanes) {
            lane.resetMeasure();
        }
    }

    /**
     * Each thread's part of the measurement since {@link #resetMeasure}.
     *
     * @return one per lane, in lane order
     */
    public List<ThreadShare> shares() {
        final List<ThreadShare> shares = new ArrayList<>();
        for (final Lane lane : lanes) {
            shares.add(new ThreadShare(lane.index(), lane.size(), lane.measuredMessages(), lane.measuredNs()));
        }
        return shares;
    }

    /**
     * Every lane's measured bursts, merged.
     *
     * @return a new histogram
     */
    public Histogram bursts() {
        final Histogram all = LatencyRig.newHistogram();
        for (final Lane lane : lanes) {
            all.add(lane.bursts());
        }
        return all;
    }

    /**
     * Completion-queue polls over every queue pair.
     *
     * @return the sum
     */
    public long polls() {
        long sum = 0;
        for (final Lane lane : lanes) {
            sum += lane.polls();
        }
        return sum;
    }

    /** Waits until every queue pair's work requests have completed, each lane on its own thread. */
    public void drain() {
        run(lane -> {
            lane.drain();
            return 0;
        });
    }

    /**
     * The queue pairs over all lanes.
     *
     * @return the count
     */
    public int qps() {
        int sum = 0;
        for (final Lane lane : lanes) {
            sum += lane.size();
        }
        return sum;
    }

    private long run(final Work work) {
        final long start = System.nanoTime();
        collect(start(work));
        return System.nanoTime() - start;
    }

    private List<Future<Long>> start(final Work work) {
        final List<Future<Long>> futures = new ArrayList<>(lanes.length);
        for (final Lane lane : lanes) {
            futures.add(pool.submit(() -> {
                try {
                    return work.run(lane);
                } catch (final RuntimeException | Error e) {
                    abort.raise();
                    throw e;
                }
            }));
        }
        return futures;
    }

    /** Waits for every lane; rethrows the first real failure (not a lane's "aborted" after another failed). */
    private void collect(final List<Future<Long>> futures) {
        RuntimeException first = null;
        RuntimeException aborted = null;
        final long deadline = System.nanoTime() + timeoutNs * 2;
        for (final Future<Long> future : futures) {
            try {
                future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (final ExecutionException e) {
                final RuntimeException failure = e.getCause() instanceof RuntimeException r ? r
                    : new PerfException("a lane failed: " + e.getCause(), e.getCause());
                final boolean secondary = String.valueOf(failure.getMessage()).startsWith("aborted");
                if (secondary) {
                    aborted = aborted == null ? failure : aborted;
                } else {
                    first = first == null ? failure : first;
                }
            } catch (final TimeoutException e) {
                abort.raise();
                first = first == null ? new PerfException("a lane did not finish its phase within "
                    + timeoutNs * 2 / 1_000_000 + " ms") : first;
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                abort.raise();
                first = first == null ? new PerfException("interrupted while the lanes ran") : first;
            }
        }
        if (first != null) {
            throw first;
        }
        if (aborted != null) {
            throw aborted;
        }
    }

    /** Stops the threads (they are idle between phases). */
    @Override
    public void close() {
        pool.shutdownNow();
    }

    /** The end of a phase as the lanes see it: raised by the caller's thread once the side channel signals. */
    private static final class Flag implements StopSignal {
        private volatile boolean raised;

        void raise() {
            raised = true;
        }

        @Override
        public boolean stopRequested() {
            return raised;
        }

        @Override
        public boolean awaitStop(final long timeoutNs) {
            final long deadline = System.nanoTime() + timeoutNs;
            while (!raised) {
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(50_000);
            }
            return true;
        }
    }
}
