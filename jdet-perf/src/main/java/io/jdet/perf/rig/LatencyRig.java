package io.jdet.perf.rig;

import org.HdrHistogram.Histogram;

/**
 * Runs a ping-pong: unmeasured warm-up round trips, then measured ones, each timed on its own and recorded as half
 * the round trip (the one-way time) in nanoseconds. Allocation free in the measured loop.
 */
public final class LatencyRig {
    private LatencyRig() {
    }

    /**
     * The initiating end.
     *
     * @param pingPong   the transport
     * @param warmup     unmeasured round trips
     * @param iterations measured round trips
     * @param histogram  receives one one-way time (ns) per measured round trip
     * @return the measured part's wall time in nanoseconds
     */
    public static long initiate(final PingPong pingPong, final long warmup, final long iterations,
                                final Histogram histogram) {
        for (long seq = 0; seq < warmup; seq++) {
            pingPong.roundTrip(seq);
        }
        final long start = System.nanoTime();
        long before = start;
        for (long i = 0; i < iterations; i++) {
            pingPong.roundTrip(warmup + i);
            final long after = System.nanoTime();
            histogram.recordValue(Math.max(1, (after - before) / 2));
            before = after;
        }
        return before - start;
    }

    /**
     * The responding end: echoes every message the initiator sends.
     *
     * @param pingPong the transport
     * @param total    warm-up plus measured round trips
     */
    public static void respond(final PingPong pingPong, final long total) {
        for (long seq = 0; seq < total; seq++) {
            pingPong.echo(seq);
        }
    }

    /**
     * A histogram for one-way times from 1 ns to an hour, 3 significant digits.
     *
     * @return the histogram
     */
    public static Histogram newHistogram() {
        return new Histogram(3_600_000_000_000L, 3);
    }
}
