package io.jdet.internal.protocol;

import io.jdet.EventCode;
import io.jdet.WcStatus;

/**
 * The ranges of the codes a peer sends in NAK and DISCONNECT frames and in the connection manager's handshake.
 * Every such value is checked here before the engine uses it: a value out of range is a protocol error on that
 * connection, never an event code or status the application cannot decode.
 */
public final class PeerValues {
    /** The largest max_or and max_ir a queue pair accepts (the NIC's {@code maxQpRdAtom} and {@code maxQpInitRdAtom}). */
    public static final int MAX_RD_ATOMIC = 32768;

    private PeerValues() {
    }

    /**
     * Whether a NAK's status names a failure a responder reports (section 6.6 of the protocol).
     *
     * @param status the NAK's key field, other than {@code NAK_RNR}
     * @return true for PROTECTION_ERR, BOUNDS_ERR, ACCESS_ERR, WRAP_ERR, INVALID_REQUEST and REMOTE_OP_ERR
     */
    public static boolean nakStatus(final int status) {
        return status == WcStatus.PROTECTION_ERR.code() || status == WcStatus.BOUNDS_ERR.code()
            || status == WcStatus.ACCESS_ERR.code() || status == WcStatus.WRAP_ERR.code()
            || status == WcStatus.INVALID_REQUEST.code() || status == WcStatus.REMOTE_OP_ERR.code();
    }

    /**
     * Whether a code is an event about a queue pair, the events a NAK or a failing peer's DISCONNECT carry:
     * {@link EventCode#QP_SQ_ERROR} to {@link EventCode#WRAP_ERROR}, without the remote bit.
     *
     * @param code the code as received
     * @return true if it is in that range
     */
    public static boolean qpEvent(final int code) {
        return code >= EventCode.QP_SQ_ERROR.code() && code <= EventCode.WRAP_ERROR.code();
    }

    /**
     * Whether a DISCONNECT's code is one a peer sends: {@link EventCode#DISCONNECT} (graceful) or a queue pair
     * event; DET's remote bit, if the peer set it, is ignored.
     *
     * @param key the DISCONNECT's key field
     * @return true if it is in range
     */
    public static boolean disconnectCode(final int key) {
        final int code = key & ~EventCode.REMOTE_BIT;
        return code == EventCode.DISCONNECT.code() || qpEvent(code);
    }

    /**
     * Whether a max_or or max_ir from the connection manager's handshake is in range.
     *
     * @param limit the value as received
     * @return true for 0 to {@link #MAX_RD_ATOMIC}
     */
    public static boolean rdAtomicLimit(final int limit) {
        return limit >= 0 && limit <= MAX_RD_ATOMIC;
    }
}
