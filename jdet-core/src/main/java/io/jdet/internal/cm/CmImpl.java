package io.jdet.internal.cm;

import io.jdet.ConnectionListener;
import io.jdet.ConnectionManager;
import io.jdet.ConnectionRejectedException;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.QpState;
import io.jdet.QueuePair;
import io.jdet.Security;
import io.jdet.internal.protocol.Isn;
import io.jdet.internal.protocol.PeerValues;
import io.jdet.internal.verbs.CmHandler;
import io.jdet.internal.verbs.ControlCheck;
import io.jdet.internal.verbs.NicImpl;
import io.jdet.internal.verbs.QpImpl;
import io.jdet.internal.wire.Frame;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A NIC's connection manager. Its frames are unsequenced and addressed to queue pair 0; every request (connect,
 * accept, disconnect) is retransmitted on the NIC's timer until answered, and every answer is repeated when a
 * request repeats. All state is guarded by the engine lock; callers wait on a condition of that lock while the
 * NIC's progress thread runs the protocol.
 */
public final class CmImpl implements CmHandler {
    /** Reject reason: the application rejected the request. */
    static final int REJECTED_BY_PEER = 1;
    /** Reject reason: nobody listens on the service id (or its backlog is full). */
    static final int NO_LISTENER = 2;
    /** Reject reason: the request was malformed (a max_or or max_ir out of range, queue pair 0, too much data). */
    static final int MALFORMED = 3;
    /** Reject reason: the request's protection (none, AUTH or ENCRYPT) is not the listener's. */
    static final int SECURITY_MISMATCH = 4;
    /** Reject reason: the requester's static key is not one the listener trusts. */
    static final int UNTRUSTED = 5;
    /**
     * Reject reason, sent by a requester in answer to an ACCEPT it no longer waits for (its connect timed out, was
     * refused or was answered by another frame of the same exchange): the acceptor's {@code accept} fails at once
     * instead of waiting out its timeout for a READY that cannot come.
     */
    static final int ABANDONED = 6;
    /** Requests remembered at most; beyond it a refusal is answered without being remembered (a flood of
     *  requests cannot grow memory without bound). */
    static final int MAX_REMEMBERED = 4096;

    private final NicImpl nic;
    private final CmWire wire;
    /** How often a disconnect looks again at what it waits for (the data path signals no one). */
    private static final long WAIT_SLICE_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private final Map<Integer, CmListener> listeners = new HashMap<>();
    private final Map<PeerId, CmRequest> incoming = new HashMap<>();
    private final Map<Integer, CmOutgoing> connects = new HashMap<>();
    private final Map<Integer, CmOutgoing> disconnects = new HashMap<>();
    private final CmCookie cookies = new CmCookie();
    private final CmSources sources;
    /** How new connections are protected; written by the application, read under the engine lock. */
    private volatile Security security;
    /** READY frames a requester sends again, on its retry schedule, in case the first was lost. */
    private static final int READY_RESENDS = 3;
    /** The longest the timer goes without walking the exchanges (to see ones that finished, for their expiry). */
    private static final long RESCAN_NS = 5_000_000_000L;
    /** When the timer next walks the exchanges, unless {@link #rescan} asks for it sooner. */
    private long nextScanNs;
    /** An exchange was added since the last walk. */
    private boolean rescan = true;

    /** A request as its sender names it: the sender's link handle and its connection id. */
    private record PeerId(long peer, int id) {
    }

    /**
     * A NIC's connection manager; the device creates one per NIC through the factory it is opened with.
     *
     * @param nic the NIC whose CM frames it handles
     */
    public CmImpl(final NicImpl nic) {
        this.nic = nic;
        this.wire = new CmWire(nic);
        this.sources = new CmSources(nic.link.address().startsWith("udp:"),
            nic.device.configuration.cmPendingPerSource());
        this.security = nic.device.configuration.security();
    }

    @Override
    public void security(final Security value) {
        if (value == null) {
            throw new IllegalArgumentException("security must not be null");
        }
        security = value;
    }

    @Override
    public Security security() {
        return security;
    }

    // ---------------------------------------------------------------- API

    @Override
    public ConnectionListener listen(final int serviceId) {
        nic.lock.lock();
        try {
            nic.checkOpen();
            if (listeners.containsKey(serviceId)) {
                throw new DetException(Errno.EEXIST, "this NIC listens on service " + serviceId + " already");
            }
            final CmListener listener = new CmListener(this, serviceId);
            listeners.put(serviceId, listener);
            return listener;
        } finally {
            nic.lock.unlock();
        }
    }

    CmRequest take(final CmListener listener, final long timeoutMs) {
        nic.lock.lock();
        try {
            final boolean ready = await(() -> listener.closed || !listener.queue.isEmpty(), timeoutMs);
            if (listener.closed) {
                throw new IllegalStateException("listener closed");
            }
            if (!ready) {
                throw new DetException(Errno.ETIMEDOUT, "no connection request within " + timeoutMs + " ms");
            }
            return listener.queue.poll();
        } finally {
            nic.lock.unlock();
        }
    }

