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
 * The phases of every test, the same for jdet and the baselines. After a barrier, a short probe (a few hundred
 * round trips, or one burst); the client then tells the server how many more warm-up and measured iterations follow
 * (COUNT), both meet at a second barrier, and the rest of the warm-up and the measured iterations run. With
 * automatic iterations the client sizes them from the probe's pace, so that the warm-up takes at most about
 * {@link #WARM_BUDGET_NS} and the measurement {@link #MEASURE_BUDGET_NS}: the default run stays short even on a
 * slow link or a loaded machine. Sequence numbers run on across phases.
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
     * What follows the probe.
     *
     * @param warm  further warm-up iterations
     * @param count measured iterations
     */
    private record Sizing(long warm, long count) {
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
        final Sizing sizing = size(step, end, probe, LatencyRig.warm(pingPong, 0, probe), 1);
        side.send(Message.of("COUNT").with("warm", sizing.warm()).with("n", sizing.count()).build());
        side.barrier("measure");
        LatencyRig.warm(pingPong, probe, sizing.warm());
        final Histogram histogram = LatencyRig.newHistogram();
        final long ns = LatencyRig.measure(pingPong, probe + sizing.warm(), sizing.count(), histogram);
        return new LatencyResult(step.kind(), transport, step.size(), sizing.count(), probe + sizing.warm(), ns,
            pingPong.polls(), histogram);
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
        final Message count = side.expect("COUNT");
        side.barrier("measure");
        LatencyRig.respond(pingPong, probe, count.number("warm") + count.number("n"));
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
        final long probe = probe(step);
        side.barrier("start");
        final Sizing sizing = size(step, end, probe, BandwidthRig.send(stream, 0, probe, step.burst()),
            step.burst());
        side.send(Message.of("COUNT").with("warm", sizing.warm()).with("n", sizing.count()).build());
        side.barrier("measure");
        BandwidthRig.send(stream, probe, sizing.warm(), step.burst());
        final long ns = BandwidthRig.send(stream, probe + sizing.warm(), sizing.count(), step.burst());
        return new BandwidthResult(step.kind(), transport, step.size(), sizing.count(), probe + sizing.warm(),
            step.burst(), ns, stream.polls());
    }

    /**
     * The server's stream.
     *
     * @param step   the test and its counts
     * @param end    this end
     * @param stream the transport
     */
    static void receive(final Step step, final End end, final Stream stream) {
        final SideChannel side = end.side();
        final long probe = probe(step);
        stream.expect(probe);
        side.barrier("start");
        stream.receive(probe, step.burst(), side);
        final Message count = side.expect("COUNT");
        final long total = probe + count.number("warm") + count.number("n");
        stream.expect(total);
        side.barrier("measure");
        stream.receive(total, step.burst(), side);
    }

    /** The probe: part of the warm-up, a whole number of bursts for a stream. Both ends compute it alike. */
    private static long probe(final Step step) {
        return Math.min(step.warmup(), step.kind().latency() ? PROBE_ROUND_TRIPS : step.burst());
    }

    private static Sizing size(final Step step, final End end, final long probe, final long probeNs,
                               final int burst) {
        final long warm = step.warmup() - probe;
        if (!end.adaptive() || probe == 0) {
            return new Sizing(warm, step.iterations());
        }
        final long perIteration = Math.max(1, probeNs / probe);
        final long affordable = WARM_BUDGET_NS / perIteration / burst * burst;
        return new Sizing(Math.min(warm, affordable), Math.clamp(MEASURE_BUDGET_NS / perIteration,
            Math.min(MIN_MEASURED, step.iterations()), step.iterations()));
    }
}
