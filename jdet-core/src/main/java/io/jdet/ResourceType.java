package io.jdet;

/** The kind of resource an event concerns ({@code enum det_type}), with DET's values. */
public enum ResourceType {
    /** Not tied to a resource (a user-generated event). */
    UNKNOWN(0),
    /** An event queue. */
    EVENT(1),
    /** A NIC. */
    NIC(2),
    /** A protection domain. */
    PD(3),
    /** A completion queue. */
    CQ(4),
    /** A queue pair. */
    QP(5),
    /** A memory region. */
    MR(6),
    /** A memory window. */
    MW(7),
    /** A collective group. */
    CO(8);

    private final int code;

    ResourceType(final int code) {
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
}
