package io.jdet.perf.report;

import io.jdet.perf.Sizes;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/**
 * The summary's table of multi-QP bandwidth tests ({@code --qps}, {@code --threads}): each test's aggregate (all
 * queue pairs' messages over the measurement's wall time, to the last thread's end) and, under it, each thread's
 * own messages over its own time. Printed only when such a test ran.
 */
public final class ThreadTable {
    private ThreadTable() {
    }

    /**
     * Prints the table.
     *
     * @param out     where
     * @param results the bandwidth figures, in the order measured
     */
    public static void print(final PrintWriter out, final List<BandwidthResult> results) {
        if (results.stream().allMatch(r -> r.threads().isEmpty())) {
            return;
        }
        out.printf("%nPer thread (each thread's messages over its own time; all = every queue pair's messages over "
            + "the measurement's wall time)%n%6s  %-13s%-10s%7s%5s%11s%12s%10s%10s%n", "size", "test", "transport",
            "thread", "QPs", "MB/s", "msgs/s", "us/msg", "msgs");
        for (final BandwidthResult r : results) {
            if (r.threads().isEmpty()) {
                continue;
            }
            out.println(row(r.size(), r.kind().label(), r.transport(), "all", r.qps(), r.mbPerSec(),
                r.messagesPerSec(), r.messages()));
            for (final ThreadShare share : r.threads()) {
                out.println(row(r.size(), r.kind().label(), r.transport(), Integer.toString(share.thread()),
                    share.qps(), share.mbPerSec(r.size()), share.messagesPerSec(), share.messages()));
            }
        }
    }

    private static String row(final int size, final String test, final String transport, final String thread,
                              final int qps, final double mbPerSec, final double messagesPerSec,
                              final long messages) {
        return String.format(Locale.ROOT, "%6s  %-13s%-10s%7s%5d%11.2f%12.0f%10.3f%10d", Sizes.format(size), test,
            transport, thread, qps, mbPerSec, messagesPerSec, 1e6 / messagesPerSec, messages);
    }
}
