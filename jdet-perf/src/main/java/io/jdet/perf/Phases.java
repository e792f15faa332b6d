package io.jdet.perf;

import io.jdet.perf.report.BandwidthResult;
import io.jdet.perf.report.LatencyResult;
import io.jdet.perf.rig.BandwidthRig;
import io.jdet.perf.rig.LatencyRig;
import io.jdet.perf.rig.PingPong;
import io.jdet.perf.rig.Stream;
import io.jdet.perf.trust.Stability;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;

/**
 * The phases of every test, the same for jdet and the baselines: a short probe (a few hundred round trips, or one
 * burst), one or more warm-up chunks, and the measurement. Before each phase after the probe, the client tells the
 * server how many iterations it has (COUNT, naming the phase) and both meet at a barrier; the server just follows.
 *
 * <p>With automatic iterations the client sizes each phase from the pace of the one before: the warm-up takes about
 * {@link #WARM_BUDGET_NS}, or, in a test's first step, while the JIT compiles its path (and on two cores its
 * compiler threads compete with both busy ends), whole chunks of {@link #CHUNK_NS} until {@link #FIRST_WARM_NS}
 * has passed; the measurement aims at {@link #MEASURE_BUDGET_NS}. So the default run stays short on a slow link or a
 * loaded machine, and a fast test still runs its full count, or, for bandwidth, more if that would take less than
 * {@link #MIN_MEASURE_NS} ({@code --duration} replaces that aim and lifts the count's cap). Sequence numbers run on across phases. The client ends a step's phases with END; the server
 * follows whatever phases it announces, so the client may measure an unstable step again.
 */
final class Phases {
    /** The warm-up time of a step after its test's first. */
    static final long WARM_BUDGET_NS = TimeUnit.MILLISECONDS.toNanos(300);
    /**
     * The warm-up time of a test's first step: long enough for C2 to compile the test's path although two
     * busy-polling ends leave the compiler thread little CPU on a 2-core machine. With 0.6 s the first test of a
     * run measured tier-3 code at 2-3 times its steady-state latency (ruled in by -XX:TieredStopAtLevel=1, which
     * made the penalty vanish); with 2.5 s the default run takes about 33 s.
     */
    static final long FIRST_WARM_NS = TimeUnit.MILLISECONDS.toNanos(2500);
    /** The length of one warm-up chunk of a first step, so that each is sized from a recent pace. */
    static final long CHUNK_NS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The measuring time automatic sizing aims for without {@code --duration}. */
    static final long MEASURE_BUDGET_NS = TimeUnit.MILLISECONDS.toNanos(600);
    /** The fewest measured iterations automatic sizing picks. */
    static final long MIN_MEASURED = 100;
    /**
     * The shortest bandwidth measurement automatic sizing picks, above a test's full count if need be: 20 bursts of
     * 8-byte messages take 5 ms on the fabric, about one time slice of the scheduler, and on 2 vCPUs the steps after
     * a test's first measured 0.5 M msg/s in every burst where 0.1 s of the same messages measured 4.2 to 4.6 M.
     */
    static final long MIN_MEASURE_NS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Round trips of a ping-pong's probe. */
    static final long PROBE_ROUND_TRIPS = 200;
    static final String WARM = "warm";
    static final String MEASURE = "measure";

    private Phases() {
    }

    /** Runs iterations {@code first} to {@code first + count - 1} unmeasured and returns their wall time. */
    @FunctionalInterface
    interface Runner {
        long run(long first, long count);
    }

    /**
     * The warm-up as run.
     *
     * @param count          warm-up iterations after the probe
     * @param nsPerIteration the pace of the last chunk (or the probe)
     */
    record Warmed(long count, long nsPerIteration) {
    }

    /**
     * The client's ping-pong. The measurement runs in two halves, each into its own histogram, so that its
     * {@link Stability} can be judged; an unstable one is measured again once (the discarded round trips count as
     * warm-up).
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
        final Warmed warmed = warmUp(step, end, probe, probeNs, 1,
            (first, count) -> LatencyRig.warm(pingPong, first, count));
        final long count = measureCount(step, end, warmed);
        long first = probe + warmed.count();
        for (int attempt = 1; ; attempt++) {
            announce(side, MEASURE, count);
            // pc counts the measured round trips' polls only, as det_perf's does its timed loop's.
            final long pollsBefore = pingPong.polls();
            final Histogram early = LatencyRig.newHistogram();
            final Histogram late = LatencyRig.newHistogram();
            final long half = count / 2;
            final long ns = LatencyRig.measure(pingPong, first, half, early)
                + LatencyRig.measure(pingPong, first + half, count - half, late);
            final Stability stability = Stability.ofLatency(early, late, attempt);
            if (stability.stable() || attempt == Stability.MAX_ATTEMPTS) {
                final Histogram all = early.copy();
                all.add(late);
                return new LatencyResult(step.kind(), transport, step.size(), count, first, ns,
                    pingPong.polls() - pollsBefore, all, stability, null);
            }
            first += count;
        }
    }

    /**
     * The server's ping-pong: it echoes each phase the client announces, until the client's END.
     *
     * @param step     the test and its counts
     * @param end      this end
     * @param pingPong the transport
     */
    static void respond(final Step step, final End end, final PingPong pingPong) {
        final SideChannel side = end.side();
        long total = probe(step);
        side.barrier("start");
        LatencyRig.respond(pingPong, 0, total);
        for (Message count = nextPhase(side); count != null; count = nextPhase(side)) {
            final long n = count.number("n");
            side.barrier(count.text("phase"));
            LatencyRig.respond(pingPong, total, n);
            total += n;
        }
    }

