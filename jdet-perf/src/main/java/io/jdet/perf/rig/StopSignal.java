package io.jdet.perf.rig;

/** The sender's "I am done" as the receiving end of a stream sees it: data waiting on the side channel. */
public interface StopSignal {

    /**
     * Whether the peer has signaled, without blocking. May cost a system call: call it now and then, not per poll.
     *
     * @return true once the peer has said it is done (or gone)
     */
    boolean stopRequested();

    /**
     * Blocks until the peer signals.
     *
     * @param timeoutNs the longest wait
     * @return false if the time ran out first
     */
    boolean awaitStop(long timeoutNs);
}
