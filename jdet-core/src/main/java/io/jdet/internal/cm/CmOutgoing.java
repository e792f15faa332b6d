package io.jdet.internal.cm;

import io.jdet.internal.verbs.QpImpl;

/**
 * The active side of one connection manager exchange: a connection request or a disconnect this NIC sent, and
 * how it ended. A finished connection is kept for a while to confirm repeated acceptances. Guarded by the engine
 * lock.
 */
final class CmOutgoing {
    static final int REQUESTED = 0;
    static final int ESTABLISHED = 1;
    static final int REJECTED = 2;
    static final int FAILED = 3;
    static final int DISCONNECTED = 4;
    /** The acceptor did not prove the handshake's keys, or offered other protection: {@link #failure} says why. */
    static final int AUTH_FAILED = 5;

    final int id;
    final long peer;
    final QpImpl qp;
    final int serviceId;
    final byte[] privateData;
    final int requestIsn;
    final int responseIsn;
    final CmRetry retry;
    int state = REQUESTED;
    byte[] reply = new byte[0];
    int reason;
    /** The listener's address-validation cookie, once it sent one (0: none yet). */
    long cookie;
    /** READY frames sent again on the timer (a lost READY is not asked for again: ACCEPT is not resent). */
    int readyResends;
    /** The key agreement of a protected connection, null for a plain one. */
    CmHandshake handshake;
    /** A protected READY's MAC, null for a plain one. */
    byte[] readyBlock;
    /** Why the handshake failed ({@link #AUTH_FAILED}). */
    String failure;
    /** A disconnect: the incarnation of the queue pair whose connection it ends ({@code QpImpl.epoch()}). */
    int epoch;

    CmOutgoing(final int id, final long peer, final QpImpl qp, final int serviceId, final byte[] privateData,
               final int requestIsn, final int responseIsn, final CmRetry retry) {
        this.id = id;
        this.peer = peer;
        this.qp = qp;
        this.serviceId = serviceId;
        this.privateData = privateData;
        this.requestIsn = requestIsn;
        this.responseIsn = responseIsn;
        this.retry = retry;
    }
}
