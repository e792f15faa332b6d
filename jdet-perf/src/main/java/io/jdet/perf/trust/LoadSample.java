package io.jdet.perf.trust;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The machine's load at one instant. Fields the system does not provide (no {@code /proc}, a kernel without
 * pressure stall information) are NaN, -1 or null.
 *
 * @param nanoTime        {@link System#nanoTime()} when taken
 * @param load1           load average over 1 minute (runnable plus uninterruptible tasks), or NaN
 * @param load5           over 5 minutes, or NaN
 * @param load15          over 15 minutes, or NaN
 * @param runnable        tasks runnable at that instant (this run's busy threads included), or -1
 * @param cpu             CPU time since boot, or null
 * @param cpuWaitAvg10    share (%) of the last 10 s in which some runnable task waited for a CPU, or NaN
 * @param cpuWaitTotalUs  microseconds since boot in which some runnable task waited for a CPU, or -1
 */
public record LoadSample(long nanoTime, double load1, double load5, double load15, int runnable, CpuTimes cpu,
                         double cpuWaitAvg10, long cpuWaitTotalUs) {

    /**
     * A sample from the text of the three files; a missing (null) or malformed file leaves its fields unknown.
     *
     * @param nanoTime when it was read
     * @param loadavg  {@code /proc/loadavg}, for example {@code 0.99 0.47 0.19 2/148 6592}
     * @param stat     {@code /proc/stat}
     * @param pressure {@code /proc/pressure/cpu}, for example {@code some avg10=22.64 avg60=9.32 avg300=5.06
     *                 total=25554630}
     * @return the sample
     */
    public static LoadSample parse(final long nanoTime, final String loadavg, final String stat,
                                   final String pressure) {
        double l1 = Double.NaN;
        double l5 = Double.NaN;
        double l15 = Double.NaN;
        int runnable = -1;
        if (loadavg != null) {
            final String[] f = loadavg.trim().split("\\s+");
            try {
                if (f.length >= 3) {
                    l1 = Double.parseDouble(f[0]);
                    l5 = Double.parseDouble(f[1]);
                    l15 = Double.parseDouble(f[2]);
                }
                if (f.length >= 4 && f[3].indexOf('/') > 0) {
                    runnable = Integer.parseInt(f[3].substring(0, f[3].indexOf('/')));
                }
            } catch (final NumberFormatException e) {
                l1 = Double.NaN;
                l5 = Double.NaN;
                l15 = Double.NaN;
                runnable = -1;
            }
        }
        double avg10 = Double.NaN;
        long total = -1;
        if (pressure != null) {
            for (final String line : pressure.split("\n")) {
                if (line.startsWith("some ")) {
                    for (final String pair : line.substring(5).trim().split("\\s+")) {
                        try {
                            if (pair.startsWith("avg10=")) {
                                avg10 = Double.parseDouble(pair.substring(6));
                            } else if (pair.startsWith("total=")) {
                                total = Long.parseLong(pair.substring(6));
                            }
                        } catch (final NumberFormatException e) {
                            // A malformed value stays unknown.
                        }
                    }
                }
            }
        }
        return new LoadSample(nanoTime, l1, l5, l15, runnable, CpuTimes.parse(stat), avg10, total);
    }

    /**
     * Whether the machine is busier than its cores at this instant: its 1-minute load average exceeds the CPU
     * count, or some task waited for a CPU during at least {@link StepLoad#BUSY_WAIT_PERCENT}% of the last 10 s.
     *
     * @param cpus the processors available
     * @return why, in words, or null when it is not (or nothing could be read)
     */
    public String busy(final int cpus) {
        final List<String> reasons = new ArrayList<>();
        if (load1 > cpus) {
            reasons.add(String.format(Locale.ROOT, "load average %.2f on %d CPUs", load1, cpus));
        }
        if (cpuWaitAvg10 >= StepLoad.BUSY_WAIT_PERCENT) {
            reasons.add(String.format(Locale.ROOT, "some task waited for a CPU %.0f%% of the last 10 s",
                cpuWaitAvg10));
        }
        return reasons.isEmpty() ? null : String.join(", ", reasons);
    }
}
