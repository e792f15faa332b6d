package io.jdet.perf;

import io.jdet.perf.report.BandwidthResult;
import io.jdet.perf.report.LatencyResult;
import io.jdet.perf.rig.BandwidthRig;
import io.jdet.perf.rig.LatencyRig;
import io.jdet.perf.rig.PingPong;
import io.jdet.perf.rig.Stream;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;

/**
 * The phases of every test, the same for jdet and the baselines: a short probe (a few hundred round trips, or one
 * burst), the rest of the warm-up, and the measurement. Before each phase after the probe, the client tells the
 * server how many iterations it has (COUNT) and both meet at a barrier. With automatic iterations the client sizes
 * the warm-up from the probe's pace and the measurement from the warm-up's, so that the warm-up takes at most about
 * {@link #WARM_BUDGET_NS} and the measurement {@link #MEASURE_BUDGET_NS}: the default run stays short even on a
 * slow link or a loaded machine, and a fast test still runs its full count. Sequence numbers run on across phases.
 */
final class Phases {
    /** The most warm-up time automatic sizing allows. */
    static final long WARM_BUDGET_NS = TimeUnit.MILLISECONDS.toNanos(300);
    /** The most measuring time automatic sizing aims for. */
    static final long MEASURE_BUDGET_NS = TimeUnit.MILLISECONDS.toNanos(600);
    /** The fewest measured iterations automatic sizing picks. */
    static final long MIN_MEASURED = 100;
    /** Round trips of a ping-pong's probe. */
    static final long PROBE_ROUND_TRIPS = 200;

    private Phases() {
    }

    /**
     * The client's ping-pong.
     *
     * @param step      the test and its counts (the most it may run)
     * @param end       this end
     * @param pingPong  the transport
     * @param transport the figure's transport label
     * @return the figures
     */
    static LatencyResult initiate(final Step step, final End end, final PingPong pingPong, final String transport) {
        final SideChannel side = end.side();
        final long probe = probe(step);
        side.barrier("start");
        final long probeNs = LatencyRig.warm(pingPong, 0, probe);
        final long warm = announce(side, "warm", warmCount(step, end, probe, probeNs, 1));
        final long warmNs = LatencyRig.warm(pingPong, probe, warm);
        final long count = announce(side, "measure", measureCount(step, end, probe, probeNs, warm, warmNs));
        final Histogram histogram = LatencyRig.newHistogram();
        final long ns = LatencyRig.measure(pingPong, probe + warm, count, histogram);
        return new LatencyResult(step.kind(), transport, step.size(), count, probe + warm, ns, pingPong.polls(),
            histogram);
    }

    /**
     * The server's ping-pong.
     *
     * @param step     the test and its counts
     * @param end      this end
     * @param pingPong the transport
     */
    static void respond(final Step step, final End end, final PingPong pingPong) {
        final SideChannel side = end.side();
        final long probe = probe(step);
        side.barrier("start");
        LatencyRig.respond(pingPong, 0, probe);
        final long warm = take(side, "warm");
        side.barrier("warm");
        LatencyRig.respond(pingPong, probe, warm);
        final long count = take(side, "measure");
        side.barrier("measure");
        LatencyRig.respond(pingPong, probe + warm, count);
    }

    /**
     * The client's stream.
     *
     * @param step      the test and its counts (the most it may run)
     * @param end       this end
     * @param stream    the transport
     * @param transport the figure's transport label
     * @return the figures
     */
    static BandwidthResult send(final Step step, final End end, final Stream stream, final String transport) {
        final SideChannel side = end.side();
        final int burst = step.burst();
        final long probe = probe(step);
        side.barrier("start");
        final long probeNs = BandwidthRig.send(stream, 0, probe, burst);
        final long warm = announce(side, "warm", warmCount(step, end, probe, probeNs, burst));
        final long warmNs = BandwidthRig.send(stream, probe, warm, burst);
        final long count = announce(side, "measure", measureCount(step, end, probe, probeNs, warm, warmNs));
        final long ns = BandwidthRig.send(stream, probe + warm, count, burst);
        return new BandwidthResult(step.kind(), transport, step.size(), count, probe + warm, burst, ns,
            stream.polls());
    }

    /**
     * The server's stream: it gets ready for each phase (posting receives) before the phase's barrier.
     *
     * @param step   the test and its counts
     * @param end    this end
     * @param stream the transport
     */
    static void receive(final Step step, final End end, final Stream stream) {
        final SideChannel side = end.side();
        long total = probe(step);
        stream.expect(total);
        side.barrier("start");
        stream.receive(total, step.burst(), side);
        for (final String phase : new String[] {"warm", "measure"}) {
            total += take(side, phase);
            stream.expect(total);
            side.barrier(phase);
            stream.receive(total, step.burst(), side);
        }
    }

    /** The probe: part of the warm-up, a whole number of bursts for a stream. Both ends compute it alike. */
    private static long probe(final Step step) {
        return Math.min(step.warmup(), step.kind().latency() ? PROBE_ROUND_TRIPS : step.burst());
    }

    private static long announce(final SideChannel side, final String phase, final long count) {
        side.send(Message.of("COUNT").with("phase", phase).with("n", count).build());
        side.barrier(phase);
        return count;
    }

    private static long take(final SideChannel side, final String phase) {
        final Message count = side.expect("COUNT");
        if (!phase.equals(count.text("phase"))) {
            throw new PerfException("side channel: expected the count of the " + phase + " phase, got "
                + count.text("phase"));
        }
        return count.number("n");
    }

    private static long warmCount(final Step step, final End end, final long probe, final long probeNs,
                                  final int burst) {
        final long rest = step.warmup() - probe;
        if (!end.adaptive() || probe == 0) {
            return rest;
        }
        final long perIteration = Math.max(1, probeNs / probe);
        return Math.min(rest, WARM_BUDGET_NS / perIteration / burst * burst);
    }

    private static long measureCount(final Step step, final End end, final long probe, final long probeNs,
                                     final long warm, final long warmNs) {
        if (!end.adaptive() || probe + warm == 0) {
            return step.iterations();
        }
        // The warm-up's pace, once the JIT has compiled the path; the probe's if the warm-up was too short.
        final long perIteration = Math.max(1, warm >= probe ? warmNs / warm : probeNs / probe);
        return Math.clamp(MEASURE_BUDGET_NS / perIteration, Math.min(MIN_MEASURED, step.iterations()),
            step.iterations());
    }
}
