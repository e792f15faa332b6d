package io.jdet;

/**
 * A NIC's connection manager, in the manner of {@code rdma_cm}: a passive side {@link #listen listens} on a
 * service id and accepts or rejects {@link ConnectionRequest}s; an active side {@link #connect connects} a queue
 * pair to a remote NIC's service. The handshake (request, accept or reject, ready) carries the queue pair numbers,
 * each stream's initial sequence number, max_or and max_ir, and up to {@link #MAX_PRIVATE_DATA} bytes of private
 * data each way (typically a buffer address and its remote key). Its messages are retransmitted until answered.
 *
 * <p>It closes DET's connection race: the accepting queue pair is connected before the acceptance is sent, and
 * {@link ConnectionRequest#accept} returns only once the active side confirmed that its queue pair is connected
 * too, so the first data frame in either direction always finds a connected queue pair. Each side's max_or is
 * lowered to the peer's max_ir, so a peer is never sent more reads or atomics than it accepts.
 *
 * <p>{@link #disconnect} is graceful and acknowledged: it lets outstanding work finish, then tells the peer, which
 * disconnects its queue pair and answers; both queue pairs end in IDLE, ready to be connected again.
 *
 * <p>Thread safe. Every call that waits takes a timeout; while it waits, the NIC's progress thread runs the
 * protocol, so the caller need not poll.
 */
public interface ConnectionManager {
    /** The most private data a request, acceptance or rejection carries, in bytes. */
    int MAX_PRIVATE_DATA = 256;

    /**
     * Listens on a service id ({@code rdma_listen}).
     *
     * @param serviceId the service, any value agreed with the peers
     * @return the listener; close it to stop listening
     * @throws DetException EEXIST if this NIC already listens on the service id
     * @throws IllegalStateException if the NIC is closed
     */
    ConnectionListener listen(int serviceId);

    /**
     * Connects a queue pair to a listening service ({@code rdma_connect}) and waits for the answer. On success the
     * queue pair is CONNECTED to the queue pair the peer accepted with; on failure it stays IDLE.
     *
     * @param remoteAddress the peer NIC's {@link Nic#address()}
     * @param serviceId     the service the peer listens on
     * @param queuePair     an IDLE queue pair of this NIC
     * @param privateData   bytes for the peer's {@link ConnectionRequest#privateData()}; may be null for none
     * @param timeoutMs     the longest wait for the answer, in milliseconds
     * @return the private data the peer accepted with (empty if none)
     * @throws DetException EINVAL if the queue pair is not an IDLE queue pair of this NIC, the private data is
     *                      longer than {@link #MAX_PRIVATE_DATA} or the timeout is negative; ENODEV if the address
     *                      cannot be reached from this NIC; ETIMEDOUT if no answer came in time; EINTR if the
     *                      thread was interrupted; ECONNREFUSED if the acceptance was malformed (a max_or or max_ir
     *                      out of range, queue pair 0), or the peer's {@link Security} mode is another; EACCES if a
     *                      protected handshake failed (another pre-shared key, an untrusted or unproven static
     *                      key); EIO if the NIC failed fatally ({@link EventCode#NIC_FATAL})
     * @throws ConnectionRejectedException (errno ECONNREFUSED) if the peer rejected the request, with its private
     *                                     data, or nobody listens on the service (or its backlog, or this
     *                                     host's share of it, {@link Configuration#cmPendingPerSource()}, is full)
     * @throws IllegalStateException if the NIC is closed or the queue pair destroyed
     */
    byte[] connect(String remoteAddress, int serviceId, QueuePair queuePair, byte[] privateData, long timeoutMs);

    /**
     * Disconnects a connected queue pair gracefully ({@code rdma_disconnect}): waits until every work request it
     * posted has completed and the peer acknowledged every response it owes, then asks the peer to disconnect and
     * waits for its answer. Both queue pairs go to IDLE (or ERROR if work had to be flushed) and raise a
     * {@link EventCode#DISCONNECT} event; the peer's is marked remote.
     *
     * @param queuePair a queue pair of this NIC
     * @param timeoutMs the longest wait, for the outstanding work and the answer together, in milliseconds
     * @throws DetException ENOTCONN if the queue pair is not CONNECTED; EINVAL if it belongs to another NIC or the
     *                      timeout is negative; ETIMEDOUT if the work or the answer did not come in time (the
     *                      queue pair is disconnected locally all the same, its outstanding work flushed);
     *                      EINTR if the thread was interrupted
     */
    void disconnect(QueuePair queuePair, long timeoutMs);

    /**
     * How this connection manager protects the connections it makes from now on, as both its requests and its
     * acceptances; starts as the device's {@link Configuration#security()}. A connection made earlier keeps its
     * protection. A peer whose mode differs refuses the handshake: the connect fails with ECONNREFUSED.
     *
     * @param security the settings
     * @throws IllegalArgumentException if security is null
     */
    void security(Security security);

    /**
     * How this connection manager protects the connections it makes.
     *
     * @return the settings
     */
    Security security();
}
