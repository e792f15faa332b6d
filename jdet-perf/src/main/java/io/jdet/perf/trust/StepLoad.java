package io.jdet.perf.trust;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The machine's load around one step: a sample before and after it, what happened between them, and whether the
 * machine was busier than its cores. It was when the 1-minute load average at either end exceeded the CPU count,
 * when some task waited for a CPU during at least {@link #BUSY_WAIT_PERCENT}% of the step
 * ({@code /proc/pressure/cpu}: this run's own threads count too, since a ping-pong's two ends and the JIT compiler
 * can crowd a small machine), or when the hypervisor stole at least {@link #BUSY_STEAL_PERCENT}% of the CPU time.
 *
 * @param before the sample before the step
 * @param after  the sample after it
 * @param cpus   the processors available to this JVM
 */
public record StepLoad(LoadSample before, LoadSample after, int cpus) {
    /** The share of a step some task may wait for a CPU before the machine counts as busy. */
    public static final double BUSY_WAIT_PERCENT = 10;
    /** The share of CPU time a hypervisor may steal before the machine counts as busy. */
    public static final double BUSY_STEAL_PERCENT = 5;

    /**
     * The share of the step in which some runnable task waited for a CPU (pressure stall information).
     *
     * @return percent of the wall time, or NaN where unknown
     */
    public double cpuWaitPercent() {
        final long wallNs = after.nanoTime() - before.nanoTime();
        if (before.cpuWaitTotalUs() < 0 || after.cpuWaitTotalUs() < 0 || wallNs <= 0) {
            return Double.NaN;
        }
        return Math.clamp((after.cpuWaitTotalUs() - before.cpuWaitTotalUs()) * 1e5 / wallNs, 0, 100);
    }

    /**
     * The share of the machine's CPU time the hypervisor stole during the step.
     *
     * @return percent, or NaN where unknown or when no tick passed
     */
    public double stealPercent() {
        return cpuShare(true);
    }

    /**
     * The share of the machine's CPU time that was busy (this run included) during the step.
     *
     * @return percent, or NaN where unknown or when no tick passed
     */
    public double cpuBusyPercent() {
        return cpuShare(false);
    }

    private double cpuShare(final boolean steal) {
        if (before.cpu() == null || after.cpu() == null) {
            return Double.NaN;
        }
        final long ticks = after.cpu().total() - before.cpu().total();
        if (ticks <= 0) {
            return Double.NaN;
        }
        final long part = steal ? after.cpu().steal() - before.cpu().steal() : after.cpu().busy() - before.cpu().busy();
        return Math.clamp(part * 100.0 / ticks, 0, 100);
    }

    /**
     * Why the machine was busier than its cores during the step.
     *
     * @return the reasons, in words; empty when it was not (or nothing could be read)
     */
    public List<String> busyReasons() {
        final List<String> reasons = new ArrayList<>();
        final double load = Math.max(nanToMinus(before.load1()), nanToMinus(after.load1()));
        if (load > cpus) {
            reasons.add(String.format(Locale.ROOT, "load average %.2f on %d CPUs", load, cpus));
        }
        final double wait = cpuWaitPercent();
        if (wait >= BUSY_WAIT_PERCENT) {
            reasons.add(String.format(Locale.ROOT, "some task waited for a CPU %.0f%% of the time", wait));
        }
        final double steal = stealPercent();
        if (steal >= BUSY_STEAL_PERCENT) {
            reasons.add(String.format(Locale.ROOT, "the hypervisor stole %.0f%% of the CPU time", steal));
        }
        return reasons;
    }

    /**
     * Whether the machine was busier than its cores during the step.
     *
     * @return true if {@link #busyReasons()} names a reason
     */
    public boolean busy() {
        return !busyReasons().isEmpty();
    }

    private static double nanToMinus(final double value) {
        return Double.isNaN(value) ? -1 : value;
    }
}
