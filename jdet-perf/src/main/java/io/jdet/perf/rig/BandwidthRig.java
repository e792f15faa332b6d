package io.jdet.perf.rig;

/**
 * Runs a stream: warm-up bursts, then measured bursts, timed as a whole from the first post to the last burst's
 * delivery. Allocation free.
 */
public final class BandwidthRig {
    private BandwidthRig() {
    }

    /**
     * The sending end.
     *
     * @param stream   the transport
     * @param warmup   unmeasured messages
     * @param messages measured messages
     * @param burst    messages per burst; bursts start at multiples of it, so receivers can tell where one ends
     * @return the measured part's wall time in nanoseconds
     * @throws IllegalArgumentException if the warm-up is not a whole number of bursts
     */
    public static long send(final Stream stream, final long warmup, final long messages, final int burst) {
        if (warmup % burst != 0) {
            throw new IllegalArgumentException("warm-up " + warmup + " is not a multiple of the burst " + burst);
        }
        sendRange(stream, 0, warmup, burst);
        final long start = System.nanoTime();
        sendRange(stream, warmup, messages, burst);
        return System.nanoTime() - start;
    }

    private static void sendRange(final Stream stream, final long first, final long count, final int burst) {
        long seq = first;
        final long end = first + count;
        while (seq < end) {
            final int n = (int) Math.min(burst, end - seq);
            stream.burst(seq, n);
            seq += n;
        }
    }
}
