package io.jdet.perf.rig;

import org.HdrHistogram.Histogram;

/**
 * Runs a stream in phases (warm-up, then measured), each a run of bursts timed as a whole from the first post to
 * the last burst's delivery. Bursts start at multiples of the burst size, so that a receiver can tell where one
 * ends. Allocation free.
 */
public final class BandwidthRig {
    private BandwidthRig() {
    }

    /**
     * Sends messages {@code first} to {@code first + count - 1} in bursts.
     *
     * @param stream the transport
     * @param first  the first sequence number: a multiple of the burst
     * @param count  messages
     * @param burst  messages per burst
     * @return the wall time in nanoseconds
     * @throws IllegalArgumentException if {@code first} is not a multiple of the burst
     */
    public static long send(final Stream stream, final long first, final long count, final int burst) {
        return send(stream, first, count, burst, null);
    }

    /**
     * Sends messages {@code first} to {@code first + count - 1} in bursts and records each burst's time per
     * message, from which the peak rate (the fastest burst) and the spread of the bursts follow.
     *
     * @param stream       the transport
     * @param first        the first sequence number: a multiple of the burst
     * @param count        messages
     * @param burst        messages per burst
     * @param nsPerMessage receives one value per burst, its nanoseconds per message (at least 1); null records
     *                     nothing
     * @return the wall time in nanoseconds
     * @throws IllegalArgumentException if {@code first} is not a multiple of the burst
     */
    public static long send(final Stream stream, final long first, final long count, final int burst,
                            final Histogram nsPerMessage) {
        if (first % burst != 0) {
            throw new IllegalArgumentException("a phase starting at " + first + " is not on a burst of " + burst);
        }
        final long start = System.nanoTime();
        long before = start;
        long seq = first;
        final long end = first + count;
        while (seq < end) {
            final int n = (int) Math.min(burst, end - seq);
            stream.burst(seq, n);
            seq += n;
            if (nsPerMessage != null) {
                final long after = System.nanoTime();
                nsPerMessage.recordValue(Math.max(1, (after - before) / n));
                before = after;
            }
        }
        return System.nanoTime() - start;
    }
}
