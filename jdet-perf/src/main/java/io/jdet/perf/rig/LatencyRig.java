package io.jdet.perf.rig;

import org.HdrHistogram.Histogram;

/**
 * Runs a ping-pong in phases: unmeasured warm-up round trips, then measured ones, each timed on its own and
 * recorded as half the round trip (the one-way time) in nanoseconds. Sequence numbers run on across phases.
 * Allocation free.
 */
public final class LatencyRig {
    private LatencyRig() {
    }

    /**
     * Unmeasured round trips {@code first} to {@code first + count - 1}.
     *
     * @param pingPong the transport
     * @param first    the first sequence number
     * @param count    round trips
     * @return their wall time in nanoseconds (to size later phases)
     */
    public static long warm(final PingPong pingPong, final long first, final long count) {
        final long start = System.nanoTime();
        for (long seq = first; seq < first + count; seq++) {
            pingPong.roundTrip(seq);
        }
        return System.nanoTime() - start;
    }

    /**
     * Measured round trips {@code first} to {@code first + count - 1}.
     *
     * @param pingPong  the transport
     * @param first     the first sequence number (the warm-up's count)
     * @param count     round trips
     * @param histogram receives one one-way time (ns) per round trip
     * @return their wall time in nanoseconds
     */
    public static long measure(final PingPong pingPong, final long first, final long count,
                               final Histogram histogram) {
        final long start = System.nanoTime();
        long before = start;
        for (long i = 0; i < count; i++) {
            pingPong.roundTrip(first + i);
            final long after = System.nanoTime();
            histogram.recordValue(Math.max(1, (after - before) / 2));
            before = after;
        }
        return before - start;
    }

    /**
     * Both phases at once.
     *
     * @param pingPong   the transport
     * @param warmup     unmeasured round trips
     * @param iterations measured round trips
     * @param histogram  receives one one-way time (ns) per measured round trip
     * @return the measured part's wall time in nanoseconds
     */
    public static long initiate(final PingPong pingPong, final long warmup, final long iterations,
                                final Histogram histogram) {
        warm(pingPong, 0, warmup);
        return measure(pingPong, warmup, iterations, histogram);
    }

    /**
     * The responding end: echoes messages {@code first} to {@code first + count - 1}.
     *
     * @param pingPong the transport
     * @param first    the first sequence number
     * @param count    how many
     */
    public static void respond(final PingPong pingPong, final long first, final long count) {
        for (long seq = first; seq < first + count; seq++) {
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
