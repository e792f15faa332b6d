package io.jdet.perf;

import io.jdet.perf.jdet.ConnectInfo;
import io.jdet.perf.jdet.JdetQp;
import io.jdet.perf.jdet.JdetStream;
import io.jdet.perf.jdet.QpShape;
import io.jdet.perf.multi.Crew;
import io.jdet.perf.multi.Lane;
import io.jdet.perf.report.BandwidthResult;
import io.jdet.perf.report.Figure;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.StopSignal;
import io.jdet.perf.rig.Stream;
import io.jdet.perf.trust.Stability;
import org.HdrHistogram.Histogram;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;

/**
 * One jdet bandwidth test at one size on several queue pairs driven by several threads at each end
 * ({@code --qps N --threads T}, as perftest's {@code -q}): the client's GROUP names the shape, both ends build N
 * queue pairs and swap their connect info (N INFO messages each way), and each end's {@link Crew} of T threads runs
 * N/T queue pairs per thread through the same phases as a one-QP test, every queue pair carrying the phase's count.
 * The figure is the aggregate (all queue pairs' messages over the phase's wall time, to the last thread's end),
 * with each thread's own messages and time beside it.
 */
final class GroupStep {
    private GroupStep() {
    }

    /**
     * The client's part: it measures.
     *
     * @param step   the test and its counts (per queue pair)
     * @param end    this end
     * @param fanout the queue pairs and threads
     * @return the aggregate figure with each thread's part
     */
    static Figure active(final Step step, final End end, final Fanout fanout) {
        final SideChannel side = end.side();
        side.send(Message.of("GROUP").with(step.toMessage("GROUP").fields()).with("qps", fanout.qps())
            .with("threads", fanout.threads()).build());
        final List<JdetQp> qps = open(step, end, fanout, true);
        try {
            for (final JdetQp q : qps) {
                side.send(Message.of("INFO").with(q.localInfo().toFields()).build());
            }
            for (final JdetQp q : qps) {
                q.connect(ConnectInfo.fromFields(side.expect("INFO").texts()).reachableFrom(end.peerHost()), true);
            }
            final Figure figure;
            try (Arena arena = Arena.ofShared(); Crew crew = crew(step, end, fanout, qps, true, arena)) {
                figure = send(step, end, crew, end.jdetTransport());
                crew.drain();
            }
            side.send(Message.of("END").build());
            side.expect("DONE");
            return figure;
        } finally {
            qps.forEach(JdetQp::close);
        }
    }

    /**
     * The server's part: it receives or serves.
     *
     * @param group the client's GROUP
     * @param end   this end
     */
    static void passive(final Message group, final End end) {
        final Step step = Step.of(group);
        final long qpCount = group.number("qps");
        final long threadCount = group.number("threads");
        if (qpCount < 1 || qpCount > Fanout.MAX_QPS || threadCount < 1 || threadCount > qpCount) {
            throw new PerfException("side channel: GROUP qps " + qpCount + " threads " + threadCount
                + ": --qps must be in [1, " + Fanout.MAX_QPS + "], --threads in [1, --qps]");
        }
        final Fanout fanout;
        try {
            fanout = new Fanout((int) qpCount, (int) threadCount);
        } catch (final IllegalArgumentException e) {
            throw new PerfException("side channel: GROUP " + e.getMessage(), e);
        }
        final SideChannel side = end.side();
        final List<JdetQp> qps = open(step, end, fanout, false);
        try {
            final List<ConnectInfo> remote = new ArrayList<>();
            for (int i = 0; i < qps.size(); i++) {
                remote.add(ConnectInfo.fromFields(side.expect("INFO").texts()));
            }
            for (final JdetQp q : qps) {
                side.send(Message.of("INFO").with(q.localInfo().toFields()).build());
            }
            for (int i = 0; i < qps.size(); i++) {
                qps.get(i).connect(remote.get(i).reachableFrom(end.peerHost()), false);
            }
            final long polls;
            try (Arena arena = Arena.ofShared(); Crew crew = crew(step, end, fanout, qps, false, arena)) {
                Phases.receive(step, end, new Receiver(crew, step));
                crew.drain();
                polls = crew.polls();
            }
            side.send(Message.of("DONE").with("polls", polls).build());
        } finally {
            qps.forEach(JdetQp::close);
        }
    }

