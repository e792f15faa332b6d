package io.jdet.perf.jdet;

import io.jdet.perf.TestKind;

/**
 * The queue and buffer sizes of one jdet test at one message size. Both ends compute it from the same inputs, so
 * they agree on buffer slots without telling each other.
 *
 * @param kind     the test
 * @param size     the message size (8 for the atomic)
 * @param slots    message slots in each buffer: messages cycle through them
 * @param sqDepth  send queue depth: the burst plus one, as det_perf
 * @param rqDepth  receive queue depth
 * @param receives receives to post before the test
 * @param cqSize   completion queue size
 */
public record QpShape(TestKind kind, int size, int slots, int sqDepth, int rqDepth, int receives, int cqSize) {
    /** The most bytes a bandwidth test's buffer may take: messages cycle through slots beyond it. */
    public static final long SLOT_BUDGET = 32L << 20;
    /** The deepest receive queue the tool asks for. */
    public static final int MAX_RECEIVES = 65_535;
    /** The largest completion queue a NIC allows. */
    public static final int MAX_CQ = 131_072;
    /** Receives a ping-pong keeps posted. */
    public static final int PING_RECEIVES = 4;

    /**
     * Computes the shape.
     *
     * @param kind     the test
     * @param size     the message size
     * @param burst    the burst
     * @param total    every message of the test, warm-up included
     * @param waitMode whether the run waits on events (a write ping-pong then uses write-with-immediate)
     * @return the shape
     */
    public static QpShape of(final TestKind kind, final int size, final int burst, final long total,
                             final boolean waitMode) {
        final int msg = kind.fixedSize() ? 8 : size;
        if (kind.latency()) {
            final boolean receives = kind == TestKind.LAT_SEND || waitMode;
            return new QpShape(kind, msg, PING_RECEIVES, 4, PING_RECEIVES, receives ? PING_RECEIVES : 0,
                16 + PING_RECEIVES);
        }
        final int slots = (int) Math.min(burst + 1L, Math.max(2, SLOT_BUDGET / msg));
        final int sq = burst + 1;
        if (kind == TestKind.BW_SEND) {
            // Every receive of the test is posted before its phase starts (up to the queue's limit): a receiving
            // thread descheduled on a loaded machine then cannot run the sender into receiver-not-ready.
            final int depth = Math.clamp(total, 1, MAX_RECEIVES);
            return new QpShape(kind, msg, slots, sq, depth, depth, Math.min(MAX_CQ, sq + depth + 16));
        }
        return new QpShape(kind, msg, slots, sq, 1, 0, sq + 16);
    }

    /**
     * The bytes of each buffer.
     *
     * @return slots times size
     */
    public long bufferBytes() {
        return (long) slots * size;
    }
}
