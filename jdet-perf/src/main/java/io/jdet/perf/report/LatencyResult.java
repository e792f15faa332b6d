package io.jdet.perf.report;

import io.jdet.perf.TestKind;
import org.HdrHistogram.Histogram;

/**
 * A ping-pong's figures: one-way times (half of each round trip) in an HdrHistogram, and det_perf's mean.
 *
 * @param kind       the test
 * @param transport  what carried it: {@code jdet/udp}, {@code jdet/loop}, {@code udp}, {@code tcp}
 * @param size       message size in bytes
 * @param iterations measured round trips
 * @param warmup     unmeasured round trips before them
 * @param elapsedNs  wall time of the measured round trips
 * @param polls      completion-queue polls or channel reads made by the measuring end
 * @param histogram  one-way times in nanoseconds, one per measured round trip
 */
public record LatencyResult(TestKind kind, String transport, int size, long iterations, long warmup,
                            long elapsedNs, long polls, Histogram histogram) implements Figure {

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
