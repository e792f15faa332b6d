package io.jdet;

/**
 * A NIC ({@code struct det_nic}): a link endpoint with its own address, limits, keys and queue pair numbers.
 *
 * <p>If the NIC's engine dies (its progress thread meets an {@link Error}, or its link fails outside the protocol),
 * the NIC becomes fatal, as an RDMA device after {@code IBV_EVENT_DEVICE_FATAL}: it raises one
 * {@link EventCode#NIC_FATAL} event (type {@link ResourceType#NIC}, the NIC as handle) on its event queue and
 * counts it in {@code engine.errors}; every queue pair enters ERROR, its outstanding work requests complete with
 * {@link WcStatus#FLUSHED}, and its peer gets a DISCONNECT with {@link EventCode#QP_FATAL} if the link still
 * carries it; posts, {@link QueuePair#modify} and connection manager calls fail with EIO. Polling, querying and
 * closing go on working. Never silent: the failure is an event, a counter and an errno naming its cause.
 */
public interface Nic extends AutoCloseable {

    /**
     * Identity and limits ({@code det_query_nic}).
     *
     * @return the attributes
     * @throws IllegalStateException if the NIC is closed
     */
    NicAttributes query();

    /**
     * The link address peers connect to, for example {@code loop:default/1} or {@code udp:127.0.0.1:40000}.
     *
     * @return the address
     */
    String address();

    /**
     * Allocates a protection domain ({@code det_alloc_pd}).
     *
     * @return the domain
     * @throws DetException EAGAIN if the NIC has its maximum number of domains
     */
    ProtectionDomain allocPd();

    /**
     * Creates a completion queue ({@code det_create_cq}). The size is rounded up to a whole number of
     * {@link NicAttributes#minCqSize()} entries, as DET fills whole pages; 0 is legal (resize later).
     *
     * @param size  the least number of completions it must hold
     * @param event where its completion events go when armed; may be null if it is never armed
     * @return the completion queue
     * @throws DetException EINVAL if size is negative or above the maximum, or the event queue is another
     *                      device's; EAGAIN if the NIC has its maximum number of completion queues
     * @throws IllegalStateException if the NIC or the event queue is closed
     */
    CompletionQueue createCq(int size, EventQueue event);

    /**
     * The NIC's connection manager: listen, connect, accept or reject, and disconnect gracefully.
     *
     * @return the connection manager, the same object on every call
     */
    ConnectionManager connectionManager();

    /**
     * Counters of the NIC's protocol engine (frames, acknowledgements, retransmissions, drops by cause).
     *
     * @return a snapshot, by counter name
     */
    java.util.Map<String, Long> counters();

    /**
     * Closes the NIC ({@code det_close_nic}).
     *
     * @throws DetException EBUSY while domains or completion queues remain
     */
    @Override
    void close();
}
