package io.jdet.perf.rig;

/**
 * SPI of the bandwidth rig: one end of a one-way stream of messages sent in bursts. The sender calls
 * {@link #burst} for consecutive ranges of sequence numbers; the receiver calls {@link #receive} once. Both are
 * allocation free and throw {@link io.jdet.perf.PerfException} when a wait outlasts its deadline or data is wrong.
 */
public interface Stream extends AutoCloseable {

    /**
     * Sends messages {@code firstSeq} to {@code firstSeq + count - 1} and returns once they are delivered: the
     * burst's last completion (jdet) or the receiver's acknowledgement (baselines).
     *
     * @param firstSeq the first message's number
     * @param count    how many messages
     */
    void burst(long firstSeq, int count);

    /**
     * Gets ready for messages up to {@code total} (counted from the first of the test) before the sender starts
     * them, for example by posting receives. Called before each phase's barrier.
     *
     * @param total the messages of the test so far, this phase included
     */
    default void expect(final long total) {
    }

    /**
     * Takes part as the receiving (or, for one-sided operations, the target) end until {@code total} messages,
     * counted from the first of the test, are in or, for one-sided operations, until the sender signals the end
     * of the phase on the side channel. Called once per phase.
     *
     * @param total the messages of the test so far, this phase included
     * @param burst the sender's burst size
     * @param stop  the sender's end-of-phase signal
     */
    void receive(long total, int burst, StopSignal stop);

    /**
     * How many times this end polled or waited for completions so far (det_perf's {@code pc}).
     *
     * @return the count
     */
    long polls();

    @Override
    void close();
}
