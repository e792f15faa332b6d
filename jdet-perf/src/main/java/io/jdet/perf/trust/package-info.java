/**
 * Whether a run's figures can be trusted: the machine's load around each step ({@code /proc/loadavg},
 * {@code /proc/stat}, {@code /proc/pressure/cpu}), and the stability of each measurement (its early and late halves,
 * its best sample against its median).
 */
package io.jdet.perf.trust;
