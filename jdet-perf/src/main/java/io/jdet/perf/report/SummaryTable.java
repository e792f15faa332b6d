package io.jdet.perf.report;

import io.jdet.perf.Sizes;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * The end-of-run summary: latency percentiles, bandwidths, jdet/baseline ratios for every size, and the issue's
 * targets as measured.
 */
public final class SummaryTable {
    private SummaryTable() {
    }

    /**
     * Prints the summary.
     *
     * @param out     where
     * @param results the run's figures
     */
    public static void print(final PrintWriter out, final Results results) {
        latencies(out, results.latencies());
        bandwidths(out, results.bandwidths());
        ratios(out, results);
        out.printf("%nTargets (reported, not enforced):%n");
        for (final Comparisons.Target target : Comparisons.targets(results)) {
            out.printf("  %-62s %-8s %s%n", target.name(), target.status(), target.details());
        }
        out.flush();
    }

    private static void latencies(final PrintWriter out, final List<LatencyResult> results) {
        if (results.isEmpty()) {
            return;
        }
        out.printf("%nLatency, one way (us)%n%6s  %-13s%-10s%10s%10s%10s%10s%10s%9s%n", "size", "test", "transport",
            "min", "p50", "p99", "p99.9", "max", "iters");
        for (final LatencyResult r : results) {
            out.printf(Locale.ROOT, "%6s  %-13s%-10s%10s%10s%10s%10s%10s%9d%n", Sizes.format(r.size()),
                r.kind().label(), r.transport(), number(r.minUs()), number(r.percentileUs(50)),
                number(r.percentileUs(99)), number(r.percentileUs(99.9)), number(r.maxUs()), r.iterations());
        }
    }

    private static void bandwidths(final PrintWriter out, final List<BandwidthResult> results) {
        if (results.isEmpty()) {
            return;
        }
        out.printf("%nBandwidth%n%6s  %-13s%-10s%10s%10s%10s%8s%9s%n", "size", "test", "transport", "MB/s",
            "msgs/s", "us/msg", "burst", "msgs");
        for (final BandwidthResult r : results) {
            out.printf(Locale.ROOT, "%6s  %-13s%-10s%10s%10.0f%10s%8d%9d%n", Sizes.format(r.size()),
                r.kind().label(), r.transport(), number(r.mbPerSec()), r.messagesPerSec(), number(r.usecPerMsg()),
                r.burst(), r.messages());
        }
    }

    private static void ratios(final PrintWriter out, final Results results) {
        final StringBuilder header = new StringBuilder(String.format("%6s", "size"));
        for (final Comparisons.Ratio ratio : Comparisons.RATIOS) {
            header.append(String.format(" %17s", shortName(ratio)));
        }
        out.printf("%nSummary: jdet (%s) / baseline, same run; latency = median one-way (< 1 is faster), "
            + "bandwidth = MB/s (> 1 is faster)%n%s%n", results.info().jdetTransport(), header);
        for (final int size : results.info().sizes()) {
            final StringBuilder row = new StringBuilder(String.format("%6s", Sizes.format(size)));
            boolean any = false;
            for (final Comparisons.Ratio ratio : Comparisons.RATIOS) {
                final OptionalDouble value = ratio.at(results, size);
                any |= value.isPresent();
                row.append(value.isPresent() ? String.format(Locale.ROOT, " %16.2fx", value.getAsDouble())
                    : String.format(" %17s", "-"));
            }
            if (any) {
                out.println(row);
            }
        }
    }

    /** Three or more significant digits in at most 9 characters for anything below 10^9. */
    private static String number(final double value) {
        final String pattern = value < 1000 ? "%.2f" : value < 100_000 ? "%.1f" : "%.0f";
        return String.format(Locale.ROOT, pattern, value);
    }

    private static String shortName(final Comparisons.Ratio ratio) {
        return ratio.name().replace("-pingpong", "-pp").replace("-stream", "-st");
    }
}
