package io.jdet.perf.report;

import io.jdet.perf.TestKind;

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
}
