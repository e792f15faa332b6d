package io.jdet.internal.protocol;

/** What the protocol needs to know of the queue pair that owns a stream: whether it still runs. */
public interface Connection {
    /**
     * Whether frames may still be processed; raises nothing.
     *
     * @return true while the queue pair is connected
     */
    boolean connected();
}
