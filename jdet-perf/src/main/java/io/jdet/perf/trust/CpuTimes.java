package io.jdet.perf.trust;

/**
 * The machine's CPU time since boot, summed over every CPU, from the first line of {@code /proc/stat}, in clock
 * ticks (USER_HZ, usually 1/100 s).
 *
 * @param user    user mode
 * @param nice    user mode at low priority
 * @param system  kernel mode
 * @param idle    idle
 * @param iowait  idle waiting for I/O
 * @param irq     hardware interrupts
 * @param softirq software interrupts
 * @param steal   time a hypervisor ran something else while this guest wanted the CPU
 */
public record CpuTimes(long user, long nice, long system, long idle, long iowait, long irq, long softirq,
                       long steal) {

    /**
     * Every tick counted.
     *
     * @return the sum of the fields
     */
    public long total() {
        return user + nice + system + idle + iowait + irq + softirq + steal;
    }

    /**
     * Ticks some CPU ran something (not idle, not waiting for I/O).
     *
     * @return busy ticks
     */
    public long busy() {
        return total() - idle - iowait;
    }

    /**
     * Parses {@code /proc/stat}.
     *
     * @param stat the file's text
     * @return its {@code cpu} line's times, or null if the text has no well-formed {@code cpu} line
     */
    public static CpuTimes parse(final String stat) {
        if (stat == null) {
            return null;
        }
        for (final String line : stat.split("\n")) {
            final String[] f = line.trim().split("\\s+");
            if (f.length >= 5 && "cpu".equals(f[0])) {
                try {
                    return new CpuTimes(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                        Long.parseLong(f[4]), field(f, 5), field(f, 6), field(f, 7), field(f, 8));
                } catch (final NumberFormatException e) {
                    return null;
                }
            }
        }
        return null;
    }

    /** A field old kernels lack (iowait came in 2.5.41, steal in 2.6.11) reads as 0. */
    private static long field(final String[] f, final int index) {
        return index < f.length ? Long.parseLong(f[index]) : 0;
    }
}
