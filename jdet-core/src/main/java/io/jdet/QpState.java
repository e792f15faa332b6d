package io.jdet;

/**
 * Queue pair states ({@code enum det_qp_state}), with DET's values and transition table:
 * <pre>
 * from \ to    IDLE   CONNECTED  DISCONNECT  ERROR
 * IDLE         ok     ok         EPERM       ok
 * CONNECTED    EPERM  ok         ok          ok
 * DISCONNECT   EPERM  EPERM      EPERM       EPERM
 * ERROR        ok     EPERM      EPERM       ok
 * </pre>
 */
public enum QpState {
    /** Not connected; receives may be posted. */
    IDLE(0),
    /** Connected to one remote queue pair; every verb may be posted. */
    CONNECTED(1),
    /** Transitory: a graceful disconnect is under way. */
    DISCONNECT(2),
    /** Failed: every outstanding work request was flushed; go back to IDLE to reuse it. */
    ERROR(3);

    private final int code;

    QpState(final int code) {
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
