package io.jdet.perf.report;

import io.jdet.perf.TestKind;
import io.jdet.perf.trust.Stability;
import io.jdet.perf.trust.StepLoad;
import org.HdrHistogram.Histogram;

/**
 * A stream's figures.
 *
 * @param kind      the test
 * @param transport what carried it: {@code jdet/} and the NIC's kind, {@code udp}, {@code tcp}, {@code aeron/udp},
 *                  {@code aeron/ipc}
 * @param size      message size in bytes (8 for the atomic)
 * @param messages  measured messages
 * @param warmup    unmeasured messages before them
 * @param burst     messages per burst
 * @param elapsedNs wall time of the measured messages, to the last burst's delivery
 * @param polls     completion-queue polls or channel reads made by the sending end during the measured messages
 * @param bursts    each measured burst's nanoseconds per message
 * @param stability how the measurement's halves and bursts compare
 * @param load      the machine's load around the step, or null where not sampled
 * @param threads   each thread's part when the test ran on several queue pairs or threads ({@code --qps},
 *                  {@code --threads}; then {@code messages} and {@code elapsedNs} are the aggregate over all of
 *                  them), else empty
 */
public record BandwidthResult(TestKind kind, String transport, int size, long messages, long warmup, int burst,
                              long elapsedNs, long polls, Histogram bursts, Stability stability, StepLoad load,
                              java.util.List<ThreadShare> threads)
    implements Figure {

    /** Copies the thread list. */
    public BandwidthResult {
        threads = java.util.List.copyOf(threads);
    }

    /**
     * A figure of one queue pair driven by one thread.
     *
     * @param kind      the test
     * @param transport what carried it
     * @param size      message size in bytes
     * @param messages  measured messages
     * @param warmup    unmeasured messages before them
     * @param burst     messages per burst
     * @param elapsedNs wall time of the measured messages
     * @param polls     polls made by the sending end
     * @param bursts    each measured burst's nanoseconds per message
     * @param stability how the measurement's halves and bursts compare
     * @param load      the machine's load around the step, or null
     */
    public BandwidthResult(final TestKind kind, final String transport, final int size, final long messages,
                           final long warmup, final int burst, final long elapsedNs, final long polls,
                           final Histogram bursts, final Stability stability, final StepLoad load) {
        this(kind, transport, size, messages, warmup, burst, elapsedNs, polls, bursts, stability, load,
            java.util.List.of());
    }

    @Override
    public BandwidthResult withLoad(final StepLoad stepLoad) {
        return new BandwidthResult(kind, transport, size, messages, warmup, burst, elapsedNs, polls, bursts,
            stability, stepLoad, threads);
    }

    /**
     * The queue pairs the test ran on.
     *
     * @return the sum over its threads, or 1
     */
    public int qps() {
        return threads.isEmpty() ? 1 : threads.stream().mapToInt(ThreadShare::qps).sum();
    }

    /**
     * The peak message rate: the fastest burst's (perftest's "peak"; the average is {@link #messagesPerSec()}).
     *
     * @return messages per second
     */
    public double peakMessagesPerSec() {
        return bursts.getTotalCount() == 0 ? messagesPerSec() : 1e9 / bursts.getMinValue();
    }

    /**
     * The peak byte rate: the fastest burst's.
     *
     * @return megabytes (10^6 bytes) per second
     */
    public double peakMbPerSec() {
        return peakMessagesPerSec() * size / 1e6;
    }

    /**
     * det_perf's figure.
     *
     * @return microseconds per message
     */
    public double usecPerMsg() {
        return elapsedNs / 1e3 / messages;
    }

    /**
     * The message rate.
     *
     * @return messages per second
     */
    public double messagesPerSec() {
        return messages * 1e9 / elapsedNs;
    }

    /**
     * The byte rate.
     *
     * @return megabytes (10^6 bytes) per second
     */
    public double mbPerSec() {
        return messagesPerSec() * size / 1e6;
    }
}
