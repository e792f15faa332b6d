package io.jdet.perf.rig;

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
        if (first % burst != 0) {
            throw new IllegalArgumentException("a phase starting at " + first + " is not on a burst of " + burst);
        }
        final long start = System.nanoTime();
        long seq = first;
        final long end = first + count;
        while (seq < end) {
            final int n = (int) Math.min(burst, end - seq);
            stream.burst(seq, n);
            seq += n;
        }
        return System.nanoTime() - start;
    }
}
