package io.jdet.perf.report;

import io.jdet.perf.TestKind;

import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;

/**
 * jdet against its baselines: the ratios the summary prints for every size, and the three targets (reported,
 * never enforced). Latency ratios compare median one-way times (below 1: jdet is faster); bandwidth ratios compare
 * MB/s (above 1: jdet is faster).
 */
public final class Comparisons {
    /** Every ratio the summary shows, in column order. */
    public static final List<Ratio> RATIOS = List.of(
        new Ratio(TestKind.LAT_SEND, TestKind.UDP_PINGPONG),
        new Ratio(TestKind.LAT_SEND, TestKind.TCP_PINGPONG),
        new Ratio(TestKind.LAT_WRITE, TestKind.UDP_PINGPONG),
        new Ratio(TestKind.BW_SEND, TestKind.UDP_STREAM),
        new Ratio(TestKind.BW_WRITE, TestKind.UDP_STREAM),
        new Ratio(TestKind.BW_READ, TestKind.UDP_STREAM),
        new Ratio(TestKind.BW_WRITE, TestKind.TCP_STREAM));

    /** The largest lat-send/udp-pingpong ratio the issue aims for. */
    public static final double SEND_VS_UDP_TARGET = 1.3;
    /** The smallest bw-write/udp-stream ratio the issue aims for at 64 KiB and above. */
    public static final double WRITE_VS_UDP_TARGET = 0.8;
    /** The in-process one-way latency the issue aims below, in microseconds. */
    public static final double LOOP_LATENCY_TARGET_US = 1.0;

    private Comparisons() {
    }

    /**
     * One jdet test against one baseline.
     *
     * @param jdet     the jdet test
     * @param baseline the baseline
     */
    public record Ratio(TestKind jdet, TestKind baseline) {
        /**
         * The column heading.
         *
         * @return for example {@code lat-send/udp}
         */
        public String name() {
            return jdet.label() + "/" + baseline.label();
        }

        /**
         * The ratio at a size.
         *
         * @param results the run's figures
         * @param size    the size
         * @return jdet over baseline, if both were measured
         */
        public OptionalDouble at(final Results results, final int size) {
            if (jdet.latency()) {
                final var a = results.latency(jdet, size);
                final var b = results.latency(baseline, size);
                return a.isPresent() && b.isPresent()
                    ? OptionalDouble.of(a.get().percentileUs(50) / b.get().percentileUs(50)) : OptionalDouble.empty();
            }
            final var a = results.bandwidth(jdet, size);
            final var b = results.bandwidth(baseline, size);
            return a.isPresent() && b.isPresent()
                ? OptionalDouble.of(a.get().mbPerSec() / b.get().mbPerSec()) : OptionalDouble.empty();
        }
    }

    /**
     * One of the targets as this run measured it.
     *
     * @param name    what it asks
     * @param status  {@code met}, {@code not met} or {@code n/a}
     * @param details the figures behind the verdict
     */
    public record Target(String name, String status, String details) {
    }

    /**
     * The targets.
     *
     * @param results the run's figures
     * @return three targets, each with its status
     */
    public static List<Target> targets(final Results results) {
        return List.of(sendTarget(results), writeTarget(results), loopTarget(results));
    }

    private static Target sendTarget(final Results results) {
        final boolean loop = results.info().onLoop();
        final StringBuilder details = new StringBuilder();
        boolean all = true;
        boolean any = false;
        for (final int size : results.info().sizes()) {
            final OptionalDouble udp = RATIOS.get(0).at(results, size);
            final OptionalDouble tcp = RATIOS.get(1).at(results, size);
            if (udp.isPresent() && tcp.isPresent()) {
                any = true;
                all &= udp.getAsDouble() <= SEND_VS_UDP_TARGET && tcp.getAsDouble() < 1;
                details.append(String.format(Locale.ROOT, "%s: %.2fx udp, %.2fx tcp; ", label(size),
                    udp.getAsDouble(), tcp.getAsDouble()));
            }
        }
        return new Target("lat-send over UDP <= 1.3x udp-pingpong and below tcp-pingpong",
            !any || loop ? "n/a" : all ? "met" : "not met", (loop ? "jdet ran on loop, not UDP: " : "")
            + (any ? trim(details) : "not measured"));
    }

    private static Target writeTarget(final Results results) {
        final boolean loop = results.info().onLoop();
        final StringBuilder details = new StringBuilder();
        boolean all = true;
        boolean any = false;
        for (final int size : results.info().sizes()) {
            final OptionalDouble udp = RATIOS.get(4).at(results, size);
            if (size >= 64 << 10 && udp.isPresent()) {
                any = true;
                all &= udp.getAsDouble() >= WRITE_VS_UDP_TARGET;
                details.append(String.format(Locale.ROOT, "%s: %.2fx; ", label(size), udp.getAsDouble()));
            }
        }
        return new Target("bw-write at >= 64K >= 0.8x udp-stream", !any || loop ? "n/a" : all ? "met" : "not met",
            (loop ? "jdet ran on loop, not UDP: " : "") + (any ? trim(details) : "no size >= 64K measured"));
    }

    private static Target loopTarget(final Results results) {
        final boolean loop = results.info().onLoop();
        final OptionalDouble best = results.latencies().stream().filter(r -> r.kind().jdet())
            .mapToDouble(r -> r.percentileUs(50)).min();
        return new Target("in-process one-way latency < 1 us",
            !loop || best.isEmpty() ? "n/a" : best.getAsDouble() < LOOP_LATENCY_TARGET_US ? "met" : "not met",
            !loop ? "run with --nic loop to measure it" : best.isEmpty() ? "no latency test ran"
                : String.format(Locale.ROOT, "best median %.3f us", best.getAsDouble()));
    }

    private static String label(final int size) {
        return io.jdet.perf.Sizes.format(size);
    }

    private static String trim(final StringBuilder text) {
        return text.length() >= 2 ? text.substring(0, text.length() - 2) : text.toString();
    }
}