    private static List<JdetQp> open(final Step step, final End end, final Fanout fanout, final boolean active) {
        final QpShape shape = QpShape.of(step.kind(), step.size(), step.burst(), step.total(),
            end.settings().waitMode());
        final List<JdetQp> qps = new ArrayList<>();
        try {
            for (int i = 0; i < fanout.qps(); i++) {
                qps.add(new JdetQp(end.peer(), shape, end.settings().waitMode(), end.settings().maxRd(),
                    end.spinner(step, active)));
            }
        } catch (final RuntimeException e) {
            qps.forEach(JdetQp::close);
            throw e;
        }
        return qps;
    }

    /**
     * The lanes and their threads. The end's pattern lives in its driver thread's confined arena, so the lanes
     * get a copy in a shared one.
     */
    private static Crew crew(final Step step, final End end, final Fanout fanout, final List<JdetQp> qps,
                             final boolean active, final Arena arena) {
        final Pattern pattern = new Pattern(arena, Math.max(8, step.size()));
        final List<Lane> lanes = new ArrayList<>();
        final int per = fanout.qpsPerThread();
        for (int t = 0; t < fanout.threads(); t++) {
            final JdetQp[] mine = qps.subList(t * per, (t + 1) * per).toArray(JdetQp[]::new);
            final JdetStream[] streams = new JdetStream[per];
            for (int i = 0; i < per; i++) {
                streams[i] = new JdetStream(mine[i], end.settings().verify(), pattern);
            }
            lanes.add(new Lane(t, mine, streams, end.spinner(step, active)));
        }
        return new Crew(lanes, end.abort(), end.settings().timeoutNs());
    }

    /**
     * The client's phases, as {@link Phases#send} runs them for one queue pair: probe, warm-up, and a measurement
     * in two halves, measured again once if unstable.
     */
    private static BandwidthResult send(final Step step, final End end, final Crew crew, final String transport) {
        final SideChannel side = end.side();
        final int burst = step.burst();
        final int qps = crew.qps();
        final long probe = Phases.probe(step);
        side.barrier("start");
        final long probeNs = crew.send(0, probe, burst, false);
        final Phases.Warmed warmed = Phases.warmUp(step, end, probe, probeNs, burst,
            (first, count) -> crew.send(first, count, burst, false));
        final long count = Phases.measureCount(step, end, warmed);
        long first = probe + warmed.count();
        for (int attempt = 1; ; attempt++) {
            Phases.announce(side, Phases.MEASURE, count);
            crew.resetMeasure();
            final long pollsBefore = crew.polls();
            final long half = Phases.earlyHalf(count, burst);
            final long earlyNs = half > 0 ? crew.send(first, half, burst, true) : 0;
            final long lateNs = crew.send(first + half, count - half, burst, true);
            final boolean halved = half > 0 && count - half > 0;
            final Histogram bursts = crew.bursts();
            final Stability stability = Stability.ofStream(
                halved ? Phases.mbPerSec(half * qps, step.size(), earlyNs) : Double.NaN,
                halved ? Phases.mbPerSec((count - half) * qps, step.size(), lateNs) : Double.NaN, bursts, attempt);
            if (stability.stable() || attempt == Stability.MAX_ATTEMPTS) {
                return new BandwidthResult(step.kind(), transport, step.size(), count * qps, first * qps, burst,
                    earlyNs + lateNs, crew.polls() - pollsBefore, bursts, stability, null, crew.shares());
            }
            first += count;
            final long pad = (burst - first % burst) % burst;
            if (pad > 0) {
                Phases.announce(side, Phases.WARM, pad);
                crew.send(first, pad, burst, false);
                first += pad;
            }
        }
    }

    /** The server's side of the phases: {@link Phases#receive} drives it as one stream. */
    private record Receiver(Crew crew, Step step) implements Stream {
        @Override
        public void burst(final long firstSeq, final int count) {
            throw new UnsupportedOperationException("the server of a multi-QP test only receives");
        }

        @Override
        public void expect(final long total) {
            crew.expect(total);
        }

        @Override
        public void receive(final long total, final int burst, final StopSignal stop) {
            crew.receive(total, burst, stop, step.kind() != io.jdet.perf.TestKind.BW_SEND);
        }

        @Override
        public long polls() {
            return crew.polls();
        }

        @Override
        public void close() {
            crew.close();
        }
    }
}