    void unlisten(final CmListener listener) {
        nic.lock.lock();
        try {
            if (listener.closed) {
                return;
            }
            listener.closed = true;
            listeners.remove(listener.serviceId());
            for (final CmRequest r : listener.queue) {
                r.state = CmRequest.REJECTED;
                r.reason = NO_LISTENER;
                r.retry = new CmRetry(nic.minRtoNs, System.nanoTime());
                r.retry.finish(System.nanoTime());
                sendAnswer(r);
            }
            listener.queue.clear();
            nic.lock.signalAll();
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public byte[] connect(final String remoteAddress, final int serviceId, final QueuePair queuePair,
                          final byte[] privateData, final long timeoutMs) {
        final byte[] data = checkData(privateData, timeoutMs);
        nic.lock.lock();
        try {
            nic.checkOpen();
            nic.checkAlive();
            final QpImpl qp = idleQp(queuePair);
            final long peer = nic.link.resolve(remoteAddress);
            if (peer < 0) {
                throw new DetException(Errno.ENODEV, "cannot reach " + remoteAddress + " from " + nic.address());
            }
            int id;
            do {
                id = Isn.next();
            } while (id == 0 || connects.containsKey(id));
            final long now = System.nanoTime();
            final CmOutgoing o = new CmOutgoing(id, peer, qp, serviceId, data, isn(), isn(),
                new CmRetry(nic.minRtoNs, now));
            final Security s = security;
            o.handshake = s.mode() == Security.Mode.NONE ? null : new CmHandshake(s);
            connects.put(id, o);
            rescan = true; // its retransmissions may be due before the timer's next planned walk
            nic.timerAt(o.retry.nextNs());
            sendRequest(o);
            final boolean answered;
            try {
                answered = await(() -> o.state != CmOutgoing.REQUESTED, timeoutMs);
            } catch (final RuntimeException e) { // EINTR, EIO, closed: forget the exchange, so it connects nothing
                if (o.state == CmOutgoing.ESTABLISHED) {
                    return o.reply.clone(); // connected as the wait ended: a success (interrupt status kept)
                }
                connects.remove(id);
                throw e;
            }
            if (!answered) {
                connects.remove(id);
                throw new DetException(Errno.ETIMEDOUT, "no answer from " + remoteAddress + " service " + serviceId
                    + " within " + timeoutMs + " ms");
            }
            switch (o.state) {
                case CmOutgoing.ESTABLISHED -> {
                    return o.reply.clone();
                }
                case CmOutgoing.REJECTED -> {
                    connects.remove(id);
                    if (o.reason == NO_LISTENER) {
                        throw new ConnectionRejectedException(ConnectionRejectedException.Reason.NO_LISTENER, null,
                            "nobody listens on service " + serviceId + " at " + remoteAddress);
                    }
                    if (o.reason == SECURITY_MISMATCH) {
                        throw new DetException(Errno.ECONNREFUSED, remoteAddress + " service " + serviceId
                            + " refused the protection " + (o.handshake == null ? "NONE" : security.mode())
                            + ": its connection manager is set to another Security mode");
                    }
                    if (o.reason == UNTRUSTED) {
                        throw new DetException(Errno.EACCES, remoteAddress + " does not trust this side's static key");
                    }
                    if (o.reason == MALFORMED) {
                        throw new DetException(Errno.ECONNREFUSED, "malformed handshake with " + remoteAddress
                            + " (a limit out of range)");
                    }
                    throw new ConnectionRejectedException(ConnectionRejectedException.Reason.REJECTED, o.reply,
                        "the peer rejected the connection, with " + o.reply.length + " bytes of private data");
                }
                case CmOutgoing.AUTH_FAILED -> {
                    connects.remove(id);
                    throw new DetException(o.failure.startsWith("mode:") ? Errno.ECONNREFUSED : Errno.EACCES,
                        "protected handshake with " + remoteAddress + " failed: " + o.failure);
                }
                default -> {
                    connects.remove(id);
                    throw new DetException(Errno.EINVAL, "the queue pair left IDLE while connecting");
                }
            }
        } finally {
            nic.lock.unlock();
        }
    }

    void accept(final CmRequest r, final QueuePair queuePair, final byte[] privateData, final long timeoutMs) {
        final byte[] data = checkData(privateData, timeoutMs);
        nic.lock.lock();
        try {
            nic.checkOpen();
            nic.checkAlive();
            r.checkPending();
            final QpImpl qp = idleQp(queuePair);
            r.qp = qp;
            r.reply = data;
            r.requestIsn = isn();
            r.responseIsn = isn();
            final int maxOr = Math.min(qp.maxOr, r.remoteMaxIr); // what the ACCEPT will carry
            if (r.handshake != null) {
                final String failed = r.handshake.derive(false, CmHandshake.fields(r.serviceId, r.id, r.remoteQp,
                    qp.number, r.peerRequestIsn, r.peerResponseIsn, r.requestIsn, r.responseIsn, r.cookie,
                    CmWire.pack(r.remoteMaxOr, r.remoteMaxIr), CmWire.pack(maxOr, qp.maxIr), r.privateData, data));
                if (failed != null) {
                    nic.counters.cmAuthFailed++;
                    r.state = CmRequest.REJECTED;
                    r.reason = UNTRUSTED;
                    r.retry = new CmRetry(nic.minRtoNs, System.nanoTime());
                    r.retry.finish(System.nanoTime());
                    sendAnswer(r);
                    throw new DetException(Errno.EACCES, "protected handshake with " + r.remoteAddress + ": "
                        + failed);
                }
                r.acceptBlock = concat(r.handshake.block(), r.handshake.serverMac());
            }
            qp.maxOr = maxOr;
            // Connected before the acceptance leaves: the requester's first frame cannot find it unconnected.
            qp.connectTo(r.peer, r.remoteAddress, r.remoteQp, r.requestIsn, r.responseIsn, r.peerRequestIsn,
                r.peerResponseIsn);
            if (r.handshake != null) {
                qp.protect(r.handshake.seal(false, nic)); // keyed before its first frame can leave or arrive
            }
            r.state = CmRequest.ACCEPTED;
            r.retry = new CmRetry(nic.minRtoNs, System.nanoTime());
            rescan = true; // the timer resends the ACCEPT until READY
            nic.timerAt(r.retry.nextNs());
            sendAnswer(r);
            final boolean confirmed;
            try {
                confirmed = await(() -> r.state != CmRequest.ACCEPTED, timeoutMs);
            } catch (final RuntimeException e) { // EINTR, EIO, closed: the accept fails as a timeout does
                if (r.state == CmRequest.ESTABLISHED) {
                    return; // confirmed as the wait ended: a success (the interrupt status stays set)
                }
                if (r.state == CmRequest.ACCEPTED) {
                    r.state = CmRequest.REJECTED; // no more ACCEPTs, and the source's slot is free
                    r.reason = REJECTED_BY_PEER;
                    r.reply = NO_DATA; // the acceptance's private data is no rejection's
                    r.retry.finish(System.nanoTime());
                }
                qp.enterError(EventCode.QP_ERROR.code(), false, true, true); // connected above: not left live
                throw e;
            }
            if (!confirmed) {
                r.state = CmRequest.REJECTED;
                r.reason = REJECTED_BY_PEER;
                r.reply = NO_DATA; // a repeated request is refused, without what the application accepted with
                r.retry.finish(System.nanoTime());
                qp.enterError(EventCode.QP_ERROR.code(), false, true, true);
                throw new DetException(Errno.ETIMEDOUT, "the requester did not confirm within " + timeoutMs + " ms");
            }
            if (r.state == CmRequest.ABANDONED) {
                qp.enterError(EventCode.QP_ERROR.code(), false, true, true);
                throw new DetException(Errno.ECONNRESET, r.remoteAddress + " no longer waits for this connection"
                    + " (its connect timed out or was answered otherwise before the acceptance came)");
            }
            if (r.state == CmRequest.AUTH_FAILED) {
                qp.enterError(EventCode.QP_ERROR.code(), false, true, true);
                throw new DetException(Errno.EACCES, "the requester " + r.remoteAddress + " did not prove the"
                    + " handshake's keys (another pre-shared key or static key)");
            }
        } finally {
            nic.lock.unlock();
        }
    }

    void reject(final CmRequest r, final byte[] privateData) {
        final byte[] data = checkData(privateData, 0);
        nic.lock.lock();
        try {
            nic.checkOpen(); // as accept: a closed NIC answers nothing, and the request stays unanswered
            r.checkPending();
            r.state = CmRequest.REJECTED;
            r.reason = REJECTED_BY_PEER;
            r.reply = data;
            r.retry = new CmRetry(nic.minRtoNs, System.nanoTime());
            r.retry.finish(System.nanoTime());
            sendAnswer(r);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public void disconnect(final QueuePair queuePair, final long timeoutMs) {
        checkData(null, timeoutMs);
        final QpImpl qp = qpOf(queuePair);
        nic.lock.lock();
        try {
            qp.checkOpen();
            if (qp.state != QpState.CONNECTED) {
                throw new DetException(Errno.ENOTCONN, "queue pair is " + qp.state);
            }
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            // The connection this call ends. Once it has ended (the peer disconnected first, it failed), the queue
            // pair may be connected again by another thread before this one gets the lock back: that later
            // connection is not this call's to end.
            final int incarnation = qp.epoch();
            final BooleanSupplier live = () -> qp.state == QpState.CONNECTED && qp.epoch() == incarnation;
            // What this waits for happens on the data path, which signals no one: looked at every slice.
            final boolean quiet = await(() -> !live.getAsBoolean() || qp.quiescent(), timeoutMs, WAIT_SLICE_NS);
            if (!live.getAsBoolean()) {
                return; // the peer disconnected first, or the connection failed: nothing left to close
            }
            if (!quiet) {
                qp.disconnect(EventCode.DISCONNECT.code(), false, true);
                throw new DetException(Errno.ETIMEDOUT, "outstanding work did not finish within " + timeoutMs
                    + " ms; flushed");
            }
            int id;
            do {
                id = Isn.next();
            } while (id == 0 || disconnects.containsKey(id));
            final CmOutgoing d = new CmOutgoing(id, qp.remotePeer, qp, 0, new byte[0], 0, 0,
                new CmRetry(nic.minRtoNs, System.nanoTime()));
            d.epoch = incarnation;
            disconnects.put(id, d);
            rescan = true;
            nic.timerAt(d.retry.nextNs());
            sendDisconnect(d);
            final long leftMs = Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
            final boolean answered;
            try {
                answered = await(() -> d.state != CmOutgoing.REQUESTED || !live.getAsBoolean(),
                    leftMs, WAIT_SLICE_NS); // the peer's DISCONNECT frame, too, changes the state on the data path
            } catch (final RuntimeException e) { // EINTR and the like: disconnected locally all the same
                disconnects.remove(id);
                if (live.getAsBoolean() && !qp.destroyed) {
                    qp.disconnect(EventCode.DISCONNECT.code(), false, d.state == CmOutgoing.REQUESTED);
                }
                throw e;
            }
            disconnects.remove(id);
            if (live.getAsBoolean()) {
                qp.disconnect(EventCode.DISCONNECT.code(), false, !answered);
            }
            if (!answered) {
                throw new DetException(Errno.ETIMEDOUT, "the peer did not answer the disconnect within " + timeoutMs
                    + " ms");
            }
        } finally {
            nic.lock.unlock();
        }
    }

    // ---------------------------------------------------------------- frames in

    /** A connection manager frame, CRC and header checked. Engine lock held. */
    @Override
    public void onFrame(final MemorySegment f, final int opcode, final long peer) {
        nic.counters.cmReceived++;
        switch (opcode) {
            case Frame.OP_CM_REQUEST -> onRequest(f, peer);
            case Frame.OP_CM_ACCEPT -> onAccept(f, peer);
            case Frame.OP_CM_REJECT -> {
                if (Frame.length(f) == ABANDONED) {
                    onAbandoned(Frame.msgId(f), peer);
                    return;
                }
                final CmOutgoing o = connects.get(Frame.msgId(f));
                if (o == null || o.peer != peer || o.state != CmOutgoing.REQUESTED) {
                    nic.counters.cmIgnored++;
                    return;
                }
                final byte[] psk = o.handshake == null ? null : o.handshake.preSharedKey();
                if (psk != null && !CmHandshake.rejectMacValid(psk, o.handshake.block(), o.id, o.serviceId,
                    Frame.length(f), CmWire.privateData(f), CmWire.block(f))) {
                    nic.counters.cmRejectUnauthenticated++; // spoofed, or a listener without this key
                    return;
                }
                o.state = CmOutgoing.REJECTED;
                o.reason = Frame.length(f);
                o.reply = CmWire.privateData(f);
                nic.lock.signalAll();
            }
            case Frame.OP_CM_READY -> {
                final CmRequest r = incoming.get(new PeerId(peer, Frame.msgId(f)));
                if (r == null || r.state != CmRequest.ACCEPTED) {
                    nic.counters.cmIgnored++;
                    return;
                }
                if (r.handshake != null && !r.handshake.peerMacValid(false, CmWire.block(f))) {
                    nic.counters.cmAuthFailed++;
                    r.state = CmRequest.AUTH_FAILED;
                    r.retry.finish(System.nanoTime());
                    nic.lock.signalAll();
                    return;
                }
                r.state = CmRequest.ESTABLISHED;
                r.retry.finish(System.nanoTime());
                nic.lock.signalAll();
            }
            case Frame.OP_CM_DISCONNECT -> onDisconnect(f, peer);
            case Frame.OP_CM_COOKIE -> {
                final CmOutgoing o = connects.get(Frame.msgId(f));
                if (o == null || o.peer != peer || o.state != CmOutgoing.REQUESTED || Frame.operand2(f) == 0) {
                    nic.counters.cmIgnored++;
                    return;
                }
                o.cookie = Frame.operand2(f);
                sendRequest(o); // at once: the listener keeps nothing until the cookie comes back
            }
            default -> {
                final CmOutgoing d = disconnects.get(Frame.msgId(f));
                if (d == null || d.peer != peer || d.state != CmOutgoing.REQUESTED) {
                    nic.counters.cmIgnored++;
                    return;
                }
                d.state = CmOutgoing.DISCONNECTED;
                nic.lock.signalAll();
            }
        }
    }

    private void onRequest(final MemorySegment f, final long peer) {
        final long now = System.nanoTime();
        if (!cookies.valid(Frame.operand2(f), peer, Frame.msgId(f), Frame.key(f), Frame.srcQp(f), now)) {
            // Not validated: answer with a cookie, no larger than the request, and keep nothing.
            if (Frame.operand2(f) != 0) {
                nic.counters.cmBadCookie++;
            }
            nic.counters.cmCookies++;
            wire.send(peer, Frame.OP_CM_COOKIE, 0, Frame.msgId(f), Frame.key(f), 0, 0, 0, NO_DATA, 0,
                cookies.issue(peer, Frame.msgId(f), Frame.key(f), Frame.srcQp(f), now));
            return;
        }
        final PeerId key = new PeerId(peer, Frame.msgId(f));
        final CmRequest known = incoming.get(key);
        if (known != null) {
            if (known.state != CmRequest.PENDING
                && known.mayRepeatAnswer(now, Math.max(nic.minRtoNs, TimeUnit.MILLISECONDS.toNanos(1)))) {
                sendAnswer(known); // the answer was lost, and the requester's retry asks for it again
            }
            return;
        }
        final int serviceId = Frame.key(f);
        final CmRequest r = new CmRequest(this, peer, nic.link.describe(peer), key.id(), serviceId, Frame.srcQp(f),
            Frame.address(f), Frame.operand1(f), CmWire.privateData(f));
        r.cookie = Frame.operand2(f);
        r.requestBlock = (Frame.flags(f) & Frame.FLAG_PROTECTED) != 0 ? CmWire.block(f) : null;
        final CmListener listener = listeners.get(serviceId);
        final boolean malformed = !wellFormed(f);
        if (!malformed && listener != null && !protectionAgreed(r, f)) {
            r.state = CmRequest.REJECTED; // refused without being remembered, as below
            sendAnswer(r);
            return;
        }
        final boolean sourceFull = !malformed && listener != null && !sources.allows(incoming.values(), peer);
        if (!malformed && listener != null && incoming.size() >= MAX_REMEMBERED) {
            CmSources.evictAnswered(incoming.values());
        }
        if (sourceFull) {
            nic.counters.cmSourceLimited++;
        }
        if (malformed || listener == null || listener.queue.size() >= CmListener.BACKLOG
            || incoming.size() >= MAX_REMEMBERED || sourceFull) {
            // Refused without being remembered: a repeat is refused again the same way, so no state is spent.
            r.state = CmRequest.REJECTED;
            r.reason = malformed ? MALFORMED : NO_LISTENER;
            sendAnswer(r);
            return;
        }
        incoming.put(key, r);
        listener.queue.add(r);
        nic.lock.signalAll();
    }

    /**
     * Whether a validated request asks for this side's protection and, with static keys, presents a trusted one;
     * if so, its key agreement starts ({@code r.handshake}). If not, sets the reject reason and counts it.
     */
    private boolean protectionAgreed(final CmRequest r, final MemorySegment f) {
        final Security s = security;
        final byte[] block = CmWire.block(f);
        if (s.mode() == Security.Mode.NONE && block == null) {
            return true;
        }
        if (s.mode() == Security.Mode.NONE || block == null || CmHandshake.modeOf(block) != s.mode()) {
            nic.counters.cmAuthFailed++;
            r.reason = SECURITY_MISMATCH;
            return false;
        }
        final CmHandshake h = new CmHandshake(s);
        if (h.takePeer(block) != null) {
            nic.counters.cmAuthFailed++;
            r.reason = UNTRUSTED;
            return false;
        }
        r.handshake = h;
        return true;
    }

    /**
     * The requester's half of a protected handshake, on a well-formed ACCEPT: checks the acceptor's block and MAC;
     * on success connects and protects the queue pair and returns null, else returns why it failed (prefixed
     * {@code mode:} when the protection differs).
     */
    private String finishHandshake(final CmOutgoing o, final MemorySegment f, final long peer) {
        final byte[] block = CmWire.block(f);
        if (o.handshake == null) {
            return block == null ? null : "mode: the acceptor protects the connection, this side does not";
        }
        if (block == null) {
            return "mode: the acceptor does not protect the connection";
        }
        final byte[] exchange = java.util.Arrays.copyOf(block, CmHandshake.BLOCK_LENGTH);
        final String refused = o.handshake.takePeer(exchange);
        if (refused != null) {
            if (CmHandshake.modeOf(exchange) == o.handshake.mode()) {
                // An untrusted static key: a READY whose MAC cannot be right makes the acceptor fail at once too.
                wire.send(peer, Frame.OP_CM_READY, o.qp.number, o.id, o.serviceId, 0, 0, 0, NO_DATA, 0, 0,
                    new byte[CmHandshake.MAC_LENGTH]);
                return refused;
            }
            return "mode: " + refused;
        }
        final long isns = Frame.address(f);
        final String failed = o.handshake.derive(true, CmHandshake.fields(o.serviceId, o.id, o.qp.number,
            Frame.srcQp(f), o.requestIsn, o.responseIsn, CmWire.low(isns), CmWire.high(isns), Frame.operand2(f),
            CmWire.pack(o.qp.maxOr, o.qp.maxIr), Frame.operand1(f), o.privateData, CmWire.privateData(f)));
        if (failed != null) {
            return failed;
        }
        if (!o.handshake.peerMacValid(true, java.util.Arrays.copyOfRange(block, CmHandshake.BLOCK_LENGTH,
            block.length))) {
            // Tell the acceptor at once with a READY whose MAC cannot verify, so that its accept fails too. Not
            // this side's own MAC: when only the acceptor's MAC was altered on the way, both sides hold the same
            // keys, and the acceptor would take this side's MAC and be left connected to a peer that gave up.
            wire.send(peer, Frame.OP_CM_READY, o.qp.number, o.id, o.serviceId, 0, 0, 0, NO_DATA, 0, 0,
                new byte[CmHandshake.MAC_LENGTH]);
            return "the acceptor did not prove the handshake's keys (another pre-shared key or static key)";
        }
        o.readyBlock = o.handshake.clientMac();
        return null;
    }

    private void onAccept(final MemorySegment f, final long peer) {
        final CmOutgoing o = connects.get(Frame.msgId(f));
        if (o != null && o.peer == peer && o.state == CmOutgoing.ESTABLISHED) {
            sendReady(o);
            return;
        }
        if (o == null || o.peer != peer || o.state != CmOutgoing.REQUESTED) {
            // An acceptance of an exchange this side gave up (a connect that timed out or was refused while a
            // retransmitted request was still on its way): say so, or the acceptor waits its whole timeout for a
            // READY. Rate-limited, and no larger than the ACCEPT it answers.
            nic.counters.cmIgnored++;
            if (nic.unknownReplyAllowed(System.nanoTime())) {
                wire.send(peer, Frame.OP_CM_REJECT, 0, Frame.msgId(f), Frame.key(f), 0, 0, ABANDONED, NO_DATA);
            }
            return;
        }
        final QpImpl qp = o.qp;
        if (qp.destroyed || qp.state != QpState.IDLE) {
            o.state = CmOutgoing.FAILED;
            nic.lock.signalAll();
            return;
        }
        if (!wellFormed(f)) {
            // The acceptor's limits would leave the queue pair unusable (a negative max_or starts no read): refuse.
            o.state = CmOutgoing.REJECTED;
            o.reason = MALFORMED;
            o.retry.finish(System.nanoTime());
            nic.lock.signalAll();
            return;
        }
        final String failed = finishHandshake(o, f, peer);
        if (failed != null) {
            nic.counters.cmAuthFailed++;
            o.state = CmOutgoing.AUTH_FAILED;
            o.failure = failed;
            o.retry.finish(System.nanoTime());
            nic.lock.signalAll();
            return;
        }
        final long isns = Frame.address(f);
        qp.maxOr = Math.min(qp.maxOr, CmWire.high(Frame.operand1(f)));
        qp.connectTo(peer, nic.link.describe(peer), Frame.srcQp(f), o.requestIsn, o.responseIsn, CmWire.low(isns),
            CmWire.high(isns));
        if (o.handshake != null) {
            qp.protect(o.handshake.seal(true, nic));
        }
        o.state = CmOutgoing.ESTABLISHED;
        o.reply = CmWire.privateData(f);
        o.retry.finish(System.nanoTime());
        sendReady(o);
        nic.lock.signalAll();
    }

    /**
     * Whether a CM_REQUEST or CM_ACCEPT is well formed: a queue pair number other than 0 (the connection manager's
     * own), max_or and max_ir in [0, {@link PeerValues#MAX_RD_ATOMIC}], at most {@link #MAX_PRIVATE_DATA} bytes of
     * private data. Counts a malformed one.
     */
    private boolean wellFormed(final MemorySegment f) {
        final long limits = Frame.operand1(f);
        if (Frame.srcQp(f) != 0 && PeerValues.rdAtomicLimit(CmWire.low(limits))
            && PeerValues.rdAtomicLimit(CmWire.high(limits))
            && Frame.payloadLength(f) - CmWire.blockLength(f) <= MAX_PRIVATE_DATA) {
            return true;
        }
        nic.counters.cmMalformed++;
        return false;
    }

    /**
     * The requester of an exchange this side accepted says it no longer waits for it: the pending {@code accept}
     * fails at once. Only an acceptance still waiting for READY is touched; an established or refused exchange is
     * not, so a late or forged frame cannot undo a connection.
     */
    private void onAbandoned(final int id, final long peer) {
        final CmRequest r = incoming.get(new PeerId(peer, id));
        if (r == null || r.state != CmRequest.ACCEPTED) {
            nic.counters.cmIgnored++;
            return;
        }
        r.state = CmRequest.ABANDONED;
        r.retry.finish(System.nanoTime());
        nic.lock.signalAll();
    }

    private void onDisconnect(final MemorySegment f, final long peer) {
        final int target = Frame.key(f);
        final int from = Frame.srcQp(f);
        final Object o = nic.qpTable.lookup(target);
        if (o instanceof QpImpl qp && qp.number == target && !qp.destroyed && qp.state == QpState.CONNECTED) {
            if (qp.remotePeer != peer || qp.remoteQpNum != from) {
                nic.counters.foreignSource++;
                return; // only the connected peer may disconnect a queue pair
            }
            if (qp.seal != null && !java.security.MessageDigest.isEqual(CmWire.block(f),
                qp.seal.controlMac(disconnectFields(Frame.msgId(f), Frame.seq(f), from, target)))) {
                nic.counters.sealBadTag++; // a protected connection ends only by its peer's authenticated word
                return;
            }
            if (!ControlCheck.exact(qp, Frame.seq(f))) {
                return; // the peer disconnects only when quiescent, so its next request is exactly the expected one
            }
            qp.disconnect(EventCode.DISCONNECT.code(), true, false);
            nic.lock.signalAll();
            wire.send(peer, Frame.OP_CM_DISCONNECT_REPLY, target, Frame.msgId(f), from, 0, 0, 0, NO_DATA);
            return;
        }
        // Not connected (any more): a repeat whose first answer was lost gets the same answer, but from the budget of
        // replies to unknown traffic, so that spoofed CM_DISCONNECTs are reflected as a trickle at most.
        if (nic.unknownReplyAllowed(System.nanoTime())) {
            wire.send(peer, Frame.OP_CM_DISCONNECT_REPLY, target, Frame.msgId(f), from, 0, 0, 0, NO_DATA);
        }
    }

    // ---------------------------------------------------------------- frames out, timer

    private static final byte[] NO_DATA = new byte[0];

    private void sendRequest(final CmOutgoing o) {
        wire.send(o.peer, Frame.OP_CM_REQUEST, o.qp.number, o.id, o.serviceId,
            CmWire.pack(o.requestIsn, o.responseIsn), CmWire.pack(o.qp.maxOr, o.qp.maxIr), 0, o.privateData, 0,
            o.cookie, o.handshake == null ? null : o.handshake.block());
    }

    private void sendReady(final CmOutgoing o) {
        wire.send(o.peer, Frame.OP_CM_READY, o.qp.number, o.id, o.serviceId, 0, 0, 0, NO_DATA, 0, 0, o.readyBlock);
    }

    private static byte[] concat(final byte[] a, final byte[] b) {
        final byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    private void sendAnswer(final CmRequest r) {
        if (r.state == CmRequest.REJECTED) {
            final byte[] psk = security.preSharedKey();
            final byte[] mac = psk == null || r.requestBlock == null ? null
                : CmHandshake.rejectMac(psk, r.requestBlock, r.id, r.serviceId, r.reason, r.reply);
            wire.send(r.peer, Frame.OP_CM_REJECT, 0, r.id, r.serviceId, 0, 0, r.reason, r.reply, 0, 0, mac);
        } else {
            wire.send(r.peer, Frame.OP_CM_ACCEPT, r.qp.number, r.id, r.serviceId,
                CmWire.pack(r.requestIsn, r.responseIsn), CmWire.pack(r.qp.maxOr, r.qp.maxIr), 0, r.reply, 0,
                r.cookie, r.acceptBlock);
        }
    }

    private void sendDisconnect(final CmOutgoing d) {
        final int seq = d.qp.nextRequestSeq();
        wire.send(d.peer, Frame.OP_CM_DISCONNECT, d.qp.number, d.id, d.qp.remoteQpNum, 0, 0, 0, NO_DATA, seq, 0,
            d.qp.seal == null ? null : d.qp.seal.controlMac(disconnectFields(d.id, seq, d.qp.number,
                d.qp.remoteQpNum)));
    }

    /** What a protected CM_DISCONNECT's MAC covers: its id, sequence number, sender's and target queue pairs. */
    private static byte[] disconnectFields(final int id, final int seq, final int from, final int target) {
        return java.nio.ByteBuffer.allocate(20).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(Frame.OP_CM_DISCONNECT)
            .putInt(id).putInt(seq).putInt(from).putInt(target).array();
    }

    /**
     * Retransmits what is due and forgets finished exchanges. Engine lock held. Allocation free while nothing is
     * due: the maps are walked (an iterator each) only when the earliest retransmission or expiry found by the
     * last walk has come, a new exchange was added, or {@link #RESCAN_NS} passed (an exchange that finished since
     * starts lingering unseen until then); connections made by the connection manager otherwise leave remembered
     * exchanges behind for {@link CmRetry#LINGER_NS} that every tick would walk.
     */
    @Override
    public void onTimer(final long now) {
        if (!rescan && now - nextScanNs < 0) {
            return;
        }
        rescan = false;
        long next = now + RESCAN_NS;
        if (!incoming.isEmpty()) {
            for (final Iterator<CmRequest> i = incoming.values().iterator(); i.hasNext();) {
                final CmRequest r = i.next();
                if (r.retry != null && r.retry.expired(now)) {
                    i.remove();
                    continue;
                } else if (r.retry != null && r.retry.lingerUntilNs - next < 0) {
                    next = r.retry.lingerUntilNs;
                }
                if (r.state == CmRequest.ACCEPTED && r.retry != null) {
                    // Until READY comes: the requester resends READY only a few times, so under a burst of loss
                    // an accept could fail while its connect had succeeded (the requester answers a repeated
                    // ACCEPT with READY again). Bounded by the accept's timeout, sent only to the address the
                    // application accepted.
                    if (r.retry.due(now)) {
                        nic.counters.cmRetransmitted++;
                        sendAnswer(r);
                    }
                    next = earlier(next, r.retry.nextNs());
                }
            }
        }
        if (!connects.isEmpty()) {
            for (final Iterator<CmOutgoing> i = connects.values().iterator(); i.hasNext();) {
                final CmOutgoing o = i.next();
                if (o.retry.expired(now)) {
                    i.remove();
                    continue;
                } else if (o.state == CmOutgoing.REQUESTED && o.retry.due(now)) {
                    nic.counters.cmRetransmitted++;
                    sendRequest(o);
                } else if (o.state == CmOutgoing.ESTABLISHED && o.readyResends < READY_RESENDS && o.retry.due(now)) {
                    o.readyResends++; // the listener does not resend its ACCEPT: a lost READY is covered here
                    nic.counters.cmRetransmitted++;
                    sendReady(o);
                }
                if (o.state == CmOutgoing.REQUESTED
                    || o.state == CmOutgoing.ESTABLISHED && o.readyResends < READY_RESENDS) {
                    next = earlier(next, o.retry.nextNs());
                }
                next = earlier(next, o.retry.lingerUntilNs);
            }
        }
        if (!disconnects.isEmpty()) {
            for (final CmOutgoing d : disconnects.values()) {
                if (d.qp.state != QpState.CONNECTED || d.qp.epoch() != d.epoch) {
                    continue; // its connection ended; the queue pair may have another now, which this must not end
                }
                if (d.state == CmOutgoing.REQUESTED && d.retry.due(now)) {
                    nic.counters.cmRetransmitted++;
                    sendDisconnect(d);
                }
                if (d.state == CmOutgoing.REQUESTED) {
                    next = earlier(next, d.retry.nextNs());
                }
            }
        }
        nextScanNs = next;
    }

    @Override
    public long nextDeadline() {
        return nextScanNs;
    }

    private static long earlier(final long a, final long b) {
        return b - a < 0 ? b : a;
    }

    // ---------------------------------------------------------------- helpers

    /**
     * Waits on the engine lock's condition ({@link io.jdet.internal.link.LinkLock#awaitNanos}) until done or the time
     * runs out; the progress thread serves frames.
     */
    private boolean await(final BooleanSupplier done, final long timeoutMs) {
        return await(done, timeoutMs, Long.MAX_VALUE); // what it waits for is signalled (CM frames, close)
    }

    /**
     * Waits until {@code done}, looking again at least every {@code sliceNs} (for what changes without a signal).
     */
    private boolean await(final BooleanSupplier done, final long timeoutMs, final long sliceNs) {
        long leftNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        nic.device.blockedWaiters.incrementAndGet();
        nic.link.wakeup();
        try {
            while (!done.getAsBoolean()) {
                nic.checkAlive(); // a fatal NIC runs no protocol: nothing would ever answer
                nic.checkOpen(); // a closed one neither (close signals the condition)
                if (leftNs <= 0) {
                    return false;
                }
                final long slice = Math.min(leftNs, sliceNs);
                leftNs -= slice - nic.lock.awaitNanos(slice); // flushes what this thread staged as it lets go
            }
            return true;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DetException(Errno.EINTR, "interrupted while waiting for the peer");
        } finally {
            nic.device.blockedWaiters.decrementAndGet();
        }
    }

    private QpImpl qpOf(final QueuePair queuePair) {
        if (!(queuePair instanceof QpImpl qp) || qp.nic != nic) {
            throw new DetException(Errno.EINVAL, "not a queue pair of this NIC: " + queuePair);
        }
        return qp;
    }

    private QpImpl idleQp(final QueuePair queuePair) {
        final QpImpl qp = qpOf(queuePair);
        if (qp.destroyed) {
            throw new IllegalStateException("queue pair destroyed"); // as every closed object handed to a verb
        }
        if (qp.state != QpState.IDLE) {
            throw new DetException(Errno.EINVAL, "the queue pair is " + qp.state + ", not IDLE");
        }
        return qp;
    }

    private static byte[] checkData(final byte[] data, final long timeoutMs) {
        if (timeoutMs < 0) {
            throw new DetException(Errno.EINVAL, "negative timeout");
        }
        if (data != null && data.length > MAX_PRIVATE_DATA) {
            throw new DetException(Errno.EINVAL, data.length + " bytes of private data; the most is "
                + MAX_PRIVATE_DATA);
        }
        return data == null ? NO_DATA : data.clone();
    }

    /** A random initial sequence number: stale frames of an earlier connection then miss the window. */
    private static int isn() {
        return Isn.next();
    }

    /** The NIC failed fatally: wakes every caller waiting for the peer, so that it fails with EIO at once. */
    @Override
    public void nicFailed() {
        nic.lock.signalAll();
    }

    @Override
    public void close() {
        wire.close();
        nic.lock.signalAll(); // waiters see the NIC closed (engine lock held by the NIC's shutdown)
    }
}
