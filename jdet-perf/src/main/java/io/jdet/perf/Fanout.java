package io.jdet.perf;

/**
 * perftest's multi-QP shape of the bandwidth tests: {@code qps} queue pairs driven by {@code threads} threads at
 * each end, each thread driving {@code qps / threads} of them. The latency tests and the baselines keep one queue
 * pair or socket, as perftest's latency tests do.
 *
 * @param qps     queue pairs per bandwidth test, at least 1
 * @param threads threads driving them, dividing {@code qps}
 */
public record Fanout(int qps, int threads) {
    /** The most queue pairs a test may open at each end. */
    public static final int MAX_QPS = 64;
    /** One queue pair, one thread: the plain run. */
    public static final Fanout SINGLE = new Fanout(1, 1);

    /**
     * Validates the shape.
     *
     * @throws IllegalArgumentException if a count is out of range or the threads do not divide the queue pairs
     */
    public Fanout {
        if (qps < 1 || qps > MAX_QPS) {
            throw new IllegalArgumentException("--qps must be in [1, " + MAX_QPS + "]");
        }
        if (threads < 1 || threads > qps) {
            throw new IllegalArgumentException("--threads must be in [1, --qps] (--qps " + qps + ")");
        }
        if (qps % threads != 0) {
            throw new IllegalArgumentException("--threads " + threads + " does not divide --qps " + qps
                + ": each thread drives the same number of queue pairs");
        }
    }

    /**
     * The queue pairs each thread drives.
     *
     * @return {@code qps / threads}
     */
    public int qpsPerThread() {
        return qps / threads;
    }

    /**
     * Whether a bandwidth test runs on more than one queue pair or thread.
     *
     * @return false for {@link #SINGLE}
     */
    public boolean multi() {
        return qps > 1 || threads > 1;
    }
}
