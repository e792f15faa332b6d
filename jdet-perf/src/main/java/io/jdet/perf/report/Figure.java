package io.jdet.perf.report;

import io.jdet.perf.TestKind;
import io.jdet.perf.trust.Stability;
import io.jdet.perf.trust.StepLoad;

/** One measured figure: a ping-pong's or a stream's. */
public sealed interface Figure permits LatencyResult, BandwidthResult {

    /**
     * The test.
     *
     * @return the kind
     */
    TestKind kind();

    /**
     * The message size.
     *
     * @return bytes
     */
    int size();

    /**
     * What carried it.
     *
     * @return {@code jdet/udp}, {@code jdet/loop}, {@code udp} or {@code tcp}
     */
    String transport();

    /**
     * Whether the measurement agreed with itself.
     *
     * @return its stability
     */
    Stability stability();

    /**
     * The machine's load around the step.
     *
     * @return the load, or null where it was not sampled
     */
    StepLoad load();

    /**
     * The same figures with the machine's load around their step.
     *
     * @param load the load
     * @return a copy with the load
     */
    Figure withLoad(StepLoad load);

    /**
     * Whether the figure can be trusted: stable, and not taken on a machine busier than its cores.
     *
     * @return true if nothing speaks against it
     */
    default boolean trusted() {
        return stability().stable() && (load() == null || !load().busy());
    }
}
