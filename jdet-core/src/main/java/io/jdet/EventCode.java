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
    /**
     * A receive queue failed: a message found no posted receive after every retry, or its completion queue
     * overflowed while flushing.
     */
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
    WRAP_ERROR(26),
    /**
     * {@code DET_AE_CO_WR_ERROR}: a collective work request failed (its group could not go on). The same value as
     * {@link #QP_SQ_ERROR}; the record's type is {@link ResourceType#CO}.
     */
    CO_WR_ERROR(7),
    /** {@code DET_AE_CO_DESTROYED}: a member left or destroyed the group. The same value as {@link #QP_DESTROYED}. */
    CO_DESTROYED(9),
    /**
     * {@code DET_AE_CO_ERROR}: the group failed (a member died, a connection failed, or a collective made no
     * progress within the timeout). The same value as {@link #QP_ERROR}.
     */
    CO_ERROR(10),
    /** {@code DET_AE_CO_FATAL}: the group failed fatally. The same value as {@link #QP_FATAL}. */
    CO_FATAL(11);

    /** DET's {@code DET_AE_REMOTE}: set in a raw code when the peer caused the event. */
    public static final int REMOTE_BIT = 0x8000_0000;

    /** By value; the collective aliases share the values of queue pair codes and do not displace them. */
    private static final EventCode[] BY_CODE = new EventCode[27];

    static {
        for (final EventCode c : values()) {
            if (BY_CODE[c.code] == null) {
                BY_CODE[c.code] = c;
            }
        }
    }

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
     * The event code of a raw value; the remote bit is ignored. Values 7, 9, 10 and 11 give the queue pair codes;
     * for a record of type {@link ResourceType#CO} they mean the collective aliases (see {@link #of(int, ResourceType)}).
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

    /**
     * The event code of a raw value for a kind of resource: a {@link ResourceType#CO} record maps 7, 9, 10, 11 to
     * {@link #CO_WR_ERROR}, {@link #CO_DESTROYED}, {@link #CO_ERROR}, {@link #CO_FATAL}.
     *
     * @param raw  a value from {@link #code()}, possibly with {@link #REMOTE_BIT}
     * @param type the kind of resource the event concerns
     * @return the code
     * @throws IllegalArgumentException if no event has that value
     */
    public static EventCode of(final int raw, final ResourceType type) {
        final EventCode c = of(raw);
        if (type != ResourceType.CO) {
            return c;
        }
        return switch (c) {
            case QP_SQ_ERROR -> CO_WR_ERROR;
            case QP_DESTROYED -> CO_DESTROYED;
            case QP_ERROR -> CO_ERROR;
            case QP_FATAL -> CO_FATAL;
            default -> c;
        };
    }
}
