package io.jdet.perf.multi;

import io.jdet.perf.TestKind;
import io.jdet.perf.jdet.JdetQp;
import io.jdet.perf.jdet.JdetStream;
import io.jdet.perf.rig.Spinner;
import io.jdet.perf.rig.StopSignal;
import io.jdet.perf.rig.LatencyRig;
import org.HdrHistogram.Histogram;

/**
 * One thread's queue pairs in a multi-QP bandwidth test. The sender puts each burst on all its queue pairs before
 * it waits for any (as perftest's {@code -q} does), then waits for each; the receiver polls its queue pairs in turn
 * until each has what the phase brings, or, for one-sided operations, until the sender says the phase is over.
 * Counts its measured messages and time (its {@link io.jdet.perf.report.ThreadShare}). Used by one thread at a
 * time; allocation free in its loops.
 */
public final class Lane {
    private static final int STOP_CHECK_POLLS = 256;

    private final int index;
    private final JdetQp[] qps;
    private final JdetStream[] streams;
    private final long[] received;
    private final TestKind kind;
    private final Spinner spinner;
    private final Histogram bursts = LatencyRig.newHistogram();
    private long measuredMessages;
    private long measuredNs;

    /**
     * Takes one thread's queue pairs, each with its stream set up on it.
     *
     * @param index   the thread's index
     * @param qps     its queue pairs, connected
     * @param streams the stream of each (built on it, so that receives are routed through this lane's counts)
     * @param spinner the deadline of the round-robin receive loop
     */
    public Lane(final int index, final JdetQp[] qps, final JdetStream[] streams, final Spinner spinner) {
        if (qps.length == 0 || qps.length != streams.length) {
            throw new IllegalArgumentException("a lane needs one stream per queue pair, and at least one");
        }
        this.index = index;
        this.qps = qps.clone();
        this.streams = streams.clone();
        this.received = new long[qps.length];
        this.kind = qps[0].shape().kind();
        this.spinner = spinner;
        for (int i = 0; i < qps.length; i++) {
            final int slot = i;
            final JdetStream stream = streams[i];
            qps[i].sink(wc -> {
                received[slot]++;
                stream.onReceive(wc);
            });
        }
    }

    /**
     * Sends messages {@code first} to {@code first + count - 1} on each queue pair, in bursts.
     *
     * @param first    the first sequence number, on a burst boundary
     * @param count    messages per queue pair
     * @param burst    messages per burst
     * @param measured whether to count them and record each burst's time
     * @param threads  the crew's threads, to record a burst's time as the aggregate pace it stands for
     * @return this lane's wall time in nanoseconds
     */
    public long send(final long first, final long count, final int burst, final boolean measured,
                     final int threads) {
        final long start = System.nanoTime();
        long before = start;
        final long end = first + count;
        for (long seq = first; seq < end; seq += burst) {
            final int n = (int) Math.min(burst, end - seq);
            for (final JdetStream stream : streams) {
                stream.post(seq, n);
            }
            for (final JdetStream stream : streams) {
                stream.finish(seq, n);
            }
            if (measured) {
                final long after = System.nanoTime();
                bursts.recordValue(Math.max(1, (after - before) / ((long) n * streams.length * threads)));
                before = after;
            }
        }
        final long ns = System.nanoTime() - start;
        if (measured) {
            measuredMessages += count * streams.length;
            measuredNs += ns;
        }
        return ns;
    }

    /**
     * Gets each queue pair ready for messages up to {@code total} (posts receives).
     *
     * @param total the messages of the test so far per queue pair
     */
    public void expect(final long total) {
        for (final JdetStream stream : streams) {
            stream.expect(total);
        }
    }

    /**
     * Takes part as the receiving or target end of one phase.
     *
     * @param total the messages of the test so far per queue pair, this phase included
     * @param burst the sender's burst
     * @param stop  the end of the phase, for one-sided operations
     */
    public void receive(final long total, final int burst, final StopSignal stop) {
        if (streams.length == 1) {
            // One queue pair: its own loop, which also waits on the event queue in --wait mode.
            streams[0].receive(total, burst, stop);
            return;
        }
        spinner.waitingFor("the sender's " + kind.label() + " on " + streams.length + " queue pairs").reset();
        if (kind == TestKind.BW_SEND) {
            boolean all;
            do {
                all = true;
                int found = 0;
                for (int i = 0; i < qps.length; i++) {
                    if (received[i] < total) {
                        all = false;
                        found += qps[i].progress();
                    }
                }
                if (found == 0 && !all) {
                    spinner.idle();
                } else {
                    spinner.reset();
                }
            } while (!all);
            return;
        }
        long polls = 0;
        while (++polls % STOP_CHECK_POLLS != 0 || !stop.stopRequested()) {
            for (final JdetQp q : qps) {
                q.progress();
            }
            spinner.idle();
        }
        for (final JdetStream stream : streams) {
            // The stop is already given: each stream checks what the phase left in its buffers.
            stream.receive(total, burst, stop);
        }
    }

    /** Forgets the measured counts and burst times, before a measurement is taken (again). */
    public void resetMeasure() {
        measuredMessages = 0;
        measuredNs = 0;
        bursts.reset();
    }

    /**
     * Waits until every queue pair's work requests have completed.
     */
    public void drain() {
        for (final JdetQp q : qps) {
            q.awaitSends(0);
        }
    }

    /**
     * Completion-queue polls over the lane's queue pairs.
     *
     * @return the sum
     */
    public long polls() {
        long sum = 0;
        for (final JdetQp q : qps) {
            sum += q.polls();
        }
        return sum;
    }

    /**
     * The thread's index.
     *
     * @return from 0
     */
    public int index() {
        return index;
    }

    /**
     * The queue pairs it drives.
     *
     * @return the count
     */
    public int size() {
        return qps.length;
    }

    /**
     * Measured messages over its queue pairs since {@link #resetMeasure}.
     *
     * @return messages
     */
    public long measuredMessages() {
        return measuredMessages;
    }

    /**
     * Its own time over the measured phases since {@link #resetMeasure}.
     *
     * @return nanoseconds
     */
    public long measuredNs() {
        return measuredNs;
    }

    /**
     * Each measured burst's aggregate-equivalent nanoseconds per message.
     *
     * @return the histogram (owned by the lane)
     */
    public Histogram bursts() {
        return bursts;
    }
}
