package io.jdet.internal.observe;

import io.jdet.EventCode;
import io.jdet.WcStatus;
import io.jdet.WcType;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A NIC's reports on what happens to its connections: JFR events, {@code System.Logger} records under the name
 * {@code io.jdet}, and its counters as a JMX MBean. The engine calls it on control and error paths only (a
 * connection changing state, a retransmission timer expiring, a NAK, an error completion), never per frame.
 * Disabled JFR events and log levels cost a check each.
 *
 * <p>Log levels: connections up and down at DEBUG, a queue pair failing at WARNING (unless the peer destroyed its
 * end, a shutdown), retries
 * (retransmission timeouts, receiver-not-ready NAKs) and error completions at DEBUG. Thread safe.
 */
public final class NicObserver {
    private static final Logger LOG = System.getLogger("io.jdet");
    // One instance of each event, loaded and instrumented up front, only to ask whether the type is enabled: a
    // disabled event then costs a read, with no allocation and no class loading on the engine's paths.
    private static final ConnectionUpEvent UP = new ConnectionUpEvent();
    private static final ConnectionDownEvent DOWN = new ConnectionDownEvent();
    private static final RetransmitTimeoutEvent TIMEOUT = new RetransmitTimeoutEvent();
    private static final ReceiverNotReadyEvent RNR = new ReceiverNotReadyEvent();
    private static final ErrorCompletionEvent ERROR = new ErrorCompletionEvent();

    static {
        LOG.isLoggable(Level.DEBUG); // resolves the lazy logger now, not on a first retransmission
    }

    private final String nic;
    private NicMBean mbean;

    /**
     * Creates the observer of a NIC.
     *
     * @param nic the NIC's address, named in every report
     */
    public NicObserver(final String nic) {
        this.nic = nic;
    }

    /**
     * Publishes the NIC's counters as the MBean {@code io.jdet:type=Nic,name="<address>"} of the platform MBean
     * server; a failure (no management in this runtime, a name taken) is logged and otherwise ignored.
     *
     * @param counters reads a snapshot of the counters
     */
    public synchronized void publish(final Supplier<Map<String, Long>> counters) {
        mbean = NicMBean.register(nic, counters);
        LOG.log(Level.DEBUG, "jdet NIC {0} opened", nic);
    }

    /** Withdraws the MBean, if published. */
    public synchronized void close() {
        if (mbean != null) {
            mbean.unregister();
            mbean = null;
        }
        LOG.log(Level.DEBUG, "jdet NIC {0} closed", nic);
    }

    /**
     * A queue pair became CONNECTED.
     *
     * @param qp     its number
     * @param peer   the peer NIC's address
     * @param peerQp the peer queue pair's number
     */
    public void connectionUp(final int qp, final String peer, final int peerQp) {
        if (UP.isEnabled()) {
            final ConnectionUpEvent e = new ConnectionUpEvent();
            e.nic = nic;
            e.qp = qp;
            e.peer = peer;
            e.peerQp = peerQp;
            e.commit();
        }
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, String.format("jdet %s: qp %#x connected to %s qp %#x", nic, qp, peer, peerQp));
        }
    }

    /**
     * A connected queue pair left CONNECTED.
     *
     * @param qp      its number
     * @param peer    the peer NIC's address
     * @param peerQp  the peer queue pair's number
     * @param code    the event code (DISCONNECT when graceful)
     * @param remote  whether the peer caused it
     * @param error   whether the queue pair entered ERROR
     */
    public void connectionDown(final int qp, final String peer, final int peerQp, final int code,
                               final boolean remote, final boolean error) {
        if (DOWN.isEnabled()) {
            final ConnectionDownEvent e = new ConnectionDownEvent();
            e.nic = nic;
            e.qp = qp;
            e.peer = peer;
            e.peerQp = peerQp;
            e.event = eventName(code);
            e.remote = remote;
            e.error = error;
            e.commit();
        }
        // A peer that destroyed its queue pair ends the connection in ERROR too, but as a shutdown, not a fault.
        final int plain = code & ~EventCode.REMOTE_BIT;
        final boolean fault = error && plain != EventCode.QP_DESTROYED.code() && plain != EventCode.DISCONNECT.code();
        final Level level = fault ? Level.WARNING : Level.DEBUG;
        if (LOG.isLoggable(level)) {
            LOG.log(level, String.format("jdet %s: qp %#x %s (%s%s), peer %s qp %#x", nic, qp,
                error ? "failed" : "disconnected", eventName(code), remote ? ", raised by the peer" : "", peer,
                peerQp));
        }
    }

    /**
     * A queue pair that was not connected entered ERROR (a modify, or a failure before it connected).
     *
     * @param qp     its number
     * @param code   the event code
     * @param remote whether the peer caused it
     */
    public void queuePairError(final int qp, final int code, final boolean remote) {
        if (LOG.isLoggable(Level.WARNING)) {
            LOG.log(Level.WARNING, String.format("jdet %s: qp %#x entered ERROR (%s%s)", nic, qp, eventName(code),
                remote ? ", raised by the peer" : ""));
        }
    }

    /**
     * A stream's retransmission timer expired.
     *
     * @param qp       the queue pair's number
     * @param response true for the response stream, false for the request stream
     * @param fromSeq  the first sequence number it resends
     * @param rtoNs    the timeout that expired
     */
    public void retransmitTimeout(final int qp, final boolean response, final int fromSeq, final long rtoNs) {
        if (TIMEOUT.isEnabled()) {
            final RetransmitTimeoutEvent e = new RetransmitTimeoutEvent();
            e.nic = nic;
            e.qp = qp;
            e.stream = response ? "response" : "request";
            e.sequence = Integer.toUnsignedLong(fromSeq);
            e.rto = rtoNs;
            e.commit();
        }
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, String.format("jdet %s: qp %#x %s stream timed out after %d us, resending from %s",
                nic, qp, response ? "response" : "request", rtoNs / 1000, Integer.toUnsignedString(fromSeq)));
        }
    }

    /**
     * The peer refused a send for lack of a posted receive.
     *
     * @param qp  the queue pair's number
     * @param seq the refused request
     */
    public void receiverNotReady(final int qp, final int seq) {
        if (RNR.isEnabled()) {
            final ReceiverNotReadyEvent e = new ReceiverNotReadyEvent();
            e.nic = nic;
            e.qp = qp;
            e.sequence = Integer.toUnsignedLong(seq);
            e.commit();
        }
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, String.format("jdet %s: qp %#x receiver not ready for %s, will retry", nic, qp,
                Integer.toUnsignedString(seq)));
        }
    }

    /**
     * A work completion with an error status was queued.
     *
     * @param qp     the queue pair's number
     * @param wrId   the work request id
     * @param status its status
     * @param type   its type
     */
    public void errorCompletion(final int qp, final long wrId, final WcStatus status, final WcType type) {
        if (ERROR.isEnabled()) {
            final ErrorCompletionEvent e = new ErrorCompletionEvent();
            e.nic = nic;
            e.qp = qp;
            e.wrId = wrId;
            e.status = status.name();
            e.type = type == null ? null : type.name();
            e.commit();
        }
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, String.format("jdet %s: qp %#x work request %d completed with %s", nic, qp, wrId,
                status));
        }
    }

    private static String eventName(final int code) {
        final int plain = code & ~EventCode.REMOTE_BIT;
        try {
            return EventCode.of(plain).name();
        } catch (final IllegalArgumentException e) {
            return "event " + plain;
        }
    }
}