    /**
     * The client's stream, measured in two halves of whole bursts ({@link #earlyHalf}) with each burst's time
     * recorded, and measured again once if unstable.
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
        final Warmed warmed = warmUp(step, end, probe, probeNs, burst,
            (first, count) -> BandwidthRig.send(stream, first, count, burst));
        final long count = measureCount(step, end, warmed);
        long first = probe + warmed.count();
        for (int attempt = 1; ; attempt++) {
            announce(side, MEASURE, count);
            final long pollsBefore = stream.polls();
            final Histogram bursts = LatencyRig.newHistogram();
            final long half = earlyHalf(count, burst);
            final long earlyNs = BandwidthRig.send(stream, first, half, burst, bursts);
            final long lateNs = BandwidthRig.send(stream, first + half, count - half, burst, bursts);
            final boolean halved = half > 0 && count - half > 0;
            final Stability stability = Stability.ofStream(halved ? mbPerSec(half, step.size(), earlyNs) : Double.NaN,
                halved ? mbPerSec(count - half, step.size(), lateNs) : Double.NaN, bursts, attempt);
            if (stability.stable() || attempt == Stability.MAX_ATTEMPTS) {
                return new BandwidthResult(step.kind(), transport, step.size(), count, first, burst,
                    earlyNs + lateNs, stream.polls() - pollsBefore, bursts, stability, null);
            }
            first += count;
            final long pad = (burst - first % burst) % burst;
            if (pad > 0) {
                // One short, unmeasured burst up to the next burst boundary, where the next phase must start.
                announce(side, WARM, pad);
                stream.burst(first, (int) pad);
                first += pad;
            }
        }
    }

    /**
     * The messages of a stream measurement's early half: half of it in whole bursts, or, with fewer than two whole
     * bursts, the first burst against the rest; 0 (no halves to compare) when it is a single burst.
     *
     * @param count the measured messages
     * @param burst messages per burst
     * @return the early half's messages, a whole number of bursts
     */
    static long earlyHalf(final long count, final int burst) {
        return count <= burst ? 0 : Math.max(1, count / 2 / burst) * burst;
    }

    static double mbPerSec(final long messages, final int size, final long ns) {
        return ns <= 0 ? Double.NaN : messages * (double) size * 1e3 / ns;
    }

    /**
     * The server's stream: it gets ready for each phase the client announces (posting receives) before the phase's
     * barrier, then takes part in it, until the client's END.
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
        for (Message count = nextPhase(side); count != null; count = nextPhase(side)) {
            total += count.number("n");
            stream.expect(total);
            side.barrier(count.text("phase"));
            stream.receive(total, step.burst(), side);
        }
    }

    /**
     * The next phase the client announces, or null at its END (the step's measuring is over).
     *
     * @param side the side channel
     * @return the COUNT message, or null
     * @throws PerfException if another message came
     */
    private static Message nextPhase(final SideChannel side) {
        final Message message = side.receive();
        return switch (message.verb()) {
            case "COUNT" -> message;
            case "END" -> null;
            default -> throw new PerfException("side channel: expected COUNT or END, got " + message.verb());
        };
    }

    /** The probe: part of the warm-up, a whole number of bursts for a stream. Both ends compute it alike. */
    static long probe(final Step step) {
        return Math.min(step.warmup(), step.kind().latency() ? PROBE_ROUND_TRIPS : step.burst());
    }

    static Warmed warmUp(final Step step, final End end, final long probe, final long probeNs,
                                 final int burst, final Runner runner) {
        final SideChannel side = end.side();
        if (!end.adaptive() || probe == 0) {
            final long rest = step.warmup() - probe;
            final long ns = runner.run(probe, announce(side, WARM, rest));
            return new Warmed(rest, rest > 0 ? Math.max(1, ns / rest) : Math.max(1, probeNs / Math.max(1, probe)));
        }
        long pace = Math.max(1, probeNs / probe);
        final long budget = step.first() ? FIRST_WARM_NS : WARM_BUDGET_NS;
        final long cap = step.first() ? Long.MAX_VALUE : step.warmup() - probe;
        long done = 0;
        long spent = 0;
        do {
            // Whole chunks only: the measurement is sized from the last chunk's pace, and a chunk cut to the few
            // milliseconds left of the budget (a thousand round trips) took its pace from a handful of stalls
            // (--duration 10 measured 6.5 s on a loaded guest). The first step's warm-up may so run one chunk long.
            final long chunkNs = step.first() ? CHUNK_NS : budget;
            final long chunk = Math.min(cap - done, Math.max(burst, chunkNs / pace / burst * burst));
            if (chunk <= 0) {
                break;
            }
            final long ns = runner.run(probe + done, announce(side, WARM, chunk));
            done += chunk;
            spent += ns;
            pace = Math.max(1, ns / chunk);
        } while (step.first() && spent < budget);
        return new Warmed(done, pace);
    }

    static long announce(final SideChannel side, final String phase, final long count) {
        side.send(Message.of("COUNT").with("phase", phase).with("n", count).build());
        side.barrier(phase);
        return count;
    }

    static long measureCount(final Step step, final End end, final Warmed warmed) {
        if (!end.adaptive()) {
            return step.iterations();
        }
        final long pace = warmed.nsPerIteration();
        final long aimed = Math.clamp(end.measureNs() / pace, Math.min(MIN_MEASURED, step.iterations()),
            step.iterations());
        return step.kind().latency() ? aimed : Math.max(aimed, Math.min(MIN_MEASURE_NS, end.measureNs()) / pace);
    }
}
