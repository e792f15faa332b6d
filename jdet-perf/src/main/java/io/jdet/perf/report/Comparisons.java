package io.jdet.perf.report;

import io.jdet.perf.TestKind;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * jdet against its baselines: the ratios the summary prints for every size, and the three targets (reported,
 * never enforced). Latency ratios compare median one-way times (below 1: jdet is faster); bandwidth ratios compare
 * MB/s (above 1: jdet is faster). A ratio is only as good as its figures ({@link Ratio#trusted}), and with faults
 * injected it compares unlike things, so no target is judged then. The two targets against the socket baselines are
 * about jdet over UDP: on any other NIC (loop, shared memory, raw Ethernet) they are {@code n/a}.
 */
public final class Comparisons {
    /**
     * Every ratio the summary shows, in column order (the summary leaves out a column no size has): the Aeron
     * ones come after the socket ones, UDP beside jdet over a network link, IPC beside jdet on the in-process
     * fabric.
     */
    public static final List<Ratio> RATIOS = List.of(
        new Ratio(TestKind.LAT_SEND, TestKind.UDP_PINGPONG),
        new Ratio(TestKind.LAT_SEND, TestKind.TCP_PINGPONG),
        new Ratio(TestKind.LAT_WRITE, TestKind.UDP_PINGPONG),
        new Ratio(TestKind.BW_SEND, TestKind.UDP_STREAM),
        new Ratio(TestKind.BW_WRITE, TestKind.UDP_STREAM),
        new Ratio(TestKind.BW_READ, TestKind.UDP_STREAM),
        new Ratio(TestKind.BW_WRITE, TestKind.TCP_STREAM),
        new Ratio(TestKind.LAT_SEND, TestKind.AERON_UDP_PINGPONG),
        new Ratio(TestKind.BW_SEND, TestKind.AERON_UDP_STREAM),
        new Ratio(TestKind.BW_WRITE, TestKind.AERON_UDP_STREAM),
        new Ratio(TestKind.LAT_SEND, TestKind.AERON_IPC_PINGPONG),
        new Ratio(TestKind.BW_SEND, TestKind.AERON_IPC_STREAM),
        new Ratio(TestKind.BW_WRITE, TestKind.AERON_IPC_STREAM));

    /** The largest lat-send/udp-pingpong ratio the issue aims for. */
    public static final double SEND_VS_UDP_TARGET = 1.3;
    /** The smallest bw-write/udp-stream ratio the issue aims for at 64 KiB and above. */
    public static final double WRITE_VS_UDP_TARGET = 0.8;
    /** A target's status when a figure behind its verdict is unreliable: neither met nor not met. */
    public static final String UNSURE = "unsure";
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

        /**
         * Whether both figures behind the ratio at a size can be trusted ({@link Figure#trusted()}).
         *
         * @param results the run's figures
         * @param size    the size
         * @return false if either is unstable or was taken on a busy machine
         */
        public boolean trusted(final Results results, final int size) {
            final Optional<? extends Figure> a = jdet.latency() ? results.latency(jdet, size)
                : results.bandwidth(jdet, size);
            final Optional<? extends Figure> b = jdet.latency() ? results.latency(baseline, size)
                : results.bandwidth(baseline, size);
            return a.map(Figure::trusted).orElse(true) && b.map(Figure::trusted).orElse(true);
        }
    }

    /**
     * One of the targets as this run measured it.
     *
     * @param name    what it asks
     * @param status  {@code met}, {@code not met}, {@link #UNSURE} (a figure behind the verdict is unreliable) or
     *                {@code n/a} (also whenever faults were injected: jdet then carried a lossy link's work and the
     *                baselines did not)
     * @param details the figures behind the verdict, each marked {@code (unreliable)} where a figure behind it is
     * @param trusted false if some figure behind the verdict is unreliable (unstable, or taken on a busy machine)
     */
    public record Target(String name, String status, String details, boolean trusted) {
    }

    /**
     * The targets.
     *
     * @param results the run's figures
     * @return three targets, each with its status
     */
    public static List<Target> targets(final Results results) {
        final List<Target> targets = List.of(sendTarget(results), writeTarget(results), loopTarget(results)).stream()
            .map(t -> t.trusted() || "n/a".equals(t.status()) ? t
                : new Target(t.name(), UNSURE, t.details(), false)).toList();
        if (!results.info().faults().active()) {
            return targets;
        }
        return targets.stream().map(t -> new Target(t.name(), "n/a", "faults injected into jdet's links only: "
            + t.details(), t.trusted())).toList();
    }

    /**
     * Whether the ratios compare like with like: not when faults were injected, since only jdet's links inject
     * them.
     *
     * @param results the run's figures
     * @return false when faults were injected
     */
    public static boolean comparable(final Results results) {
        return !results.info().faults().active();
    }

    /**
     * Why a target about jdet over UDP cannot be judged on this run's NIC.
     *
     * @param results the run's figures
     * @return for example {@code "jdet ran on shm, not UDP: "}, or null when jdet ran over UDP
     */
    private static String notUdp(final Results results) {
        return results.info().onUdp() ? null
            : "jdet ran on " + results.info().jdetTransport().substring("jdet/".length()) + ", not UDP: ";
    }

    private static Target sendTarget(final Results results) {
        final String notUdp = notUdp(results);
        final StringBuilder details = new StringBuilder();
        boolean all = true;
        boolean any = false;
        boolean trusted = true;
        for (final int size : results.info().sizes()) {
            final OptionalDouble udp = RATIOS.get(0).at(results, size);
            final OptionalDouble tcp = RATIOS.get(1).at(results, size);
            if (udp.isPresent() && tcp.isPresent()) {
                any = true;
                all &= udp.getAsDouble() <= SEND_VS_UDP_TARGET && tcp.getAsDouble() < 1;
                final boolean ok = RATIOS.get(0).trusted(results, size) && RATIOS.get(1).trusted(results, size);
                trusted &= ok;
                details.append(String.format(Locale.ROOT, "%s: %.2fx udp, %.2fx tcp%s; ", label(size),
                    udp.getAsDouble(), tcp.getAsDouble(), ok ? "" : " (unreliable)"));
            }
        }
        return new Target("lat-send over UDP <= 1.3x udp-pingpong and below tcp-pingpong",
            !any || notUdp != null ? "n/a" : all ? "met" : "not met", (notUdp != null ? notUdp : "")
            + (any ? trim(details) : "not measured"), trusted);
    }

    private static Target writeTarget(final Results results) {
        final String notUdp = notUdp(results);
        final StringBuilder details = new StringBuilder();
        boolean all = true;
        boolean any = false;
        boolean trusted = true;
        for (final int size : results.info().sizes()) {
            final OptionalDouble udp = RATIOS.get(4).at(results, size);
            if (size >= 64 << 10 && udp.isPresent()) {
                any = true;
                all &= udp.getAsDouble() >= WRITE_VS_UDP_TARGET;
                final boolean ok = RATIOS.get(4).trusted(results, size);
                trusted &= ok;
                details.append(String.format(Locale.ROOT, "%s: %.2fx%s; ", label(size), udp.getAsDouble(),
                    ok ? "" : " (unreliable)"));
            }
        }
        return new Target("bw-write at >= 64K >= 0.8x udp-stream",
            !any || notUdp != null ? "n/a" : all ? "met" : "not met",
            (notUdp != null ? notUdp : "") + (any ? trim(details) : "no size >= 64K measured"), trusted);
    }

    private static Target loopTarget(final Results results) {
        final boolean loop = results.info().onLoop();
        final Optional<LatencyResult> best = results.latencies().stream().filter(r -> r.kind().jdet())
            .min(java.util.Comparator.comparingDouble(r -> r.percentileUs(50)));
        final boolean trusted = best.map(Figure::trusted).orElse(true);
        return new Target("in-process one-way latency < 1 us",
            !loop || best.isEmpty() ? "n/a" : best.get().percentileUs(50) < LOOP_LATENCY_TARGET_US ? "met"
                : "not met",
            !loop ? "run with --nic loop to measure it" : best.isEmpty() ? "no latency test ran"
                : String.format(Locale.ROOT, "best median %.3f us%s", best.get().percentileUs(50),
                    trusted ? "" : " (unreliable)"), trusted);
    }

    private static String label(final int size) {
        return io.jdet.perf.Sizes.format(size);
    }

    private static String trim(final StringBuilder text) {
        return text.length() >= 2 ? text.substring(0, text.length() - 2) : text.toString();
    }
}
