package io.jdet.internal.protocol;

import io.jdet.EventCode;
import io.jdet.WcStatus;
import io.jdet.WcType;

/**
 * What the requester and the responder need of the queue pair that owns them: its identity and limits, its other
 * half, its completion queues, its error handling and the local operations only the verbs layer can run. Engine
 * lock held for every call; none raises.
 */
public interface ProtocolQp extends Connection {
    /** @return the queue pair number */
    int number();

    /** @return the connected peer's queue pair number */
    int remoteQpNum();

    /** @return how many reads and atomics this side may have outstanding */
    int maxOr();

    /** @return how many reads and atomics from the peer this side takes at once */
    int maxIr();

    /** @return the most payload one frame of this queue pair carries (less a protected frame's trailer) */
    int maxPayload();

    /** @return the requesting half */
    Requester requester();

    /** @return the responding half */
    Responder responder();

    /**
     * Fails the connection: flushes, enters ERROR, raises and tells the peer as asked.
     *
     * @param code       the event code
     * @param remote     whether the peer caused it
     * @param notifyPeer whether to send the peer a DISCONNECT
     * @param raise      whether to raise the event locally
     */
    void enterError(int code, boolean remote, boolean notifyPeer, boolean raise);

    /**
     * The peer broke the protocol: the connection fails with the event.
     *
     * @param event the event raised and sent to the peer
     */
    void protocolError(EventCode event);

    /**
     * An in-order sequenced frame was accepted; the sender may have asked for an immediate acknowledgement. A
     * standalone ACK leaves at once after a quarter of the sender's window: {@code windowFrames / 4} frames, or four
     * times as many small sends and writes, which the sender has four windows of (see {@link
     * ProtocolNic#smallWindow}).
     *
     * @param now          the current time
     * @param ackRequested whether the frame carried FORCE_ACK
     * @param small        whether it belongs to a send or write of at most {@link ProtocolNic#SMALL_FRAME} bytes (the
     *                     message, not the fragment), of which the sender may have {@link ProtocolNic#smallWindow}
     *                     in flight
     */
    void frameReceived(long now, boolean ackRequested, boolean small);

    /** A completion queue overflowed: the queue pair fails. */
    void completionLost();

    /**
     * A request from the peer failed at the responder: NAK it and enter ERROR.
     *
     * @param status the status code sent in the NAK
     * @param seq    the refused request
     * @param event  the event code sent in the NAK
     */
    void failRequest(int status, int seq, int event);

    /**
     * Reports a send queue completion.
     *
     * @param id     the work request id
     * @param status its status
     * @param type   its type
     * @param length bytes transferred (reads, atomics)
     * @param reap   send queue slots this completion frees
     * @return false if the completion queue overflowed
     */
    boolean completeSend(long id, WcStatus status, WcType type, int length, int reap);

    /**
     * Reports a receive completion, freeing one receive queue slot.
     *
     * @param id          the work request id
     * @param status      its status
     * @param wcFlags     completion flags
     * @param length      bytes received
     * @param immediate   immediate data
     * @param invalidated the r_key the sender invalidated
     * @return false if the completion queue overflowed
     */
    boolean completeRecv(long id, WcStatus status, int wcFlags, int length, int immediate, int invalidated);

    /**
     * Runs a local work request (a bind or a local invalidate) as it reaches admission.
     *
     * @param w the work request
     * @return its status
     */
    WcStatus runLocal(SendWr w);

    /**
     * A local work request completes FLUSHED (the queue pair failed before its completion's turn): takes back what
     * it did if it ran, so that a bind's window no longer grants access by its key; a bind that never ran ends the
     * binding it would have replaced, so that neither key grants access (as a bind that ran and was taken back).
     * Raises nothing.
     *
     * @param w   the work request
     * @param ran whether it ran (was admitted) before the flush
     */
    void undoLocal(SendWr w, boolean ran);

    /**
     * A flushed work request's completion found its completion queue full (or failed): the queue pair must end in
     * ERROR and say which queue (det.md 3.5: QP_SQ_ERROR, QP_RQ_ERROR), not look closed cleanly. Raises nothing
     * itself; the flush's caller does once it is done.
     *
     * @param receiveQueue whether it was a receive
     */
    void flushOverflowed(boolean receiveQueue);

    /**
     * Invalidates a type 2 window key a peer's send with invalidate names.
     *
     * @param rKey the key
     * @return true if it named a bound type 2 window of this queue pair's domain, now unbound
     */
    boolean invalidateRemote(int rKey);
}
