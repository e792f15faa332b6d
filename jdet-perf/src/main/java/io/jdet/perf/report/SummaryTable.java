package io.jdet.perf.report;

import io.jdet.perf.Sizes;
import io.jdet.perf.trust.StepLoad;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * The end-of-run summary: latency percentiles with mean and standard deviation, average and peak bandwidths and
 * message rates, the machine's load around each step, jdet/baseline ratios for every size (marked where a figure
 * behind them is unreliable), the figures to distrust and why, and the targets as measured.
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
        ThreadTable.print(out, results.bandwidths());
        loads(out, results.figures());
        ratios(out, results);
        distrust(out, results);
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
        out.printf("%nLatency, one way (us); note: re-measured, UNSTABLE, busy (see \"Figures to distrust\")%n"
            + "%6s  %-19s%-10s%10s%10s%10s%10s%10s%10s%10s%9s  %s%n", "size", "test",
            "transport", "min", "p50", "mean", "stdev", "p99", "p99.9", "max", "iters", "note");
        for (final LatencyResult r : results) {
            out.println(String.format(Locale.ROOT, "%6s  %-19s%-10s%10s%10s%10s%10s%10s%10s%10s%9d  %s",
                Sizes.format(r.size()), r.kind().label(), r.transport(), number(r.minUs()), number(r.percentileUs(50)),
                number(r.meanUs()), number(r.stdevUs()), number(r.percentileUs(99)), number(r.percentileUs(99.9)),
                number(r.maxUs()), r.iterations(), note(r)).stripTrailing());
        }
    }

    private static void bandwidths(final PrintWriter out, final List<BandwidthResult> results) {
        if (results.isEmpty()) {
            return;
        }
        out.printf("%nBandwidth (average over the measurement; peak = the fastest burst)%n"
            + "%6s  %-19s%-10s%10s%10s%11s%11s%10s%8s%9s  %s%n", "size", "test", "transport", "MB/s", "peak MB/s",
            "msgs/s", "peak msg/s", "us/msg", "burst", "msgs", "note");
        for (final BandwidthResult r : results) {
            out.println(String.format(Locale.ROOT, "%6s  %-19s%-10s%10s%10s%11.0f%11.0f%10s%8d%9d  %s",
                Sizes.format(r.size()), r.kind().label(), r.transport(), number(r.mbPerSec()),
                number(r.peakMbPerSec()), r.messagesPerSec(), r.peakMessagesPerSec(), number(r.usecPerMsg()),
                r.burst(), r.messages(), note(r)).stripTrailing());
        }
    }

    private static void loads(final PrintWriter out, final List<Figure> figures) {
        if (figures.stream().allMatch(f -> f.load() == null)) {
            return;
        }
        out.printf("%nMachine load around each step: 1-minute load average before>after; cpu-wait = share of the "
            + "step some task waited for a CPU; steal = CPU time the hypervisor took; cpu-busy = share of all CPUs "
            + "in use%n%6s  %-19s%-10s%12s%10s%8s%10s%n", "size", "test", "transport", "load", "cpu-wait", "steal",
            "cpu-busy");
        for (final Figure f : figures) {
            final StepLoad load = f.load();
            if (load == null) {
                continue;
            }
            out.printf(Locale.ROOT, "%6s  %-19s%-10s%12s%10s%8s%10s%s%n", Sizes.format(f.size()), f.kind().label(),
                f.transport(), decimal(load.before().load1()) + ">" + decimal(load.after().load1()),
                percent(load.cpuWaitPercent()), percent(load.stealPercent()), percent(load.cpuBusyPercent()),
                load.busy() ? "  busy" : "");
        }
    }

    private static void ratios(final PrintWriter out, final Results results) {
        // The columns some size has a value in; the socket ones always (an empty table still names them).
        final List<Comparisons.Ratio> columns = Comparisons.RATIOS.stream().filter(r -> !r.baseline().aeron()
            || results.info().sizes().stream().anyMatch(size -> r.at(results, size).isPresent())).toList();
        final StringBuilder header = new StringBuilder(String.format("%6s", "size"));
        for (final Comparisons.Ratio ratio : columns) {
            header.append(String.format(" %17s", shortName(ratio)));
        }
        out.printf("%nSummary: jdet (%s) / baseline, same run; latency = median one-way (< 1 is faster), "
            + "bandwidth = MB/s (> 1 is faster)%n%s%n", results.info().jdetTransport(), header);
        boolean marked = false;
        for (final int size : results.info().sizes()) {
            final StringBuilder row = new StringBuilder(String.format("%6s", Sizes.format(size)));
            boolean any = false;
            for (final Comparisons.Ratio ratio : columns) {
                final OptionalDouble value = ratio.at(results, size);
                any |= value.isPresent();
                if (value.isPresent()) {
                    final boolean trusted = ratio.trusted(results, size);
                    marked |= !trusted;
                    row.append(String.format(Locale.ROOT, " %17s", String.format(Locale.ROOT,
                        value.getAsDouble() < 0.1 ? "%.3fx%s" : "%.2fx%s", value.getAsDouble(), trusted ? " " : "?")));
                } else {
                    row.append(String.format(" %17s", "- "));
                }
            }
            if (any) {
                out.println(row.toString().stripTrailing());
            }
        }
        if (marked) {
            out.println("  ? = a figure behind the ratio is unreliable (see \"Figures to distrust\")");
        }
        if (!Comparisons.comparable(results)) {
            out.printf("  These ratios compare unlike things: faults were injected into jdet's links only (%s), "
                + "the baselines ran on a clean link.%n", FaultWords.describe(results.info().faults()));
        }
    }

    /**
     * The figures to distrust: each unstable one with its reasons, then one line for those taken on a machine busier
     * than its cores (the load table has each step's figures), then the run's warnings.
     */
    private static void distrust(final PrintWriter out, final Results results) {
        final List<String> lines = new ArrayList<>();
        double lowLoad = Double.POSITIVE_INFINITY;
        double highLoad = Double.NEGATIVE_INFINITY;
        double wait = Double.NaN;
        double steal = Double.NaN;
        int busy = 0;
        int distrusted = 0;
        for (final Figure f : results.figures()) {
            final boolean loaded = f.load() != null && f.load().busy();
            distrusted += f.trusted() ? 0 : 1;
            if (!f.stability().stable()) {
                lines.add(String.format(Locale.ROOT, "%6s  %-12s %s%s%s", Sizes.format(f.size()), f.kind().label(),
                    f.stability().attempts() > 1 ? "unstable when measured again: " : "unstable: ",
                    String.join("; ", f.stability().reasons()), loaded ? " (on a busy machine)" : ""));
            }
            if (loaded) {
                busy++;
                for (final double load : new double[] {f.load().before().load1(), f.load().after().load1()}) {
                    lowLoad = Double.isNaN(load) ? lowLoad : Math.min(lowLoad, load);
                    highLoad = Double.isNaN(load) ? highLoad : Math.max(highLoad, load);
                }
                wait = Double.isNaN(wait) ? f.load().cpuWaitPercent() : Math.max(wait, f.load().cpuWaitPercent());
                steal = Double.isNaN(steal) ? f.load().stealPercent() : Math.max(steal, f.load().stealPercent());
            }
        }
        if (distrusted == 0 && results.warnings().isEmpty()) {
            return;
        }
        out.printf("%nFigures to distrust (%d of %d)%n", distrusted, results.figures().size());
        results.warnings().forEach(w -> out.println("  warning: " + w));
        lines.forEach(out::println);
        if (busy > 0) {
            final List<String> how = new ArrayList<>();
            if (highLoad >= lowLoad) {
                how.add(String.format(Locale.ROOT, "load average %.2f to %.2f on %d CPUs", lowLoad, highLoad,
                    results.info().cpus()));
            }
            if (!Double.isNaN(wait)) {
                how.add(String.format(Locale.ROOT, "some task waited for a CPU up to %.0f%% of a step", wait));
            }
            if (!Double.isNaN(steal)) {
                how.add(String.format(Locale.ROOT, "up to %.1f%% stolen", steal));
            }
            out.printf("  %d of %d steps ran on a machine busier than its cores (%s): their figures are slower and "
                + "noisier than a quiet machine's%n", busy, results.figures().size(), String.join(", ", how));
        }
    }

    /** What speaks against a figure, in a word or two; empty when nothing does. */
    private static String note(final Figure figure) {
        final List<String> notes = new ArrayList<>();
        if (figure.stability().attempts() > 1) {
            notes.add("re-measured");
        }
        if (!figure.stability().stable()) {
            notes.add("UNSTABLE");
        }
        if (figure.load() != null && figure.load().busy()) {
            notes.add("busy");
        }
        return String.join(", ", notes);
    }

    /** Three or more significant digits in at most 9 characters for anything below 10^9. */
    private static String number(final double value) {
        final String pattern = value < 1000 ? "%.2f" : value < 100_000 ? "%.1f" : "%.0f";
        return String.format(Locale.ROOT, pattern, value);
    }

    private static String decimal(final double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String percent(final double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.1f%%", value);
    }

    private static String shortName(final Comparisons.Ratio ratio) {
        return ratio.name().replace("-pingpong", "-pp").replace("-stream", "-st").replace("aeron-", "a-");
    }
}
