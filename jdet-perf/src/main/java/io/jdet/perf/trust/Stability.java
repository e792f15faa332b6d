package io.jdet.perf.trust;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether a measurement agrees with itself. A step's measured iterations are run in two halves; the step is
 * unstable when the halves disagree by more than {@link #HALVES_LIMIT} times (something changed during it: the JIT
 * compiled its code, another process took the CPU) or when its best sample is more than {@link #SPREAD_LIMIT}
 * times better than its median (most samples were slowed down by something the fastest escaped). The client
 * re-measures an unstable step once; a step still unstable is marked unreliable in the summary.
 *
 * @param latency  whether the figures are one-way times (else message rates)
 * @param early    the early half's figure: median one-way microseconds, or MB/s; NaN if the step was too short to
 *                 halve
 * @param late     the late half's figure, in the same unit, or NaN
 * @param spread   the median sample over the best one: p50 over min of the one-way times, or the median burst's
 *                 time per message over the fastest burst's; NaN with fewer than two samples
 * @param attempts how many times the step was measured (the figures are the last attempt's)
 */
public record Stability(boolean latency, double early, double late, double spread, int attempts) {
    /** The most the two halves of a stable step may differ by, as a ratio. */
    public static final double HALVES_LIMIT = 1.5;
    /** The most the median sample may be slower than the best, as a ratio. */
    public static final double SPREAD_LIMIT = 3.0;
    /** Measurements of a step at most: the first, and one re-measurement if it was unstable. */
    public static final int MAX_ATTEMPTS = 2;

    /**
     * Judges a ping-pong from the one-way times of its two halves.
     *
     * @param early    the early half's one-way times, nanoseconds
     * @param late     the late half's
     * @param attempts which measurement of the step this is
     * @return the verdict
     */
    public static Stability ofLatency(final Histogram early, final Histogram late, final int attempts) {
        final Histogram all = early.copy();
        all.add(late);
        return new Stability(true, medianUs(early), medianUs(late), spread(all, 1), attempts);
    }

    /**
     * Judges a stream from its halves' rates and its bursts' times.
     *
     * @param earlyMbPerSec the early half's rate, or NaN if the measurement had fewer than two bursts
     * @param lateMbPerSec  the late half's rate, or NaN
     * @param bursts        each burst's nanoseconds per message
     * @param attempts      which measurement of the step this is
     * @return the verdict
     */
    public static Stability ofStream(final double earlyMbPerSec, final double lateMbPerSec, final Histogram bursts,
                                     final int attempts) {
        return new Stability(false, earlyMbPerSec, lateMbPerSec, spread(bursts, 2), attempts);
    }

    private static double medianUs(final Histogram histogram) {
        return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getValueAtPercentile(50) / 1e3;
    }

    /** The median over the best sample, or NaN with fewer samples than needed. */
    private static double spread(final Histogram histogram, final long fewest) {
        return histogram.getTotalCount() < fewest ? Double.NaN
            : (double) histogram.getValueAtPercentile(50) / Math.max(1, histogram.getMinValue());
    }

    /**
     * Why the step is unstable.
     *
     * @return the reasons, in words; empty for a stable step
     */
    public List<String> reasons() {
        final List<String> reasons = new ArrayList<>();
        if (early > 0 && late > 0 && Math.max(early, late) / Math.min(early, late) > HALVES_LIMIT) {
            reasons.add(String.format(Locale.ROOT, "its early and late halves disagree (%s vs %s %s)",
                figure(early), figure(late), latency ? "us median" : "MB/s"));
        }
        if (spread > SPREAD_LIMIT) {
            reasons.add(String.format(Locale.ROOT, latency ? "its median is %.1fx its min"
                : "its median burst is %.1fx slower than its fastest", spread));
        }
        return reasons;
    }

    /**
     * Whether the step is stable.
     *
     * @return true when {@link #reasons()} is empty
     */
    public boolean stable() {
        return reasons().isEmpty();
    }

    private static String figure(final double value) {
        return String.format(Locale.ROOT, value < 10 ? "%.2f" : value < 100 ? "%.1f" : "%.0f", value);
    }
}
