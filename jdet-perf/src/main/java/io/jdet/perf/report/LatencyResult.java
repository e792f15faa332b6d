package io.jdet.perf.report;

import io.jdet.perf.TestKind;
import io.jdet.perf.trust.Stability;
import io.jdet.perf.trust.StepLoad;
import org.HdrHistogram.Histogram;

/**
 * A ping-pong's figures: one-way times (half of each round trip) in an HdrHistogram, and det_perf's mean.
 *
 * @param kind       the test
 * @param transport  what carried it: {@code jdet/udp}, {@code jdet/loop}, {@code jdet/shm}, {@code jdet/eth},
 *                   {@code udp}, {@code tcp}, {@code aeron/udp}, {@code aeron/ipc}
 * @param size       message size in bytes
 * @param iterations measured round trips
 * @param warmup     unmeasured round trips before them
 * @param elapsedNs  wall time of the measured round trips
 * @param polls      completion-queue polls or channel reads made by the measuring end during the measured round
 *                   trips
 * @param histogram  one-way times in nanoseconds, one per measured round trip
 * @param stability  how the measurement's halves and spread compare
 * @param load       the machine's load around the step, or null where not sampled
 */
public record LatencyResult(TestKind kind, String transport, int size, long iterations, long warmup,
                            long elapsedNs, long polls, Histogram histogram, Stability stability, StepLoad load)
    implements Figure {

    @Override
    public LatencyResult withLoad(final StepLoad stepLoad) {
        return new LatencyResult(kind, transport, size, iterations, warmup, elapsedNs, polls, histogram, stability,
            stepLoad);
    }

    /**
     * The mean one-way time.
     *
     * @return microseconds
     */
    public double meanUs() {
        return histogram.getMean() / 1e3;
    }

    /**
     * The standard deviation of the one-way times.
     *
     * @return microseconds
     */
    public double stdevUs() {
        return histogram.getStdDeviation() / 1e3;
    }

    /**
     * det_perf's figure: wall time over twice the round trips.
     *
     * @return mean one-way microseconds
     */
    public double usecPerMsg() {
        return elapsedNs / 2.0 / iterations / 1e3;
    }

    /**
     * det_perf's MB/s: bytes per microsecond of one-way time.
     *
     * @return megabytes per second
     */
    public double mbPerSec() {
        return size / usecPerMsg();
    }

    /**
     * A percentile of the one-way time.
     *
     * @param percentile for example 99.9
     * @return microseconds
     */
    public double percentileUs(final double percentile) {
        return histogram.getValueAtPercentile(percentile) / 1e3;
    }

    /**
     * The fastest one-way time.
     *
     * @return microseconds
     */
    public double minUs() {
        return histogram.getMinValue() / 1e3;
    }

    /**
     * The slowest one-way time.
     *
     * @return microseconds
     */
    public double maxUs() {
        return histogram.getMaxValue() / 1e3;
    }
}
