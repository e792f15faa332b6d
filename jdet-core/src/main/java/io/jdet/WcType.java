package io.jdet;

/** The kind of work a completion reports ({@code enum det_wc_type}), with DET's numeric values. */
public enum WcType {
    /** A send (also send-with-invalidate). */
    SEND(1),
    /** An RDMA write. */
    RDMA_WRITE(2),
    /** An RDMA read. */
    RDMA_READ(3),
    /** A 64-bit compare-and-swap. */
    COMP_EXCH(4),
    /** A 64-bit fetch-and-add. */
    FETCH_ADD(5),
    /** A receive: a message arrived, or an RDMA write with immediate consumed it. */
    RECV(6),
    /** A memory-window bind. */
    BIND(7),
    /** A local invalidate of a type 2 window key (jdet extension; DET uses 8 to 20 for collectives). */
    LOCAL_INVALIDATE(21);

    private static final WcType[] BY_CODE = new WcType[22];

    static {
        for (final WcType type : values()) {
            BY_CODE[type.code] = type;
        }
    }

    private final int code;

    WcType(final int code) {
        this.code = code;
    }

    /**
     * The numeric value, as in DET.
     *
     * @return the value
     */
    public int code() {
        return code;
    }

    /**
     * The type of a numeric value.
     *
     * @param code a value from {@link #code()}
     * @return the type
     * @throws IllegalArgumentException if no type has that value
     */
    public static WcType of(final int code) {
        final WcType type = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
        if (type == null) {
            throw new IllegalArgumentException("no completion type " + code);
        }
        return type;
    }
}
