package io.jdet.perf.report;

/**
 * One thread's part of a bandwidth test run on several queue pairs ({@code --qps}, {@code --threads}): the
 * messages its queue pairs carried in the measurement and the time it spent on them.
 *
 * @param thread    the thread's index, from 0
 * @param qps       the queue pairs it drove
 * @param messages  measured messages over all its queue pairs
 * @param elapsedNs its own wall time over the measured phases, from each phase's start to its last burst's
 *                  delivery
 */
public record ThreadShare(int thread, int qps, long messages, long elapsedNs) {

    /**
     * The thread's message rate.
     *
     * @return messages per second over its own time
     */
    public double messagesPerSec() {
        return elapsedNs <= 0 ? Double.NaN : messages * 1e9 / elapsedNs;
    }

    /**
     * The thread's byte rate.
     *
     * @param size the message size
     * @return megabytes (10^6 bytes) per second
     */
    public double mbPerSec(final int size) {
        return messagesPerSec() * size / 1e6;
    }
}
