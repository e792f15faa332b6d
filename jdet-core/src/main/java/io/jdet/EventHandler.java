package io.jdet;

/** A callback run on the waiting thread for each event taken from an {@link EventQueue} ({@code det_event_cb}). */
@FunctionalInterface
public interface EventHandler {
    /**
     * Handles one event.
     *
     * @param queue  the queue the event was taken from
     * @param record the event; valid only during the call
     */
    void onEvent(EventQueue queue, EventRecord record);
}
