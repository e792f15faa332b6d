package io.jdet.perf;

import java.util.ArrayList;
import java.util.List;

/**
 * One measurement of a run: a test at a size, with its iteration counts. The client sends it to the server, which
 * takes the counts from it.
 *
 * @param kind       the test
 * @param size       the message size (8 for the atomic)
 * @param iterations measured round trips or messages
 * @param warmup     unmeasured ones before them (a whole number of bursts for a stream)
 * @param burst      messages per burst (1 for a ping-pong)
 * @param first      whether it is the run's first step of its test, whose code the JIT has not compiled yet
 */
public record Step(TestKind kind, int size, long iterations, long warmup, int burst, boolean first) {

    /**
     * Warm-up plus measured iterations.
     *
     * @return the total
     */
    public long total() {
        return warmup + iterations;
    }

    /**
     * The step as side-channel fields.
     *
     * @param verb the message's verb
     * @return the message
     */
    public Message toMessage(final String verb) {
        return Message.of(verb).with("kind", kind.label()).with("size", size).with("iters", iterations)
            .with("warmup", warmup).with("burst", burst).build();
    }

    /**
     * Reads a step back.
     *
     * @param message what {@link #toMessage} wrote
     * @return the step
     */
    public static Step of(final Message message) {
        final TestKind kind;
        try {
            kind = TestKind.of(message.text("kind"));
        } catch (final IllegalArgumentException e) {
            throw new PerfException("side channel: " + message.verb() + ": " + e.getMessage(), e);
        }
        final long size = message.number("size");
        final long iterations = message.number("iters");
        final long warmup = message.number("warmup");
        final long burst = message.number("burst");
        // The peer's counts size buffers and queues: refuse any the command line would have refused.
        peerCheck(size >= 1 && size <= Sizes.MAX, message, "size " + size + " is outside [1, " + Sizes.MAX + "]");
        peerCheck(iterations >= 0, message, "iters " + iterations + " is negative");
        peerCheck(warmup >= 0, message, "warmup " + warmup + " is negative");
        peerCheck(burst >= 1 && burst <= PerfConfig.MAX_BURST, message,
            "burst " + burst + " is outside [1, " + PerfConfig.MAX_BURST + "]");
        return new Step(kind, (int) size, iterations, warmup, (int) burst, false);
    }

    private static void peerCheck(final boolean ok, final Message message, final String problem) {
        if (!ok) {
            throw new PerfException("side channel: " + message.verb() + " " + problem);
        }
    }

    /**
     * Every step of a run, size by size as det_perf prints them: the jdet tests in the order given (the atomic
     * once, at 8 bytes, in the first size's block; the co-* tests never, they are not the rig's), then the
     * baselines that match them (UDP, TCP, Aeron).
     *
     * @param config the run's configuration
     * @return the steps
     */
    public static List<Step> plan(final PerfConfig config) {
        final boolean latency = config.tests().stream().anyMatch(TestKind::latency);
        final boolean bandwidth = config.tests().stream().anyMatch(k -> !k.latency() && !k.fixedSize());
        final List<Step> steps = new ArrayList<>();
        for (int i = 0; i < config.sizes().size(); i++) {
            final int size = config.sizes().get(i);
            for (final TestKind kind : config.tests()) {
                if (kind.collective()) {
                    continue; // run by CollectiveBench, never by the two-end rig
                }
                if (!kind.fixedSize() || i == 0) {
                    steps.add(of(config, kind, kind.fixedSize() ? 8 : size, i == 0));
                }
            }
            final boolean first = i == 0;
            if (latency) {
                baselines(config, size).forEach(b -> steps.add(of(config, pingPong(config, b), size, first)));
            }
            if (bandwidth) {
                baselines(config, size).forEach(b -> steps.add(of(config, stream(config, b), size, first)));
            }
        }
        return steps;
    }

    /** The baselines at a size, in {@link Baseline} order: Aeron only up to its largest message. */
    private static java.util.stream.Stream<Baseline> baselines(final PerfConfig config, final int size) {
        return config.baselines().stream().sorted()
            .filter(b -> b != Baseline.AERON || size <= io.jdet.perf.aeron.AeronMedia.MAX_MESSAGE);
    }

    private static TestKind pingPong(final PerfConfig config, final Baseline baseline) {
        return switch (baseline) {
            case UDP -> TestKind.UDP_PINGPONG;
            case TCP -> TestKind.TCP_PINGPONG;
            case AERON -> config.aeronIpc() ? TestKind.AERON_IPC_PINGPONG : TestKind.AERON_UDP_PINGPONG;
        };
    }

    private static TestKind stream(final PerfConfig config, final Baseline baseline) {
        return switch (baseline) {
            case UDP -> TestKind.UDP_STREAM;
            case TCP -> TestKind.TCP_STREAM;
            case AERON -> config.aeronIpc() ? TestKind.AERON_IPC_STREAM : TestKind.AERON_UDP_STREAM;
        };
    }

    private static Step of(final PerfConfig config, final TestKind kind, final int size, final boolean first) {
        final long iterations = config.iterations(kind, size);
        if (kind.latency()) {
            return new Step(kind, size, iterations, config.warmup(iterations), 1, first);
        }
        final int burst = config.burst(iterations);
        final long warmup = (config.warmup(iterations) + burst - 1) / burst * burst;
        return new Step(kind, size, iterations, warmup, burst, first);
    }
}
