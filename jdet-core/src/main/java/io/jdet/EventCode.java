package io.jdet;

/**
 * Asynchronous event codes ({@code enum det_event_code}), with DET's values. The same values travel on the wire
 * in disconnect frames. An event caused by the peer has {@link EventRecord#remote()} set, which is DET's
 * {@code DET_AE_REMOTE} bit ({@link #REMOTE_BIT} in {@link EventRecord#rawCode()}).
 */
public enum EventCode {
    /** Queued by {@link EventQueue#generate(Object)}. */
    USER_GENERATED(0),
    /** An armed completion queue fired. */
    CQ_COMPLETION(1),
    /** The NIC failed. */
    NIC_FATAL(2),
    /** The NIC was removed. */
    NIC_REMOVED(3),
    /** A graceful disconnect. */
    DISCONNECT(4),
    /** A completion queue overflowed. */
    CQ_OVERRUN(5),
    /** A completion was written to a completion queue in error. */
    CQ_FATAL(6),
    /** A send queue failed (its completion queue overflowed while flushing). */
    QP_SQ_ERROR(7),
    /** A receive queue failed: a message found no posted receive after every retry. */
    QP_RQ_ERROR(8),
    /** The peer destroyed its queue pair. */
    QP_DESTROYED(9),
    /** A queue pair entered ERROR. */
    QP_ERROR(10),
    /** A queue pair failed fatally. */
    QP_FATAL(11),
    /** A frame had an unknown opcode. */
    INVALID_OPCODE(12),
    /** A frame's offset or length was inconsistent. */
    INVALID_LENGTH(13),
    /** A frame named an unknown or unconnected queue pair. */
    INVALID_QP(14),
    /** A message id matched no receive. */
    INVALID_MSG_ID(15),
    /** A receive buffer's local key was invalid when data arrived. */
    INVALID_L_KEY(16),
    /** An RDMA request carried an invalid remote key. */
    INVALID_RDMA_KEY(17),
    /** A read response matched no read. */
    INVALID_RDMA_ID(18),
    /** An atomic request carried an invalid remote key. */
    INVALID_ATOMIC_KEY(19),
    /** An atomic response matched no atomic. */
    INVALID_ATOMIC_ID(20),
    /** More inbound reads and atomics than max_ir. */
    MAX_IR_EXCEEDED(21),
    /** The peer stopped acknowledging: retries exhausted. */
    ACK_TIMEOUT(22),
    /** A protection domain mismatch. */
    PROTECTION_VIOLATION(23),
    /** An address range outside a region or window, or a message longer than the receive. */
    BOUNDS_VIOLATION(24),
    /** Missing access rights. */
    ACCESS_VIOLATION(25),
    /** An address range that wraps. */
    WRAP_ERROR(26);

    /** DET's {@code DET_AE_REMOTE}: set in a raw code when the peer caused the event. */
    public static final int REMOTE_BIT = 0x8000_0000;

    private static final EventCode[] BY_CODE = values();

    private final int code;

    EventCode(final int code) {
        this.code = code;
    }

    /**
     * The numeric value, as in DET, without the remote bit.
     *
     * @return the value
     */
    public int code() {
        return code;
    }

    /**
     * The event code of a raw value; the remote bit is ignored.
     *
     * @param raw a value from {@link #code()}, possibly with {@link #REMOTE_BIT}
     * @return the code
     * @throws IllegalArgumentException if no event has that value
     */
    public static EventCode of(final int raw) {
        final int code = raw & ~REMOTE_BIT;
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("no event code " + raw);
        }
        return BY_CODE[code];
    }
}
