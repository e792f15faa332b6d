package io.jdet.perf.report;

import io.jdet.perf.TestKind;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * det_perf's own lines, kept so its users can compare: {@code usec per msg, MB/s, Mb/s, pc=polls (total n)}.
 * Here {@code pc} counts the measuring end's completion-queue polls (channel reads for the baselines) during the
 * measured iterations, as det_perf's counts its timed loop's (the probe and warm-up left out), and {@code total}
 * its measured messages.
 */
public final class DetPerfFormat {
    private DetPerfFormat() {
    }

    /**
     * The heading of a size's block. det_perf ran one count for every test; here each test has its own, printed
     * as the {@code total} of its line.
     *
     * @param out   where
     * @param burst the burst the block's streams run with (det_perf's -B, cut to their count)
     * @param size  the size
     */
    public static void heading(final PrintWriter out, final int burst, final int size) {
        out.printf(Locale.ROOT, "%nDET Test Complete for buffer size %d (burst %d)%n", size, burst);
    }

    /**
     * A ping-pong's line.
     *
     * @param out    where
     * @param result the figures
     */
    public static void line(final PrintWriter out, final LatencyResult result) {
        print(out, result.kind(), result.usecPerMsg(), result.mbPerSec(), result.polls(), result.iterations());
    }

    /**
     * A stream's line.
     *
     * @param out    where
     * @param result the figures
     */
    public static void line(final PrintWriter out, final BandwidthResult result) {
        print(out, result.kind(), result.usecPerMsg(), result.mbPerSec(), result.polls(), result.messages());
    }

    private static void print(final PrintWriter out, final TestKind kind, final double usec, final double mbs,
                              final long polls, final long total) {
        out.printf(Locale.ROOT, "%-24s%8.2f usec per msg, %9.2f MB/s, %9.2f Mb/s, pc=%d (total %d)%n",
            kind.detPerfLabel(), usec, mbs, mbs * 8, polls, total);
        out.flush();
    }

    /**
     * The setup-cost lines.
     *
     * @param out     where
     * @param results the run's figures
     */
    public static void setupCosts(final PrintWriter out, final Results results) {
        if (results.setupCosts().isEmpty()) {
            return;
        }
        out.printf("%nSetup costs (median of repetitions, %s):%n", results.info().nicUsed());
        for (final SetupCost cost : results.setupCosts()) {
            if (cost.pages() > 0) {
                out.printf(Locale.ROOT, "%-13s%10.2f usec %d pages at %6.3f per-page%n", cost.name() + ":",
                    cost.usec(), cost.pages(), cost.usecPerPage());
            } else {
                out.printf(Locale.ROOT, "%-13s%10.2f usec%n", cost.name() + ":", cost.usec());
            }
        }
    }
}
