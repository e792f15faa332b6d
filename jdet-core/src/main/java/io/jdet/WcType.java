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
    /** A collective group's join ({@code DET_WC_JOIN}); length 0. */
    JOIN(8),
    /** A collective barrier ({@code DET_WC_BARRIER}). */
    BARRIER(9),
    /** A collective broadcast ({@code DET_WC_BCAST}). */
    BCAST(10),
    /** A collective scatter ({@code DET_WC_SCATTER}). */
    SCATTER(11),
    /** A collective scatter of per-member lengths ({@code DET_WC_SCATTERV}). */
    SCATTERV(12),
    /** A collective gather ({@code DET_WC_GATHER}). */
    GATHER(13),
    /** A collective gather of per-member lengths ({@code DET_WC_GATHERV}). */
    GATHERV(14),
    /** A collective all-gather ({@code DET_WC_ALLGATHER}). */
    ALLGATHER(15),
    /** A collective all-gather of per-member lengths ({@code DET_WC_ALLGATHERV}). */
    ALLGATHERV(16),
    /** A collective all-to-all ({@code DET_WC_ALLTOALL}). */
    ALLTOALL(17),
    /** A collective all-to-all of per-pair lengths ({@code DET_WC_ALLTOALLV}). */
    ALLTOALLV(18),
    /** A local invalidate of a type 2 window key (jdet extension; DET uses 19 and 20 internally). */
    LOCAL_INVALIDATE(21),
    /** A collective all-reduce (jdet extension). */
    ALLREDUCE(22),
    /** A collective reduce to a root (jdet extension). */
    REDUCE(23);

    private static final WcType[] BY_CODE = new WcType[24];

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
