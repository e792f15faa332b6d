package io.jdet.internal.link;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Process liveness from {@code /proc}: a process is named by its pid and its start time (field 22 of
 * {@code /proc/<pid>/stat}, clock ticks since boot), so a pid the kernel reused for another process does not count
 * as the old one alive. A zombie (killed, not yet reaped by its parent) counts as dead. Reads files and allocates:
 * for the control path and for rare checks only.
 */
final class ProcessStamp {
    /** This process's pid. */
    static final long PID = ProcessHandle.current().pid();
    /** This process's start time, or -1 if {@code /proc} cannot tell. */
    static final long START = startTime(PID);

    private ProcessStamp() {
    }

    /**
     * The start time of a live process.
     *
     * @param pid the pid
     * @return its start time in clock ticks since boot, or -1 if no such process runs (gone or a zombie)
     */
    static long startTime(final long pid) {
        if (pid <= 0) {
            return -1;
        }
        final String stat;
        try {
            stat = new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "stat")),
                StandardCharsets.US_ASCII);
        } catch (final IOException | SecurityException e) {
            return -1;
        }
        // The command name (field 2) is in parentheses and may hold spaces or parentheses: skip to the last ')'.
        final int close = stat.lastIndexOf(')');
        if (close < 0) {
            return -1;
        }
        final String[] fields = stat.substring(close + 1).trim().split(" ");
        if (fields.length < 20 || fields[0].equals("Z") || fields[0].equals("X")) {
            return -1;
        }
        try {
            return Long.parseLong(fields[19]); // field 22; fields[0] is field 3 (the state)
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Whether a process runs.
     *
     * @param pid   the pid
     * @param start its start time as {@link #startTime} gave it, or -1 to accept any process with that pid
     * @return true if it runs
     */
    static boolean alive(final long pid, final long start) {
        final long now = startTime(pid);
        return now >= 0 && (start < 0 || now == start);
    }
}
