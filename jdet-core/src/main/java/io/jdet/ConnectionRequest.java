package io.jdet;

/**
 * A peer's request to connect to a listened service ({@code RDMA_CM_EVENT_CONNECT_REQUEST}): who asks, with which
 * queue pair and limits, and its private data. Answer it once, with {@link #accept} or {@link #reject}; until it
 * is answered, repeated requests from the peer are absorbed.
 */
public interface ConnectionRequest {

    /**
     * The requesting NIC's address.
     *
     * @return an address {@link QpModify#connect} accepts
     */
    String remoteAddress();

    /**
     * The requesting queue pair's number.
     *
     * @return the number
     */
    int remoteQpNumber();

    /**
     * The service id the request was sent to.
     *
     * @return the id
     */
    int serviceId();

    /**
     * The requester's max_or: reads and atomics it may have outstanding.
     *
     * @return the count
     */
    int remoteMaxOr();

    /**
     * The requester's max_ir: reads and atomics it accepts; the accepting queue pair's max_or is lowered to it.
     *
     * @return the count
     */
    int remoteMaxIr();

    /**
     * The private data the requester sent.
     *
     * @return a copy, empty if none
     */
    byte[] privateData();

    /**
     * Accepts ({@code rdma_accept}): connects the queue pair to the requester's, sends the acceptance, and waits
     * until the requester confirms that its queue pair is connected too. On return both queue pairs may post.
     *
     * @param queuePair   an IDLE queue pair of the listening NIC
     * @param privateData bytes for the requester's {@link ConnectionManager#connect} result; may be null
     * @param timeoutMs   the longest wait for the confirmation, in milliseconds
     * @throws DetException EINVAL if the request was answered already, the queue pair is not an IDLE queue pair of
     *                      this NIC, the private data is longer than {@link ConnectionManager#MAX_PRIVATE_DATA} or
     *                      the timeout is negative; ETIMEDOUT if no confirmation came in time (the queue pair is
     *                      then in ERROR); EACCES if the request is protected and the requester did not prove the
     *                      handshake's keys (the queue pair is then in ERROR); ECONNRESET if the requester answered
     *                      that it no longer waits for this connection, its connect having timed out or been
     *                      refused meanwhile (the queue pair is then in ERROR); EINTR if the thread was interrupted;
     *                      EIO if the NIC failed fatally
     *                      ({@link EventCode#NIC_FATAL})
     * @throws IllegalStateException if the queue pair is destroyed or the NIC closed
     */
    void accept(QueuePair queuePair, byte[] privateData, long timeoutMs);

    /**
     * Rejects ({@code rdma_reject}): the requester's connect fails with a {@link ConnectionRejectedException}
     * (ECONNREFUSED) that carries the private data.
     *
     * @param privateData bytes for the requester's {@link ConnectionRejectedException#privateData()}, may be null
     * @throws DetException EINVAL if the request was answered already or the private data is too long
     * @throws IllegalStateException if the NIC is closed (the request is then left unanswered)
     */
    void reject(byte[] privateData);
}
