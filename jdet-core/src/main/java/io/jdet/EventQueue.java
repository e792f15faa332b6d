package io.jdet;

/**
 * A queue of asynchronous events ({@code struct det_event}): armed completion queues firing, queue pair errors,
 * remote disconnects and user-generated events. Any thread may wait on it; waiting blocks, without spinning
 * except for the short spin the shared-memory and raw Ethernet links make before they sleep
 * ({@link Configuration#shmSpinUs()}, {@link Configuration#ethSpinUs()}).
 */
public interface EventQueue extends AutoCloseable {
    /** Wait forever ({@code DET_NO_TIMEOUT}). */
    long NO_TIMEOUT = Long.MAX_VALUE;

    /**
     * Takes the oldest event, waiting up to {@code timeoutUs} for one ({@code det_wait_on_event}). The handler, if
     * any, runs on this thread before the call returns.
     *
     * <p>While it waits, the thread may sleep on the link of a NIC that reports to this queue and run that NIC's
     * engine itself when a frame arrives (one wake-up per frame, as a blocking socket read); one waiter per queue
     * and per NIC does so at a time, others park on the queue. An interrupt then ends the wait within one timer
     * period ({@link Configuration#timerPeriodUs()}) rather than at once.
     *
     * @param timeoutUs 0 to poll, {@link #NO_TIMEOUT} to wait forever, else microseconds
     * @param record    filled with the event
     * @throws DetException EAGAIN if polling found none; ETIME if the time ran out; EINTR if the thread was
     *                      interrupted (its interrupt status stays set); EINVAL for a negative timeout
     * @throws IllegalStateException if the queue is closed, or was closed while waiting (and held no event)
     */
    void waitOn(long timeoutUs, EventRecord record);

    /**
     * Queues a user event ({@code det_generate_event}) with code {@link EventCode#USER_GENERATED} and type
     * {@link ResourceType#UNKNOWN}.
     *
     * @param handle the value the record's {@link EventRecord#handle()} will hold
     * @throws IllegalStateException if the queue is closed
     */
    void generate(Object handle);

    /**
     * How many events are queued.
     *
     * @return the count
     * @throws IllegalStateException if the queue is destroyed
     */
    int pending();

    /**
     * Destroys the queue ({@code det_destroy_event}) and wakes its waiters, who get an
     * {@link IllegalStateException} (where DET returns EAGAIN).
     *
     * @throws DetException EBUSY while a NIC or a completion queue still reports to it
     */
    @Override
    void close();
}
