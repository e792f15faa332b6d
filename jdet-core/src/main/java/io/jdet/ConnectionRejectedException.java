package io.jdet;

/**
 * A connection request that was refused ({@code RDMA_CM_EVENT_REJECTED}): the peer's application rejected it, with
 * the private data it passed to {@link ConnectionRequest#reject} (a reason, a redirect, whatever the two sides
 * agreed), or nobody listens on the service. Its {@link #errno()} is always {@link Errno#ECONNREFUSED}, so code
 * that handles {@link DetException} by errno keeps working.
 */
public final class ConnectionRejectedException extends DetException {
    private static final long serialVersionUID = 1L;

    /** Who refused the connection. */
    public enum Reason {
        /** The peer's application rejected the request with {@link ConnectionRequest#reject}. */
        REJECTED,
        /**
         * Nobody listens on the service id at that address, or its backlog was full, or this host had
         * {@link Configuration#cmPendingPerSource()} requests unanswered there already.
         */
        NO_LISTENER
    }

    /** Who refused. */
    private final Reason reason;
    /** What the peer rejected with; never null. */
    private final byte[] privateData;

    /**
     * Creates the exception.
     *
     * @param reason      who refused
     * @param privateData what the peer rejected with; null for none
     * @param message     what went wrong, for people
     * @throws NullPointerException if the reason is null
     */
    public ConnectionRejectedException(final Reason reason, final byte[] privateData, final String message) {
        super(Errno.ECONNREFUSED, message);
        this.reason = java.util.Objects.requireNonNull(reason, "reason");
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /**
     * Who refused the connection.
     *
     * @return {@link Reason#REJECTED} if the peer's application rejected it, else {@link Reason#NO_LISTENER}
     */
    public Reason reason() {
        return reason;
    }

    /**
     * The private data the peer rejected with, as {@code rdma_cm} hands it to the active side.
     *
     * @return a copy, empty if the peer sent none (always empty for {@link Reason#NO_LISTENER})
     */
    public byte[] privateData() {
        return privateData.clone();
    }
}
