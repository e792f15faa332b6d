package io.jdet.internal.protocol;

import io.jdet.EventCode;
import io.jdet.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ranges a peer's NAK, DISCONNECT and handshake values must fall in: every edge, both sides of it. */
class PeerValuesTest {
    private static final Set<WcStatus> RESPONDER_FAILURES = EnumSet.of(WcStatus.PROTECTION_ERR, WcStatus.BOUNDS_ERR,
        WcStatus.ACCESS_ERR, WcStatus.WRAP_ERR, WcStatus.INVALID_REQUEST, WcStatus.REMOTE_OP_ERR);

    @Test
    void aNakCarriesOnlyTheFailuresAResponderReports() {
        for (final WcStatus s : WcStatus.values()) {
            assertEquals(RESPONDER_FAILURES.contains(s), PeerValues.nakStatus(s.code()), s.name());
        }
        assertFalse(PeerValues.nakStatus(-1));
        assertFalse(PeerValues.nakStatus(WcStatus.values().length));
        assertFalse(PeerValues.nakStatus(0xFFFE));
    }

    @Test
    void aQueuePairEventRunsFromSqErrorToWrapError() {
        assertFalse(PeerValues.qpEvent(EventCode.QP_SQ_ERROR.code() - 1));
        assertTrue(PeerValues.qpEvent(EventCode.QP_SQ_ERROR.code()));
        assertTrue(PeerValues.qpEvent(EventCode.INVALID_RDMA_KEY.code()));
        assertTrue(PeerValues.qpEvent(EventCode.WRAP_ERROR.code()));
        assertFalse(PeerValues.qpEvent(EventCode.WRAP_ERROR.code() + 1));
        assertFalse(PeerValues.qpEvent(999));
        assertFalse(PeerValues.qpEvent(EventCode.QP_ERROR.code() | EventCode.REMOTE_BIT), "the remote bit stays out");
        assertFalse(PeerValues.qpEvent(Integer.MIN_VALUE));
    }

    @Test
    void aDisconnectCarriesAGracefulCodeOrAQueuePairEventWithOrWithoutTheRemoteBit() {
        assertTrue(PeerValues.disconnectCode(EventCode.DISCONNECT.code()));
        assertTrue(PeerValues.disconnectCode(EventCode.DISCONNECT.code() | EventCode.REMOTE_BIT));
        assertTrue(PeerValues.disconnectCode(EventCode.ACK_TIMEOUT.code()));
        assertTrue(PeerValues.disconnectCode(EventCode.QP_SQ_ERROR.code() | EventCode.REMOTE_BIT));
        assertFalse(PeerValues.disconnectCode(EventCode.NIC_REMOVED.code()), "3: below the graceful code");
        assertFalse(PeerValues.disconnectCode(EventCode.CQ_OVERRUN.code()), "5: between graceful and the qp events");
        assertFalse(PeerValues.disconnectCode(EventCode.WRAP_ERROR.code() + 1));
        assertFalse(PeerValues.disconnectCode(999 | EventCode.REMOTE_BIT));
        assertFalse(PeerValues.disconnectCode(EventCode.DISCONNECT.code() | 0x10000), "another high bit is no code");
    }

    @Test
    void aHandshakeLimitRunsFromZeroToTheNicsMaximum() {
        assertFalse(PeerValues.rdAtomicLimit(-1));
        assertTrue(PeerValues.rdAtomicLimit(0));
        assertTrue(PeerValues.rdAtomicLimit(1));
        assertTrue(PeerValues.rdAtomicLimit(PeerValues.MAX_RD_ATOMIC));
        assertFalse(PeerValues.rdAtomicLimit(PeerValues.MAX_RD_ATOMIC + 1));
        assertFalse(PeerValues.rdAtomicLimit(Integer.MIN_VALUE));
    }
}
