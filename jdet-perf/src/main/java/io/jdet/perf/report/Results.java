package io.jdet.perf.report;

import io.jdet.perf.TestKind;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Everything a run measured, in the order measured, with the run's conditions and the NICs' counters. */
public final class Results {
    private final RunInfo info;
    private final List<LatencyResult> latencies = new ArrayList<>();
    private final List<BandwidthResult> bandwidths = new ArrayList<>();
    private final List<Figure> figures = new ArrayList<>();
    private final List<SetupCost> setupCosts = new ArrayList<>();
    private final Map<String, Map<String, Long>> counters = new LinkedHashMap<>();
    private final List<String> warnings = new ArrayList<>();
    private double totalSeconds;

    /**
     * Creates an empty collection.
     *
     * @param info the run's conditions
     */
    public Results(final RunInfo info) {
        this.info = info;
    }

    /**
     * Adds a figure.
     *
     * @param figure a ping-pong's or a stream's figures
     */
    public void add(final Figure figure) {
        figures.add(figure);
        switch (figure) {
            case LatencyResult latency -> latencies.add(latency);
            case BandwidthResult bandwidth -> bandwidths.add(bandwidth);
        }
    }

    /**
     * Sets det_perf's setup costs.
     *
     * @param costs the costs in det_perf's order
     */
    public void setupCosts(final List<SetupCost> costs) {
        setupCosts.clear();
        setupCosts.addAll(costs);
    }

    /**
     * Records an end's protocol counters.
     *
     * @param end      {@code client} or {@code server}
     * @param snapshot the NIC's counters
     */
    public void counters(final String end, final Map<String, Long> snapshot) {
        counters.put(end, Map.copyOf(snapshot));
    }

    /**
     * Records a warning about the whole run (a busy machine before it, for example).
     *
     * @param warning the warning, in words
     */
    public void warning(final String warning) {
        warnings.add(warning);
    }

    /**
     * The run's warnings.
     *
     * @return them, in the order recorded
     */
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    /**
     * Every figure, in the order measured.
     *
     * @return the ping-pongs and the streams
     */
    public List<Figure> figures() {
        return List.copyOf(figures);
    }

    /**
     * Sets the run's wall time.
     *
     * @param seconds from start to the last figure
     */
    public void totalSeconds(final double seconds) {
        totalSeconds = seconds;
    }

    /**
     * The conditions.
     *
     * @return the run info
     */
    public RunInfo info() {
        return info;
    }

    /**
     * The ping-pongs.
     *
     * @return them, in the order measured
     */
    public List<LatencyResult> latencies() {
        return List.copyOf(latencies);
    }

    /**
     * The streams.
     *
     * @return them, in the order measured
     */
    public List<BandwidthResult> bandwidths() {
        return List.copyOf(bandwidths);
    }

    /**
     * det_perf's setup costs.
     *
     * @return them, possibly empty
     */
    public List<SetupCost> setupCosts() {
        return List.copyOf(setupCosts);
    }

    /**
     * The NICs' counters, by end.
     *
     * @return end to counter to value
     */
    public Map<String, Map<String, Long>> counters() {
        return Map.copyOf(counters);
    }

    /**
     * The run's wall time.
     *
     * @return seconds
     */
    public double totalSeconds() {
        return totalSeconds;
    }

    /**
     * A ping-pong by test and size.
     *
     * @param kind the test
     * @param size the size
     * @return the figures, if measured
     */
    public Optional<LatencyResult> latency(final TestKind kind, final int size) {
        return latencies.stream().filter(r -> r.kind() == kind && r.size() == size).findFirst();
    }

    /**
     * A stream by test and size.
     *
     * @param kind the test
     * @param size the size
     * @return the figures, if measured
     */
    public Optional<BandwidthResult> bandwidth(final TestKind kind, final int size) {
        return bandwidths.stream().filter(r -> r.kind() == kind && r.size() == size).findFirst();
    }
}
