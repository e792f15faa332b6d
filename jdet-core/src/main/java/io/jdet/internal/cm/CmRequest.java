package io.jdet.internal.cm;

import io.jdet.ConnectionRequest;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.QueuePair;
import io.jdet.internal.verbs.QpImpl;

/**
 * The passive side of one connection exchange: a request as received, and what this side answered. Kept after the
 * answer for a while, so that a repeated request is answered the same way instead of being taken for a new one.
 * Guarded by the engine lock.
 */
final class CmRequest implements ConnectionRequest {
    static final int PENDING = 0;
    static final int ACCEPTED = 1;
    static final int ESTABLISHED = 2;
    static final int REJECTED = 3;
    /** The requester's READY did not prove the handshake's keys (wrong pre-shared or static key). */
    static final int AUTH_FAILED = 4;
    /** The requester answered the ACCEPT with a REJECT: it no longer waits for this exchange. */
    static final int ABANDONED = 5;

    final CmImpl cm;
    final long peer;
    final String remoteAddress;
    final int id;
    final int serviceId;
    final int remoteQp;
    final int peerRequestIsn;
    final int peerResponseIsn;
    final int remoteMaxOr;
    final int remoteMaxIr;
    final byte[] privateData;
    int state = PENDING;
    QpImpl qp;
    int requestIsn;
    int responseIsn;
    byte[] reply = new byte[0];
    int reason;
    CmRetry retry;
    /** The key agreement of a protected request, null for a plain one. */
    CmHandshake handshake;
    /** The requester's key-exchange block, when its request carried one (a REJECT's MAC covers it). */
    byte[] requestBlock;
    /** The address-validation cookie the request came back with (bound into a protected handshake). */
    long cookie;
    /** A protected ACCEPT's block and MAC, repeated when the requester asks again. */
    byte[] acceptBlock;
    /** Answers repeated to a repeated REQUEST so far, and when the last one left. */
    private int repeats;
    private long lastRepeatNs;

    /** The most answers repeated for one exchange: a requester that lost more has long given up. */
    static final int MAX_REPEATS = 8;

    CmRequest(final CmImpl cm, final long peer, final String remoteAddress, final int id, final int serviceId,
              final int remoteQp, final long isns, final long limits, final byte[] privateData) {
        this.cm = cm;
        this.peer = peer;
        this.remoteAddress = remoteAddress;
        this.id = id;
        this.serviceId = serviceId;
        this.remoteQp = remoteQp;
        this.peerRequestIsn = CmWire.low(isns);
        this.peerResponseIsn = CmWire.high(isns);
        this.remoteMaxOr = CmWire.low(limits);
        this.remoteMaxIr = CmWire.high(limits);
        this.privateData = privateData;
    }

    /**
     * Whether an answer may be repeated now: at most once per {@code intervalNs} and {@link #MAX_REPEATS} times in
     * all. An answer may be larger than the REQUEST (the acceptor's private data and key block), and a captured
     * REQUEST may be replayed from the requester's address while its cookie is valid: unbounded repeats would make
     * this NIC an amplifier.
     *
     * @param now        the current time
     * @param intervalNs the least time between two repeats
     * @return true if the caller may send the answer again (counted)
     */
    boolean mayRepeatAnswer(final long now, final long intervalNs) {
        if (repeats >= MAX_REPEATS || repeats > 0 && now - lastRepeatNs < intervalNs) {
            return false;
        }
        repeats++;
        lastRepeatNs = now;
        return true;
    }

    @Override
    public String remoteAddress() {
        return remoteAddress;
    }

    @Override
    public int remoteQpNumber() {
        return remoteQp;
    }

    @Override
    public int serviceId() {
        return serviceId;
    }

    @Override
    public int remoteMaxOr() {
        return remoteMaxOr;
    }

    @Override
    public int remoteMaxIr() {
        return remoteMaxIr;
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public void accept(final QueuePair queuePair, final byte[] data, final long timeoutMs) {
        cm.accept(this, queuePair, data, timeoutMs);
    }

    @Override
    public void reject(final byte[] data) {
        cm.reject(this, data);
    }

    void checkPending() {
        if (state != PENDING) {
            throw new DetException(Errno.EINVAL, "the request was answered already");
        }
    }

    @Override
    public String toString() {
        return "ConnectionRequest[from " + remoteAddress + " qp " + remoteQp + ", service " + serviceId + "]";
    }
}
