package io.jdet.perf;

import io.jdet.perf.jdet.JdetPeer;
import io.jdet.perf.jdet.SetupCosts;
import io.jdet.perf.report.BandwidthResult;
import io.jdet.perf.report.DetPerfFormat;
import io.jdet.perf.report.Figure;
import io.jdet.perf.report.LatencyResult;
import io.jdet.perf.report.Results;
import io.jdet.perf.report.RunInfo;
import io.jdet.perf.rig.Abort;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.report.FaultWords;
import io.jdet.perf.trust.LoadSample;
import io.jdet.perf.trust.ProcReader;
import io.jdet.perf.trust.StepLoad;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The active end: sends the run's settings, measures det_perf's setup costs, runs every step of the plan (printing
 * det_perf's lines size by size as they come, and sampling the machine's load before and after each step), and
 * collects the server's counters at the end.
 */
final class ClientDriver {
    /** Repetitions of the setup-cost sequence. */
    static final int SETUP_REPETITIONS = 15;

    private ClientDriver() {
    }

    /**
     * Runs the plan.
     *
     * @param config   the run's configuration
     * @param side     the side channel, connected
     * @param welcome  the server's answer to {@link #hello}
     * @param peer     this end's device and NIC
     * @param abort    the run's abort flag
     * @param out      where det_perf's lines go
     * @param progress where progress goes
     * @param plan     the steps to run
     * @return every figure
     */
    static Results run(final PerfConfig config, final SideChannel side, final Message welcome, final JdetPeer peer,
                       final Abort abort, final PrintWriter out, final Progress progress, final List<Step> plan) {
        final RunSettings settings = RunSettings.of(config);
        final int maxSize = maxSize(config);
        final RunInfo info = new RunInfo(config.role().name().toLowerCase(java.util.Locale.ROOT), peer.requested(),
            peer.opened(), peer.nic().address(), welcome.text("address"), peer.note(), config.modeName(),
            config.verify(), RunSettings.secureName(config.secure()), config.faults(), config.maxRd(), config.burst(),
            side.peerAddress().getHostAddress(),
            config.sizes(), config.tests().stream().map(TestKind::label).toList(), System.getProperty("java.vm.name")
            + " " + Runtime.version(), System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
            + System.getProperty("os.arch"), Runtime.getRuntime().availableProcessors(), Instant.now().toString());
        final Results results = new Results(info);
        out.printf("jdet perf: %s over %s (%s <-> %s), %s%s, security %s; tests %s; sizes %s%n", describe(config),
            peer.opened(), peer.nic().address(), welcome.text("address"), config.modeName(),
            config.verify() ? ", verifying received bytes" : "", info.secure(), String.join(",", info.tests()),
            config.sizes().stream().map(Sizes::format).collect(Collectors.joining(",")));
        if (config.faults().active()) {
            out.printf("faults injected by jdet's links: %s%n", FaultWords.describe(config.faults()));
            out.printf("(the baselines run without faults: jdet/baseline ratios compare unlike things)%n");
        }
        final ProcReader proc = ProcReader.system();
        final String busy = proc.sample().busy(info.cpus());
        if (busy != null) {
            out.printf("warning: the machine is busier than its cores before the run (%s): figures will be slower "
                + "and noisier than on a quiet machine%n", busy);
            results.warning("before the run: " + busy);
        }
        out.flush();
        results.setupCosts(SetupCosts.measure(peer.opened(), settings.deviceConfiguration(), SETUP_REPETITIONS));
        try (Arena arena = Arena.ofConfined()) {
            final End end = new End(side, peer, settings, new Pattern(arena, maxSize), abort,
                info.jdetTransport(), config.measureNs());
            int block = -1;
            for (final Step step : plan) {
                progress.step(step);
                final int blockSize = blockSize(config, step);
                if (blockSize != block) {
                    block = blockSize;
                    DetPerfFormat.heading(out, blockBurst(config, plan, blockSize), blockSize);
                }
                final LoadSample before = proc.sample();
                final Figure measured = run(step, end, config.fanout());
                final Figure figure = measured.withLoad(new StepLoad(before, proc.sample(), info.cpus()));
                results.add(figure);
                switch (figure) {
                    case LatencyResult latency -> DetPerfFormat.line(out, latency);
                    case BandwidthResult bandwidth -> DetPerfFormat.line(out, bandwidth);
                }
            }
        }
        side.send(Message.of("BYE").build());
        final Message counters = side.expect("COUNTERS");
        results.counters("client", peer.nic().counters());
        results.counters("server", counters.fields().keySet().stream()
            .collect(Collectors.toMap(key -> key, counters::number)));
        return results;
    }

    /** Runs a step; when it fails while the server has reported an error, the server's error is the one to show. */
    private static Figure run(final Step step, final End end, final Fanout fanout) {
        try {
            if (step.kind().jdet() && !step.kind().latency() && fanout.multi()) {
                return GroupStep.active(step, end, fanout);
            }
            return step.kind().jdet() ? JdetStep.active(step, end) : BaselineStep.active(step, end);
        } catch (final PerfException e) {
            if (end.side().stopRequested()) {
                end.side().receive();
            }
            throw e;
        }
    }

    /**
     * Sends the protocol's version and the run's settings and options, and waits for the server's NIC: the first
     * exchange, before this end opens its own.
     *
     * @param config the run's configuration
     * @param side   the side channel, connected
     * @return the server's WELCOME
     * @throws PerfException if the server refuses the client (another version, other run options) or speaks
     *                       another version
     */
    static Message hello(final PerfConfig config, final SideChannel side) {
        side.send(Message.of("HELLO").with("version", SideChannel.VERSION)
            .with(RunSettings.of(config).toMessage().fields()).with(RunOptions.of(config))
            .with("maxsize", maxSize(config)).build());
        final Message welcome = side.expect("WELCOME");
        side.checkVersion(welcome);
        return welcome;
    }

    private static int maxSize(final PerfConfig config) {
        return Math.max(8, Collections.max(config.sizes()));
    }

    /** The size whose det_perf block a step belongs to: the atomic (always 8 bytes) runs in the first block. */
    private static int blockSize(final PerfConfig config, final Step step) {
        return step.kind().fixedSize() ? config.sizes().get(0) : step.size();
    }

    /**
     * The burst a size's block runs its streams with: {@code --burst} cut to their count
     * ({@link PerfConfig#burst(long)}), the size-dependent streams' before the atomic's (each figure's own is in the
     * JSON); the burst asked for when the block has no stream.
     */
    private static int blockBurst(final PerfConfig config, final List<Step> plan, final int blockSize) {
        return plan.stream().filter(s -> !s.kind().latency() && blockSize(config, s) == blockSize)
            .min(java.util.Comparator.comparing((Step s) -> s.kind().fixedSize())).map(Step::burst)
            .orElse(config.burst());
    }

    private static String describe(final PerfConfig config) {
        return config.role() == PerfConfig.Role.EMBEDDED ? "server and client in one JVM" : "client";
    }
}
