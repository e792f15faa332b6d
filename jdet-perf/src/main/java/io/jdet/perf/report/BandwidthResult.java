package io.jdet.perf.report;

import io.jdet.perf.TestKind;

/**
 * A stream's figures.
 *
 * @param kind      the test
 * @param transport what carried it: {@code jdet/udp}, {@code jdet/loop}, {@code udp}, {@code tcp}
 * @param size      message size in bytes (8 for the atomic)
 * @param messages  measured messages
 * @param warmup    unmeasured messages before them
 * @param burst     messages per burst
 * @param elapsedNs wall time of the measured messages, to the last burst's delivery
 * @param polls     completion-queue polls or channel reads made by the sending end
 */
public record BandwidthResult(TestKind kind, String transport, int size, long messages, long warmup, int burst,
                              long elapsedNs, long polls) implements Figure {

    /**
     * det_perf's figure.
     *
     * @return microseconds per message
     */
    public double usecPerMsg() {
        return elapsedNs / 1e3 / messages;
    }

    /**
     * The message rate.
     *
     * @return messages per second
     */
    public double messagesPerSec() {
        return messages * 1e9 / elapsedNs;
    }

    /**
     * The byte rate.
     *
     * @return megabytes (10^6 bytes) per second
     */
    public double mbPerSec() {
        return messagesPerSec() * size / 1e6;
    }
}
