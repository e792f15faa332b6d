package io.jdet;

/**
 * The outcome of a work request ({@code enum det_wc_status}). Values 0 to 5 are DET's; the rest extend DET with
 * the failures ibverbs reports, so that every remote-side failure names its cause on the initiator's completion.
 */
public enum WcStatus {
    /** The work request completed. */
    SUCCESS(0),
    /** The queue pair entered ERROR or was reset before the request completed. */
    FLUSHED(1),
    /** The remote key belongs to another protection domain, or names no region or window. */
    PROTECTION_ERR(2),
    /** The address range lies outside the region or window, or a message is longer than the receive buffer. */
    BOUNDS_ERR(3),
    /** The region or window lacks the access right the operation needs. */
    ACCESS_ERR(4),
    /** The address range wraps around the end of the address space. */
    WRAP_ERR(5),
    /** No response after every retransmission: the peer is gone or unreachable. */
    RETRY_EXCEEDED(6),
    /** The receiver had no receive posted after every receiver-not-ready retry. */
    RNR_RETRY_EXCEEDED(7),
    /**
     * The peer rejected the request as malformed: a misaligned atomic, a key it could not invalidate, or more reads
     * and atomics at once than its max_ir accepts.
     */
    INVALID_REQUEST(8),
    /** A posted memory-window bind could not be carried out when it reached the head of the send queue. */
    BIND_ERR(9),
    /** A local operation (a local invalidate) failed. */
    LOCAL_OP_ERR(10),
    /**
     * The peer could not carry out the request: its receive buffer was unusable (deregistered, or without local
     * write), its receive completion did not fit the peer's completion queue (which overran), or the request failed
     * while it ran there.
     */
    REMOTE_OP_ERR(11),
    /** A local buffer became unusable (deregistered, or its arena closed) between post and execution. */
    LOCAL_PROTECTION_ERR(12),
    /**
     * The peer broke the protocol answering this request ({@code IBV_WC_BAD_RESP_ERR}): a NAK with a status or
     * event out of range, a receiver-not-ready NAK for a request that consumes no receive, or a response that
     * matches no outstanding read or atomic, or whose fragments leave the read's range. The queue pair enters
     * ERROR and tells the peer with a DISCONNECT.
     */
    BAD_RESPONSE(13);

    private static final WcStatus[] BY_CODE = values();

    private final int code;

    WcStatus(final int code) {
        this.code = code;
    }

    /**
     * The numeric code, as in DET for the first six.
     *
     * @return the code
     */
    public int code() {
        return code;
    }

    /**
     * The status of a numeric code.
     *
     * @param code a code from {@link #code()}
     * @return the status
     * @throws IllegalArgumentException if no status has that code
     */
    public static WcStatus of(final int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("no completion status " + code);
        }
        return BY_CODE[code];
    }
}
