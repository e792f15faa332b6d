package io.jdet.perf.collective;

import io.jdet.CollectiveTuning;
import io.jdet.Configuration;
import io.jdet.perf.PerfConfig;
import io.jdet.perf.PerfException;
import io.jdet.perf.TestKind;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * {@code jdet perf --tests co-... --ranks N}: the collectives of N members in this JVM, OSU style (the average
 * microseconds per operation over the measured iterations, after the warm-up ones, which last at least
 * {@link #MIN_WARMUP_NS} unless {@code --warmup} is given), each beside the α–β model's
 * prediction for the algorithm jdet chose. α and β come from the run itself: a two-member broadcast (one message)
 * of 8 bytes gives α, one of 1 MiB gives β, on the same link.
 */
public final class CollectiveBench {
    /** The size of the broadcast that measures β. */
    static final int BETA_BYTES = 1 << 20;
    /**
     * The least warm-up time of a step unless {@code --warmup} is given: on a loaded machine the JIT needs seconds
     * to compile the step machine, and a count alone left the first steps ten times slower than the later ones.
     */
    static final long MIN_WARMUP_NS = 400_000_000L;

    private CollectiveBench() {
    }

    /** One figure: a test at a size. */
    record Figure(TestKind kind, int size, long iterations, double avgUs, String algorithm, double modelUs,
                  double framesPerOp, double acksPerOp) {
    }

    /**
     * A measurement: the average microseconds per operation, and the frames and standalone acknowledgements all the
     * members' NICs sent per operation over the operations run for it (the measured ones, and with a thread per
     * member each thread's own warm-up ones before them, which are the same operations). Counts move less with the
     * machine's load than times (standalone acks still depend on timing: delayed acks that fall due, progress-thread
     * passes): they show what a change did to the traffic where the times are too noisy.
     */
    record Measured(double avgUs, double framesPerOp, double acksPerOp) {
    }

    /**
     * Runs the collective tests of a configuration.
     *
     * @param config its tests (all {@code co-*}), sizes, iterations, warm-up, NIC, timeout and JSON file
     * @param ranks  members of the group
     * @param threadPerMember whether each member runs on its own thread (else one thread drives all)
     * @param out    the table
     * @param err    progress lines (unless quiet)
     * @throws PerfException if an operation fails or a wait runs out
     */
    public static void run(final PerfConfig config, final int ranks, final boolean threadPerMember,
                           final PrintWriter out, final PrintWriter err) {
        final String nic = config.nicName();
        final Configuration device = new Configuration();
        final CollectiveTuning tuning = device.collectives();
        final double[] ab = alphaBeta(config, nic, device);
        final CostModel model = new CostModel(ab[0], ab[1], tuning);
        out.printf(Locale.ROOT, "# jdet perf collectives: %d members on %s in one JVM, %s%n", ranks, nic,
            driver(threadPerMember));
        out.printf(Locale.ROOT, "# alpha %.2f us, beta %.4f ns/B (2-member broadcast of 8 B and 1 MiB, same link);"
            + " model without the reduction's compute%n", ab[0], ab[1] * 1000);
        final List<Figure> figures = new ArrayList<>();
        try (Members members = new Members(nic, ranks, device, config.timeoutMs())) {
            for (final TestKind kind : config.tests()) {
                out.printf(Locale.ROOT, "%n# %s, %d ranks%n%-10s %12s %12s %10s %10s %8s  %s%n", kind.label(), ranks,
                    "size", "avg (us)", "model (us)", "iters", "frames/op", "acks/op", "algorithm");
                final List<Integer> sizes = kind == TestKind.CO_BARRIER ? List.of(0) : config.sizes();
                for (final int raw : sizes) {
                    final int size = kind == TestKind.CO_ALLREDUCE ? (raw + 7) / 8 * 8 : raw;
                    if (!config.quiet()) {
                        err.printf(Locale.ROOT, "jdet perf: %s %d B, %d ranks%n", kind.label(), size, ranks);
                        err.flush();
                    }
                    final long iterations = iterations(config, kind, size, ranks);
                    final Measured m = measureCounted(members, kind, size, iterations, config.warmup(iterations),
                        minWarmupNs(config), threadPerMember);
                    final CostModel.Prediction prediction = model.predict(kind, size, ranks);
                    final Figure f = new Figure(kind, size, iterations, m.avgUs(), prediction.algorithm(),
                        prediction.us(), m.framesPerOp(), m.acksPerOp());
                    figures.add(f);
                    out.printf(Locale.ROOT, "%-10d %12.2f %12.2f %10d %10.2f %8.2f  %s%n", size, m.avgUs(),
                        prediction.us(), iterations, m.framesPerOp(), m.acksPerOp(), prediction.algorithm());
                    out.flush();
                }
            }
        }
        if (config.json() != null) {
            write(config, nic, ranks, ab, figures, driver(threadPerMember));
        }
    }

    private static String driver(final boolean threadPerMember) {
        return threadPerMember ? "a thread per member, each timing its own loop" : "one thread polls every member";
    }

    private static long minWarmupNs(final PerfConfig config) {
        return config.given().contains("warmup") ? 0 : MIN_WARMUP_NS;
    }

    /**
     * The average microseconds per operation over {@code iterations}, after {@code warmup} unmeasured ones (and at
     * least {@code minWarmupNs} of them, driven by one thread); with {@code threadPerMember} the measured ones run on
     * a thread per member (the average over the members of each one's average), each after as many unmeasured ones
     * of its own (at most {@code iterations}), and after threaded rounds of them for at least {@code minWarmupNs}.
     */
    static double measure(final Members members, final TestKind kind, final int size, final long iterations,
                          final long warmup, final long minWarmupNs, final boolean threadPerMember) {
        return measureCounted(members, kind, size, iterations, warmup, minWarmupNs, threadPerMember).avgUs();
    }

    /** {@link #measure}, with the traffic of the operations measured. */
    static Measured measureCounted(final Members members, final TestKind kind, final int size, final long iterations,
                                   final long warmup, final long minWarmupNs, final boolean threadPerMember) {
        members.buffers(kind, size);
        try {
            final long warmStart = System.nanoTime();
            for (long i = 0; i < warmup || System.nanoTime() - warmStart < minWarmupNs; i++) {
                members.once(kind, (int) (i % members.p));
            }
            if (threadPerMember) {
                // The threaded loop is other code than the one-thread warm-up's: warm it for as long again (whole
                // rounds, so that every member posts the same collectives), or the first test times its compilation.
                final long threadedStart = System.nanoTime();
                final long round = Math.max(1, Math.min(warmup, iterations));
                do {
                    members.threaded(kind, 0, round);
                } while (System.nanoTime() - threadedStart < minWarmupNs);
                final Traffic before = new Traffic(members);
                final long own = Math.min(warmup, iterations);
                final double avg = members.threaded(kind, own, iterations);
                return before.since(members, avg, own + iterations);
            }
            final Traffic before = new Traffic(members);
            final long start = System.nanoTime();
            for (long i = 0; i < iterations; i++) {
                members.once(kind, 0);
            }
            final double avg = (System.nanoTime() - start) / 1e3 / iterations;
            return before.since(members, avg, iterations);
        } finally {
            members.release();
        }
    }

    /** The members' frames and standalone acknowledgements sent so far. */
    private record Traffic(long frames, long acks) {
        Traffic(final Members members) {
            this(members.counter("frames.sent"), members.counter("acks.sent"));
        }

        /** The measurement of {@code operations} run since this count, which took {@code avgUs} each. */
        Measured since(final Members members, final double avgUs, final long operations) {
            final Traffic now = new Traffic(members);
            return new Measured(avgUs, (double) (now.frames - frames) / operations,
                (double) (now.acks - acks) / operations);
        }
    }

    /** {@code --iters}, else about 32 MiB moved per member and size, between 20 and 1000 operations. */
    private static long iterations(final PerfConfig config, final TestKind kind, final int size, final int ranks) {
        if (config.iterations() > 0) {
            return config.iterations();
        }
        final long perOp = Math.max(64, kind == TestKind.CO_ALLGATHER || kind == TestKind.CO_ALLTOALL
            ? (long) size * ranks : size);
        return Math.clamp((32L << 20) / perOp, 20, 1000);
    }

    /**
     * α and β in microseconds, from a two-member broadcast of 8 bytes and of {@link #BETA_BYTES}: {@code --iters}
     * shortens these runs but never lengthens them (a long run of small operations would otherwise first move
     * {@code --iters} MiB-sized broadcasts). Unless {@code --warmup} is given, each comes from rounds repeated until
     * {@link #SETTLE_ROUNDS} in a row bring no new least ({@link #settled}): these are the run's first operations,
     * and on a small machine the JIT compiler goes on compiling for seconds after the warm-up, on the cores the
     * members need; a single round gave an α of 8 to 22 µs where the same broadcast later took 3.7.
     */
    private static double[] alphaBeta(final PerfConfig config, final String nic, final Configuration device) {
        try (Members pair = new Members(nic, 2, device, config.timeoutMs())) {
            final long small = config.iterations() > 0 ? Math.min(config.iterations(), 1000) : 1000;
            final long large = config.iterations() > 0 ? Math.min(config.iterations(), 50) : 50;
            double alpha = measure(pair, TestKind.CO_BCAST, 8, small, config.warmup(small), 3 * minWarmupNs(config),
                false);
            double big = measure(pair, TestKind.CO_BCAST, BETA_BYTES, large, config.warmup(large),
                minWarmupNs(config), false);
            if (minWarmupNs(config) > 0) { // the rounds above were the warm-ups: the settled figures replace them
                alpha = settled(() -> measure(pair, TestKind.CO_BCAST, 8, small, 0, 0, false), SETTLE_ROUNDS,
                    SETTLE_MAX_NS, System::nanoTime);
                big = settled(() -> measure(pair, TestKind.CO_BCAST, BETA_BYTES, large, 0, 0, false), SETTLE_ROUNDS,
                    SETTLE_MAX_NS, System::nanoTime);
            }
            return new double[] {alpha, Math.max(0, big - alpha) / BETA_BYTES};
        }
    }

    /** Rounds in a row without a new least that end {@link #settled}. */
    static final int SETTLE_ROUNDS = 25;
    /** The longest {@link #settled} repeats rounds. */
    static final long SETTLE_MAX_NS = 3_000_000_000L;

    /**
     * The settled figure of repeated rounds of a measurement: rounds run until {@code quietRounds} in a row bring no
     * new least, or until {@code maxNs} have passed on {@code clock} (the round that passes it is the last); the
     * figure is the median of the rounds from the last new least on, the steady state once the figure stopped
     * falling (the least alone would be a best case). Raises what a round raises.
     *
     * @param round       one round, its figure (lower is better)
     * @param quietRounds rounds in a row without a new least that end it, at least 1
     * @param maxNs       the longest it repeats rounds, in nanoseconds of {@code clock}
     * @param clock       the time in nanoseconds
     * @return the median of the last least and the rounds after it
     */
    static double settled(final DoubleSupplier round, final int quietRounds, final long maxNs,
                          final LongSupplier clock) {
        final long start = clock.getAsLong();
        final double[] since = new double[quietRounds + 1];
        since[0] = round.getAsDouble();
        int n = 1;
        while (n <= quietRounds && clock.getAsLong() - start < maxNs) {
            final double figure = round.getAsDouble();
            if (figure < since[0]) {
                since[0] = figure;
                n = 1;
            } else {
                since[n++] = figure;
            }
        }
        Arrays.sort(since, 0, n);
        return n % 2 == 1 ? since[n / 2] : (since[n / 2 - 1] + since[n / 2]) / 2;
    }

    private static void write(final PerfConfig config, final String nic, final int ranks, final double[] ab,
                              final List<Figure> figures, final String driver) {
        final StringBuilder sb = new StringBuilder(256 + 160 * figures.size());
        sb.append("{\n  \"format\": \"jdet-perf-collectives/1\",\n  \"nic\": \"").append(nic.replace("\"", ""))
            .append("\",\n  \"ranks\": ").append(ranks)
            .append(",\n  \"driver\": \"").append(driver).append("\",")
            .append(String.format(Locale.ROOT, "%n  \"alpha_us\": %.4f,%n  \"beta_ns_per_byte\": %.6f,", ab[0],
                ab[1] * 1000))
            .append("\n  \"results\": [");
        for (int i = 0; i < figures.size(); i++) {
            final Figure f = figures.get(i);
            sb.append(i == 0 ? "\n" : ",\n").append(String.format(Locale.ROOT,
                "    {\"test\": \"%s\", \"size\": %d, \"iterations\": %d, \"avg_us\": %.3f, \"model_us\": %.3f, "
                    + "\"algorithm\": \"%s\", \"frames_per_op\": %.3f, \"acks_per_op\": %.3f}", f.kind().label(),
                f.size(), f.iterations(), f.avgUs(), f.modelUs(), f.algorithm(), f.framesPerOp(), f.acksPerOp()));
        }
        sb.append("\n  ]\n}\n");
        try {
            Files.writeString(config.json(), sb);
        } catch (final IOException e) {
            throw new PerfException("cannot write " + config.json() + ": " + e, e);
        }
    }
}
