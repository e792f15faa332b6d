package io.jdet;

/**
 * Listens on one service id of a NIC's {@link ConnectionManager}: connection requests queue here until taken.
 * Closing it rejects the requests not yet taken and answers later ones as if nobody listened.
 */
public interface ConnectionListener extends AutoCloseable {

    /**
     * The service id listened on.
     *
     * @return the id
     */
    int serviceId();

    /**
     * Takes the next connection request, waiting for one if none is queued ({@code rdma_get_request}).
     *
     * @param timeoutMs the longest wait in milliseconds; 0 does not wait
     * @return the request, which must be accepted or rejected
     * @throws DetException ETIMEDOUT if no request came in time; EINVAL if the timeout is negative; EINTR if the
     *                      thread was interrupted
     * @throws IllegalStateException if the listener is closed, or was closed while waiting
     */
    ConnectionRequest take(long timeoutMs);

    /** Stops listening; closing twice does nothing. */
    @Override
    void close();
}
