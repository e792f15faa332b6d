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
     * Takes part as the receiving (or, for one-sided operations, the target) end until all {@code total}
     * messages are in or, for one-sided operations, until the sender says it is done.
     *
     * @param total every message the sender will send, warm-up included
     * @param burst the sender's burst size
     * @param stop  the sender's end-of-test signal
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
