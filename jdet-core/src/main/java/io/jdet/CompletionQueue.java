package io.jdet;

/**
 * A completion queue ({@code struct det_cq}): where work requests report, in order per work queue.
 * Polling is also what drives the NIC's receive path: a thread that polls needs no other thread to make progress.
 */
public interface CompletionQueue extends AutoCloseable {

    /**
     * Takes up to {@code completions.length} completions ({@code det_poll_cq}). Allocation free. A null element
     * ends the poll there (what was taken before it is returned; none is lost).
     *
     * @param completions caller-owned, reused completions to fill from index 0
     * @return how many were filled; 0 when the queue is empty
     * @throws IllegalStateException if the queue was destroyed
     * @throws NullPointerException if the array is null, or its first element while a completion waits
     */
    int poll(WorkCompletion[] completions);

    /**
     * Takes up to {@code max} completions.
     *
     * @param completions caller-owned, reused completions to fill from index 0
     * @param max         the most to take (at most the array's length are)
     * @return how many were filled; 0 when the queue is empty
     * @throws IllegalStateException if the queue was destroyed
     * @throws DetException EINVAL if {@code max} is negative
     * @throws NullPointerException if the array is null, or its first element while {@code max} is positive and
     *                              a completion waits
     */
    int poll(WorkCompletion[] completions, int max);

    /**
     * Arms the queue, once, to put {@link EventCode#CQ_COMPLETION} on its event queue ({@code det_arm_cq}).
     * Arming again before it fires adds flags; the last threshold wins. A threshold already met fires at once.
     *
     * @param arm       {@link CqArm} flags
     * @param threshold for {@link CqArm#THRESHOLD}: the depth that fires it, in [1, size]
     * @throws DetException EINVAL for no or unknown flags, a threshold out of range, or a queue without an event
     *                      queue
     */
    void arm(int arm, int threshold);

    /**
     * Changes the size ({@code det_resize_cq}), rounded up as at creation.
     *
     * @param size the least number of completions it must hold
     * @throws DetException EBUSY if it holds more completions than that; EINVAL if above the maximum or below the
     *                      armed threshold
     */
    void resize(int size);

    /**
     * The current state ({@code det_query_cq}).
     *
     * @return the attributes
     * @throws IllegalStateException if the queue is destroyed
     */
    CqAttributes query();

    /**
     * Destroys the queue ({@code det_destroy_cq}).
     *
     * @throws DetException EBUSY while queue pairs or a {@link Collective} group (until its close) use it
     */
    @Override
    void close();
}
