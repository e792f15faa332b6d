package io.jdet.internal.protocol;

import io.jdet.EventCode;
import io.jdet.WcStatus;
import io.jdet.WrFlags;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;

import static io.jdet.internal.wire.Frame.after;

/**
 * The requesting half of a queue pair: the send queue, the outgoing request stream and the incoming response
 * stream.
 *
 * <p>Work requests are admitted in post order; admission gives a data request its range of sequence numbers (one
 * per frame), runs local operations (binds, invalidates) in send queue order, and holds back a fenced request or
 * a read or atomic beyond max_or (head of line, as DET). Frames go out while the window allows; the peer's
 * cumulative acknowledgement completes sends and writes; reads and atomics complete when their response has
 * arrived in order. Loss is repaired by going back to the first unacknowledged frame after a retransmission
 * timeout that follows the measured round-trip time with exponential back-off. Engine lock held throughout.
 */
public final class Requester implements OrderedStream {
    private final ProtocolQp qp;
    private final ProtocolNic nic;
    public final WorkRing<SendWr> queue;
    /** Next work request to report. */
    public long completeIdx;
    /** Next work request to admit. */
    public long admitIdx;
    /** First admitted request not yet known to be acknowledged. */
    private long ackScanIdx;
    /** The work request holding {@link #txSeq} (a search hint). */
    private long txIdx;
    private int nextSeq;
    private int txSeq;
    private int lastAcked;
    private int highestSent;
    private int nextMsgId;
    public int orDepth;
    private int pendingReap;
    /** Next in-order response sequence number expected. */
    public int rspExpected;
    private long lastProgressNs;
    private long lastAckProgressNs;
    private long lastResponseNs;
    private final RetransmitTimer rto;
    private int timedSeq;
    private long timedSentNs;
    private long rnrHoldUntilNs;
    /** Which requests beyond the cumulative ack the peer holds. */
    private final SackScoreboard scoreboard = new SackScoreboard();
    /** Responses that arrived beyond a gap, held until it fills. */
    public final HeldFrames heldResponses;

    public Requester(final ProtocolQp qp, final ProtocolNic nic, final int size) {
        this.qp = qp;
        this.nic = nic;
        this.queue = new WorkRing<>(size, SendWr::new);
        this.heldResponses = new HeldFrames(nic.reorder);
        this.rto = new RetransmitTimer(nic.minRtoNs, nic.maxRtoNs);
        reset();
    }

    public void reset() {
        heldResponses.drop();
        queue.clear();
        completeIdx = admitIdx = ackScanIdx = txIdx = 0;
        nextSeq = txSeq = 1;
        lastAcked = highestSent = 0;
        nextMsgId = 0;
        orDepth = 0;
        pendingReap = 0;
        rspExpected = 1;
        rto.reset();
        timedSeq = 0;
        rnrHoldUntilNs = 0;
        scoreboard.reset(0);
    }

    public void connected(final long now) {
        lastProgressNs = lastAckProgressNs = lastResponseNs = now;
    }

    /**
     * Starts the streams at negotiated sequence numbers instead of 1 (connection manager). Before any post.
     *
     * @param requestIsn      the first sequence number of the outgoing request stream
     * @param peerResponseIsn the first sequence number of the peer's response stream
     */
    public void startAt(final int requestIsn, final int peerResponseIsn) {
        nextSeq = txSeq = requestIsn;
        lastAcked = highestSent = requestIsn - 1;
        scoreboard.reset(lastAcked);
        rspExpected = peerResponseIsn;
        nextMsgId = Isn.firstMessageId(requestIsn);
    }

    /**
     * The request the peer most likely expects next, which a DISCONNECT carries (RFC 5961's exact match). While
     * requests are being sent again (a receiver-not-ready NAK, a NAK or a timeout sent this side back), it is the
     * first one not acknowledged: the peer lacks it. Otherwise it is the one after the last sent: on a working link
     * the frames in flight have arrived by the time a DISCONNECT sent after them does, so unacknowledged
     * unsignaled requests do not make it inexact. When every request is acknowledged the two agree. A peer that
     * expects another answers with a challenge ACK, whose echo then makes a repeated DISCONNECT exact.
     */
    public int nextRequestSeq() {
        return after(txSeq, highestSent) ? highestSent + 1 : lastAcked + 1;
    }

    /**
     * Whether a request-stream ack is one the peer can have sent: not beyond the highest request sent, and not
     * more than two windows behind the cumulative ack (RFC 5961's acceptable ACK range).
     */
    public boolean ackable(final int ack) {
        return !after(ack, highestSent) && !after(lastAcked - 2 * nic.smallWindow, ack);
    }

    /** Whether every posted work request has completed. */
    public boolean drained() {
        return completeIdx == queue.tail;
    }





    public void resize(final int size) {
        final long shift = queue.resize(size);
        completeIdx -= shift;
        admitIdx -= shift;
        ackScanIdx -= shift;
        txIdx = Math.max(0, txIdx - shift);
    }


    /**
     * Stands for a time not read yet: a post passes it, and the clock is read only where a frame needs a time stamp
     * (the first frame of a burst, a timed frame), so a burst of posts reads it about once, not once per post.
     */
    public static final long CLOCK_UNREAD = Long.MIN_VALUE;

    private static long clock(final long now) {
        return now != CLOCK_UNREAD ? now : System.nanoTime();
    }

    /** Commits the slot at the queue.tail and starts transmitting. */
    public void post() {
        final SendWr w = queue.at(queue.tail);
        w.ordinal = queue.tail;
        queue.tail++;
        nic.counters.wrPosted++;
        nic.beginBatch(); // the frames of a multi-frame request leave together, a lone frame at once
        try {
            pump(CLOCK_UNREAD);
        } finally {
            if ((w.flags & WrFlags.MORE) != 0 && txSeq == nextSeq && admitIdx == queue.tail) {
                // More posts follow and can send at once: their frames may share these frames' datagrams. Once
                // the window, max_or, a fence or a receiver-not-ready hold stops this queue pair, no company can
                // come, and what it staged leaves now.
                nic.endBatchHolding();
            } else {
                nic.endBatch();
            }
        }
        if (txSeq != nextSeq && qp.connected()) {
            nic.windowFull();
        }
    }

    // ---------------------------------------------------------------- transmit

    /**
     * Sends what the window, max_or, fences and the link allow.
     *
     * @param time the current time, or {@link #CLOCK_UNREAD}
     */
    public void pump(final long time) {
        long now = time;
        while (qp.connected()) {
            if (rnrHoldUntilNs != 0) {
                now = clock(now);
                if (now - rnrHoldUntilNs < 0) {
                    return;
                }
                rnrHoldUntilNs = 0;
                // The hold was this side's own wait, not the peer's silence: the ack timeout counts from the resend.
                lastAckProgressNs = now;
                nic.timerAt(now + nic.ackTimeoutNs);
            }
            if (txSeq == nextSeq) {
                if (admitIdx == queue.tail || !admit(queue.at(admitIdx), now)) {
                    return;
                }
                continue;
            }
            if (after(txSeq, lastAcked + nic.smallWindow)) {
                return;
            }
            if (!after(txSeq, highestSent) && scoreboard.isSacked(txSeq, lastAcked)) {
                txSeq++; // going back: the peer holds this one already
                continue;
            }
            SendWr w = queue.at(txIdx);
            while (!contains(w, txSeq)) {
                txIdx++;
                w = queue.at(txIdx);
            }
            if (after(txSeq, lastAcked + nic.window)
                && (w.needsResponse() || w.segments.total > ProtocolNic.SMALL_FRAME)) {
                return; // beyond the window only small sends and writes go (ProtocolNic#smallWindow)
            }
            if (!transmit(w, txSeq, !after(txSeq, highestSent), now)) {
                nic.txBlocked = true;
                return;
            }
            txSeq++;
        }
    }

    private static boolean contains(final SendWr w, final int seq) {
        return w.state != SendWr.QUEUED && !w.isLocal() && !after(w.startSeq, seq) && !after(seq, w.endSeq);
    }

    /** Admits the next work request; false if it must wait. */
    private boolean admit(final SendWr w, final long now) {
        if ((w.flags & WrFlags.FENCED) != 0 && orDepth > 0) {
            return false;
        }
        if (w.isLocal()) {
            w.state = SendWr.DONE;
            w.status = qp.runLocal(w);
            w.startSeq = nextSeq;
            w.endSeq = nextSeq - 1;
            admitIdx++;
            if (ackScanIdx == admitIdx - 1) {
                ackScanIdx = admitIdx;
            }
            completeWalk();
            if (w.status != WcStatus.SUCCESS) {
                qp.enterError(EventCode.QP_ERROR.code(), false, true, true);
                return false;
            }
            return true;
        }
        if (w.needsResponse()) {
            if (orDepth >= qp.maxOr()) {
                return false;
            }
            if (orDepth == 0) {
                lastResponseNs = clock(now);
            }
            orDepth++;
            w.msgId = (int) w.ordinal;
        } else if (w.kind == SendWr.KIND_SEND || (w.flags & WrFlags.IMMEDIATE) != 0) {
            w.msgId = nextMsgId++;
        } else {
            w.msgId = 0;
        }
        final long total = w.needsResponse() ? 0 : w.segments.total;
        final int frames = (int) Math.max(1, (total + qp.maxPayload() - 1) / qp.maxPayload());
        w.startSeq = nextSeq;
        w.endSeq = nextSeq + frames - 1;
        nextSeq += frames;
        w.state = SendWr.ACTIVE;
        admitIdx++;
        return true;
    }

    /** Builds and sends one frame of a request. */
    private boolean transmit(final SendWr w, final int seq, final boolean retransmission, final long now) {
        final MemorySegment h = nic.txHeader;
        final FrameGather g = nic.txGather;
        g.clear();
        final long offset = (long) (seq - w.startSeq) * qp.maxPayload();
        final boolean last = seq == w.endSeq;
        int flags = last ? Frame.FLAG_LAST : 0;
        if (retransmission || last && (w.flags & WrFlags.SUPPRESSED) == 0) {
            flags |= Frame.FLAG_FORCE_ACK;
        }
        int opcode;
        int payload = 0;
        long address = 0;
        int key = w.rKey;
        int length = (int) w.segments.total;
        switch (w.kind) {
            case SendWr.KIND_SEND -> {
                opcode = Frame.OP_SEND;
                payload = (int) Math.min(qp.maxPayload(), w.segments.total - offset);
                if (last && (w.flags & WrFlags.IMMEDIATE) != 0) {
                    flags |= Frame.FLAG_IMMEDIATE;
                }
                if (last && (w.flags & WrFlags.SOLICITED) != 0) {
                    flags |= Frame.FLAG_SOLICITED;
                }
                if (w.operand1 != 0) {
                    flags |= Frame.FLAG_INVALIDATE;
                } else {
                    key = 0;
                }
            }
            case SendWr.KIND_WRITE -> {
                opcode = Frame.OP_WRITE;
                payload = (int) Math.min(qp.maxPayload(), w.segments.total - offset);
                address = w.remoteAddress + offset;
                if ((w.flags & WrFlags.IMMEDIATE) != 0) {
                    flags |= Frame.FLAG_IMMEDIATE;
                    if (last && (w.flags & WrFlags.SOLICITED) != 0) {
                        flags |= Frame.FLAG_SOLICITED;
                    }
                }
            }
            case SendWr.KIND_READ -> {
                opcode = Frame.OP_READ;
                address = w.remoteAddress;
                flags |= Frame.FLAG_FORCE_ACK;
            }
            case SendWr.KIND_COMP_EXCH -> {
                opcode = Frame.OP_COMP_EXCH;
                address = w.remoteAddress;
                length = 8;
            }
            default -> {
                opcode = Frame.OP_FETCH_ADD;
                address = w.remoteAddress;
                length = 8;
            }
        }
        Frame.writeBase(h, opcode, flags, payload, qp.remoteQpNum(), qp.number(), seq, qp.responder().reqExpected - 1,
            rspExpected - 1, w.msgId);
        final boolean atomic = w.kind == SendWr.KIND_COMP_EXCH || w.kind == SendWr.KIND_FETCH_ADD;
        // The immediate travels only with IMMEDIATE (det_send: "only valid if the DET_WR_IMMEDIATE bit is set").
        Frame.writeExtension(h, address, atomic ? w.operand1 : 0, atomic ? w.operand2 : 0, key, length,
            (int) offset, (w.flags & WrFlags.IMMEDIATE) != 0 ? w.immediate : 0);
        if (payload > 0) {
            if (!w.segments.stillValid()) {
                return failLocal(w);
            }
            w.segments.gather(g, offset, payload);
        }
        final int outcome = nic.transmit(qp, payload);
        if (outcome == ProtocolNic.MEMORY_GONE) {
            return failLocal(w);
        }
        if (outcome != ProtocolNic.SENT) {
            return false;
        }
        if (retransmission) {
            nic.counters.retransmitted++;
        } else {
            if (timedSeq == 0 || highestSent == lastAcked) {
                final long sent = clock(now);
                if (timedSeq == 0) {
                    timedSeq = seq;
                    timedSentNs = sent;
                }
                if (highestSent == lastAcked) {
                    lastProgressNs = sent;
                    lastAckProgressNs = sent;
                    nic.timerAt(sent + Math.min(rto.rtoNs(), nic.ackTimeoutNs)); // the RTO, or the give-up first
                }
            }
            highestSent = seq;
        }
        return true;
    }

    /**
     * A local segment of a send or write was deregistered (or its arena closed) before all of it was sent: the
     * engine may not read the memory any more, so the request fails and the queue pair enters ERROR.
     *
     * @return false: nothing was sent
     */
    private boolean failLocal(final SendWr w) {
        fail(w, WcStatus.LOCAL_PROTECTION_ERR, EventCode.INVALID_L_KEY.code());
        return false;
    }

    // ---------------------------------------------------------------- acknowledgements

    /**
     * Takes the peer's acknowledgement of the request stream: the cumulative {@code ack} and the selective-ack bits
     * (bit i: the peer holds request {@code ack + 2 + i}). Gaps below a selectively acknowledged request are
     * retransmitted at once, each once per recovery; the timer covers a retransmission that is lost again.
     */
    public void onAck(final int ack, final int sack, final long now) {
        if (after(ack, highestSent)) {
            return;
        }
        final boolean advanced = after(ack, lastAcked);
        scoreboard.onAck(lastAcked, ack, sack, highestSent);
        if (!advanced) {
            if (scoreboard.any()) {
                repair(now);
            }
            return;
        }
        lastAcked = ack;
        lastProgressNs = now;
        lastAckProgressNs = now;
        if (timedSeq != 0 && !after(timedSeq, ack)) {
            rto.sample(now - timedSentNs);
            timedSeq = 0;
        }
        if (after(highestSent, ack)) {
            // the retransmission timer restarts for what is still outstanding (the give-up with it)
            nic.timerAt(now + Math.min(rto.rtoNs(), nic.ackTimeoutNs));
        } else if (orDepth > 0) {
            nic.timerAt(now + nic.ackTimeoutNs); // a read or atomic now waits for its response alone (6.4)
        }
        while (ackScanIdx < admitIdx) {
            final SendWr w = queue.at(ackScanIdx);
            if (!w.isLocal()) {
                if (after(w.endSeq, lastAcked)) {
                    break;
                }
                if (!w.needsResponse() && w.state == SendWr.ACTIVE) {
                    w.state = SendWr.DONE;
                }
            }
            ackScanIdx++;
        }
        if (!after(txSeq, lastAcked)) {
            // Going back, and the peer has acknowledged past the resend point: resume after what it holds.
            txSeq = lastAcked + 1;
            txIdx = ackScanIdx;
        }
        completeWalk();
        if (scoreboard.any()) {
            repair(now);
        }
        pump(now);
    }

    /** Retransmits each gap below the highest selectively acknowledged request, once per recovery. */
    private void repair(final long now) {
        final int top = scoreboard.top(lastAcked);
        for (int seq = scoreboard.repairFrom(lastAcked); after(top, seq); seq++) {
            if (!after(txSeq, seq)) {
                return; // going back already: the pump resends it
            }
            if (!scoreboard.isSacked(seq, lastAcked)) {
                final SendWr w = findBySeq(seq);
                if (w == null || !transmit(w, seq, true, now)) {
                    return;
                }
                nic.counters.sackRetransmitted++;
                timedSeq = 0; // Karn: no round-trip sample from a retransmitted range
            }
            scoreboard.repaired(seq);
        }
    }

    /** Reports finished work requests in post order; suppressed successes only add to the next reap count. */
    public void completeWalk() {
        completeWalk(admitIdx);
    }

    /** Reports finished work requests in post order, none at or beyond position {@code limit}. */
    private void completeWalk(final long limit) {
        while (completeIdx < Math.min(limit, admitIdx)) {
            final SendWr w = queue.at(completeIdx);
            if (w.state != SendWr.DONE) {
                return;
            }
            completeIdx++;
            if (w.status != WcStatus.SUCCESS || (w.flags & WrFlags.SUPPRESSED) == 0) {
                final int reap = pendingReap + 1;
                pendingReap = 0;
                if (!qp.completeSend(w.id, w.status, w.type, w.resultLength, reap)) {
                    qp.completionLost();
                    return;
                }
            } else {
                pendingReap++;
            }
            nic.counters.wrCompleted++;
        }
    }

    // ---------------------------------------------------------------- NAKs, responses, timers

    /**
     * A NAK of request {@code seq}. One naming no request that was sent and is not acknowledged is ignored (NAKs
     * are unsequenced: a late repeat is harmless); one whose status or event is out of range, or a
     * receiver-not-ready NAK of anything but the first frame of a message that consumes a receive, is a protocol
     * error: the request completes with {@link WcStatus#BAD_RESPONSE} and the queue pair fails.
     */
    public void onNak(final MemorySegment f, final long now) {
        final int seq = Frame.seq(f);
        final int status = Frame.key(f);
        final SendWr w = nakTarget(seq, status);
        if (w == null) {
            nic.counters.naksIgnored++;
            if (after(seq, lastAcked) && !after(seq, highestSent)) {
                nic.challenge(qp); // in the window but not the exact next request: the true peer repeats it
            }
            return;
        }
        if (status == Frame.NAK_RNR) {
            nic.counters.rnrNaksReceived++;
            if (seq != w.startSeq || !consumesReceive(w)) {
                protocolError(w, EventCode.QP_ERROR);
                return;
            }
            nic.observer.receiverNotReady(qp.number(), seq);
            if (after(seq, txSeq - 1) && rnrHoldUntilNs != 0) {
                return;
            }
            w.rnrRetries++;
            if (w.rnrRetries > nic.rnrRetryCount) {
                fail(w, WcStatus.RNR_RETRY_EXCEEDED, EventCode.QP_RQ_ERROR.code() | EventCode.REMOTE_BIT);
                return;
            }
            scoreboard.forget();
            goBack(seq);
            rnrHoldUntilNs = now + nic.rnrDelayNs;
            nic.timerAt(rnrHoldUntilNs);
            // The peer answered (an exact NAK): a receiver not ready is no lost connection. Its retries are bounded
            // by rnrRetryCount (RNR_RETRY_EXCEEDED), not cut off by the ack timeout as RETRY_EXCEEDED.
            lastAckProgressNs = now;
            return;
        }
        nic.counters.naksReceived++;
        final int event = Frame.length(f);
        if (!PeerValues.nakStatus(status) || !PeerValues.qpEvent(event)) {
            protocolError(w, EventCode.QP_ERROR);
            return;
        }
        w.status = WcStatus.of(status);
        w.state = SendWr.DONE;
        if (w.needsResponse()) {
            orDepth--;
        }
        completeWalk(w.ordinal + 1); // nothing behind the failed request: the flush reports it
        qp.enterError(event, true, false, true);
    }

    private static boolean consumesReceive(final SendWr w) {
        return w.kind == SendWr.KIND_SEND || w.kind == SendWr.KIND_WRITE && (w.flags & WrFlags.IMMEDIATE) != 0;
    }

    /**
     * The peer broke the protocol answering a request: it completes with {@link WcStatus#BAD_RESPONSE} (if there
     * is one to blame) and the connection fails ({@link ProtocolQp#protocolError}).
     *
     * @param w     the request the bad frame answered, or null
     * @param event the event raised and sent to the peer
     */
    private void protocolError(final SendWr w, final EventCode event) {
        if (w != null) {
            w.status = WcStatus.BAD_RESPONSE;
            w.state = SendWr.DONE;
            completeWalk(w.ordinal + 1);
        }
        qp.protocolError(event);
    }

    /** The oldest read or atomic still waiting for its response, or null. */
    private SendWr oldestAwaitingResponse() {
        for (long i = completeIdx; i < admitIdx; i++) {
            final SendWr w = queue.at(i);
            if (w.needsResponse() && w.state == SendWr.ACTIVE) {
                return w;
            }
        }
        return null;
    }

    /** Fails the oldest outstanding request (or w) with a status, then the queue pair. */
    private void fail(final SendWr w, final WcStatus status, final int rawEvent) {
        w.status = status;
        w.state = SendWr.DONE;
        completeWalk(w.ordinal + 1);
        final int code = rawEvent & ~EventCode.REMOTE_BIT;
        qp.enterError(code, (rawEvent & EventCode.REMOTE_BIT) != 0, true, true);
    }

    /**
     * The work request a NAK names: one sent and not yet acknowledged, or a read or atomic whose request was
     * acknowledged (by its first response frames) but whose response is still coming: a responder that fails
     * part-way through a read response (its region was deregistered) NAKs the request then. Any other NAK is stale
     * or forged, and is ignored.
     */
    private SendWr nakTarget(final int seq, final int status) {
        if (after(seq, lastAcked) && !after(seq, highestSent)) {
            // RFC 5961: only the exact next request; the peer refuses requests in order, and its NAK's own ack
            // (processed first) covers every request before the one refused.
            return seq == lastAcked + 1 ? findBySeq(seq) : null;
        }
        if (status == Frame.NAK_RNR || after(seq, lastAcked)) {
            return null; // beyond the last request sent: admitted perhaps, but no responder has seen it
        }
        final SendWr w = findBySeq(seq);
        return w != null && w.needsResponse() && w.state == SendWr.ACTIVE ? w : null;
    }

    private SendWr findBySeq(final int seq) {
        for (long i = completeIdx; i < admitIdx; i++) {
            final SendWr w = queue.at(i);
            if (contains(w, seq)) {
                return w;
            }
        }
        return null;
    }

    private void goBack(final int seq) {
        scoreboard.goBack(seq);
        txSeq = seq;
        // The first request not known to be acknowledged: a read or atomic can be complete (its response came)
        // while its request is not acknowledged yet, so completeIdx may already be past the resend point.
        txIdx = ackScanIdx;
        timedSeq = 0;
    }

    /**
     * A response frame. One beyond a gap is held and selectively acknowledged at once (an ACK flagged
     * RESPONSE_SACK); held responses are processed in order when the gap fills.
     */
    public void onResponse(final MemorySegment f, final int opcode, final long now) {
        // A response beyond a gap is held only while a read or atomic awaits one: with none outstanding no
        // response is owed, and holding would let the peer fill the NIC's reorder pool for nothing.
        final int outcome = orDepth == 0 && after(Frame.seq(f), rspExpected) ? HeldFrames.DROPPED
            : heldResponses.deliver(this, qp, f, opcode, now);
        if (outcome != HeldFrames.PROCESSED) {
            HeldFrames.count(outcome, nic.counters);
            nic.sendResponseAck(qp); // at once, with the selective-ack bits
        }
    }

    @Override
    public int expected() {
        return rspExpected;
    }

    /**
     * How many payload bytes of a read response, whose header alone was received, may go straight into the read's
     * local memory before the frame is received and its CRC checked (as {@link Responder#placeable} for requests):
     * only the next in-order response fragment of an outstanding read (the first too, if at least a placement's
     * worth follows it: the read's memory is this side's, not named by the header), starting where the last one
     * ended and ending within the read, all but its last {@link Responder#PLACE_TAIL} bytes, at least
     * {@link Responder#PLACE_MIN} of them, held by one piece of the read's memory. A corrupted header can only name
     * another outstanding read, whose memory holds nothing defined until it completes. Changes no state. Raises
     * nothing.
     *
     * @param h      the frame's header (its CRC unchecked)
     * @param target where the placed bytes go
     * @return the bytes to place, or 0
     */
    public int placeable(final MemorySegment h, final FrameGather target) {
        final int n = Frame.payloadLength(h);
        final int placed = n - Responder.PLACE_TAIL;
        if (placed < Responder.PLACE_MIN || Frame.opcode(h) != Frame.OP_READ_RESP || Frame.seq(h) != rspExpected) {
            return 0;
        }
        final int d = Frame.msgId(h) - (int) completeIdx;
        final SendWr w = d >= 0 && completeIdx + d < admitIdx ? queue.at(completeIdx + d) : null;
        if (w == null || w.ordinal != completeIdx + d || w.state != SendWr.ACTIVE || w.kind != SendWr.KIND_READ
            || after(w.startSeq, highestSent) || Frame.offset(h) != w.bytesReceived
            || (long) w.bytesReceived + n > w.segments.total || !w.segments.stillValid()
            || w.bytesReceived == 0 && w.segments.total - n < Responder.PLACE_MIN + Responder.PLACE_TAIL) {
            return 0;
        }
        return w.segments.lendPlace(target, w.bytesReceived, placed) ? placed : 0;
    }

    /** Runs the in-order response {@code seq}; true if {@link #rspExpected} advanced and the pair is connected. */
    @Override
    public boolean process(final MemorySegment f, final int opcode, final int seq, final long now) {
        final int id = Frame.msgId(f);
        final int d = id - (int) completeIdx;
        final SendWr w = d >= 0 && completeIdx + d < admitIdx ? queue.at(completeIdx + d) : null;
        final boolean read = opcode == Frame.OP_READ_RESP;
        if (w == null || w.ordinal != completeIdx + d || w.state != SendWr.ACTIVE
            || read != (w.kind == SendWr.KIND_READ) || !w.needsResponse() || after(w.startSeq, highestSent)) {
            // A response to no request this side sent: the oldest read or atomic was due an answer and got this.
            nic.counters.badResponses++;
            protocolError(oldestAwaitingResponse(), read ? EventCode.INVALID_RDMA_ID : EventCode.INVALID_ATOMIC_ID);
            return false;
        }
        rspExpected++;
        lastResponseNs = now;
        // A response's last frame asks for its ack (FORCE_ACK): the responder holds its inbound entry, and an
        // atomic behind a read, until it comes (6.7).
        // The response stream keeps the window whatever its frames' size: each counts in full.
        qp.frameReceived(now, (Frame.flags(f) & Frame.FLAG_FORCE_ACK) != 0, false);
        if (after(w.endSeq, lastAcked)) {
            // The peer runs requests in order: a response to this one acknowledges it and every earlier one.
            onAck(w.endSeq, 0, now);
            if (!qp.connected()) {
                // Completing what it acknowledged failed the queue pair (a completion overran its CQ): this
                // request has been flushed, and a poller may hold its buffer again. Nothing is placed there.
                return false;
            }
        }
        if (!w.segments.stillValid()) {
            orDepth--;
            fail(w, WcStatus.LOCAL_PROTECTION_ERR, EventCode.INVALID_L_KEY.code());
            return false;
        }
        if (read) {
            final int offset = Frame.offset(f);
            final int n = Frame.payloadLength(f);
            final long end = (long) offset + n;
            final boolean last = (Frame.flags(f) & Frame.FLAG_LAST) != 0;
            // Fragments come in order, each where the last one ended; LAST exactly at the end of the read.
            if (offset != w.bytesReceived || (last ? end != w.segments.total : n == 0 || end >= w.segments.total)) {
                nic.counters.badResponses++;
                orDepth--;
                protocolError(w, EventCode.INVALID_LENGTH);
                return false;
            }
            final int placed = nic.placed(f); // a placed frame's first bytes are in place already (placeable)
            w.segments.place(nic.payload(f), nic.payloadOffset(f), offset + placed, n - placed);
            if (!last) {
                w.bytesReceived = (int) end;
                if (Responder.nextPlaceable(f, w.segments, end, n, w.segments.total)) {
                    nic.longMessageContinues();
                }
                return qp.connected();
            }
            w.resultLength = (int) w.segments.total;
        } else {
            w.segments.place(f, Frame.OPERAND1_OFFSET, 0, 8);
            w.resultLength = 8;
        }
        w.state = SendWr.DONE;
        orDepth--;
        completeWalk();
        pump(now);
        return qp.connected();
    }

    public void onTimer(final long now) {
        final boolean outstanding = after(highestSent, lastAcked);
        final boolean rtoExpired = outstanding && now - lastProgressNs >= rto.rtoNs();
        // The give-up is due after ackTimeoutMs without progress whatever the retransmission timer says: checked
        // only as the RTO expired, a long RTO (its minimum above the ack timeout, or backed off) put it off by up to
        // one RTO, unbounded by the configuration.
        final boolean giveUpDue = outstanding && rnrHoldUntilNs == 0 && now - lastAckProgressNs >= nic.ackTimeoutNs;
        if (rtoExpired || giveUpDue) {
            final SendWr oldest = findBySeq(lastAcked + 1);
            final boolean noTimeout = oldest != null && (oldest.flags & WrFlags.NO_TIMEOUT) != 0;
            if (!noTimeout && giveUpDue) {
                nic.counters.retryExceeded++;
                fail(oldest != null ? oldest : queue.at(completeIdx), WcStatus.RETRY_EXCEEDED,
                    EventCode.ACK_TIMEOUT.code());
                return;
            }
            if (!rtoExpired) {
                pump(now);
                return; // a NO_TIMEOUT request past the ack timeout: its retransmissions keep the RTO's pace
            }
            nic.counters.timeouts++;
            nic.observer.retransmitTimeout(qp.number(), false, lastAcked + 1, rto.rtoNs());
            scoreboard.onTimeout();
            goBack(lastAcked + 1);
            rto.backOff();
            lastProgressNs = now;
            nic.timerAt(now + rto.rtoNs());
        } else if (orDepth > 0 && !outstanding && now - responseWaitSinceNs() >= nic.ackTimeoutNs) {
            for (long i = completeIdx; i < admitIdx; i++) {
                final SendWr w = queue.at(i);
                if (w.needsResponse() && w.state == SendWr.ACTIVE) {
                    // Responses come in order: the oldest one waiting decides. A NO_TIMEOUT one is waited for, and
                    // with it everything behind it (failing a later one would flush it).
                    if ((w.flags & WrFlags.NO_TIMEOUT) == 0) {
                        nic.counters.retryExceeded++;
                        fail(w, WcStatus.RETRY_EXCEEDED, EventCode.ACK_TIMEOUT.code());
                        return;
                    }
                    break;
                }
            }
        }
        pump(now);
    }

    /**
     * Since when the outstanding reads and atomics have waited for a response with nothing else to wait for: the
     * later of the last response and the last acknowledgement that made progress (any valid ACK or response resets
     * the retry count, ibverbs.md 7.7). A read admitted long before, behind work that kept progressing (a receiver
     * not ready for longer than {@code ackTimeoutMs}), so starts its wait when its own request is acknowledged, not
     * when it was admitted. Raises nothing.
     */
    private long responseWaitSinceNs() {
        return lastResponseNs - lastAckProgressNs < 0 ? lastAckProgressNs : lastResponseNs;
    }

    /**
     * Flushes every outstanding work request, suppressed ones too, with FLUSHED.
     *
     * @return how many were flushed
     */
    public int flush() {
        // The application may reuse a flushed request's memory at once: no receiver may still read it.
        nic.settleSent();
        int flushed = 0;
        for (long i = completeIdx; i < queue.tail; i++) {
            final SendWr w = queue.at(i);
            final int reap = pendingReap + 1;
            pendingReap = 0;
            flushed++;
            // A request that already failed (a local operation, or a NAK behind unfinished work) keeps its status.
            final WcStatus status = i < admitIdx && w.state == SendWr.DONE && w.status != WcStatus.SUCCESS
                ? w.status : WcStatus.FLUSHED;
            if (status == WcStatus.FLUSHED && w.isLocal()) {
                // It ran (a bind takes effect as it is admitted, so that the requests behind it may use its key),
                // or never did, but completes FLUSHED: the application takes it as not done and must find neither
                // its key nor the one it was to replace granting access (QueuePair.bind).
                qp.undoLocal(w, i < admitIdx);
            }
            if (!qp.completeSend(w.id, status, w.type, 0, reap)) {
                qp.flushOverflowed(false);
            }
            w.window = null;
            w.bindRegion = null;
        }
        completeIdx = admitIdx = ackScanIdx = txIdx = queue.tail;
        orDepth = 0;
        txSeq = nextSeq;
        highestSent = lastAcked = nextSeq - 1;
        scoreboard.reset(lastAcked);
        heldResponses.drop();
        nic.counters.wrFlushed += flushed;
        return flushed;
    }

    /**
     * When {@link #onTimer} next has work: the retransmission timeout, the end of a receiver-not-ready hold, or a
     * give-up (6.4) that {@link #onTimer} would act on ({@code NO_TIMEOUT} requests never give up: a deadline
     * that passes without work would keep an idle progress thread awake). Raises nothing.
     *
     * @return the deadline on the {@link System#nanoTime} clock, {@link Long#MAX_VALUE} for none
     */
    public long nextDeadline() {
        long deadline = Long.MAX_VALUE;
        if (after(highestSent, lastAcked)) {
            deadline = lastProgressNs + rto.rtoNs();
            if (rnrHoldUntilNs == 0) {
                final SendWr oldest = findBySeq(lastAcked + 1);
                if (oldest == null || (oldest.flags & WrFlags.NO_TIMEOUT) == 0) {
                    deadline = earlier(deadline, lastAckProgressNs + nic.ackTimeoutNs);
                }
            }
        } else if (orDepth > 0) {
            final SendWr w = oldestAwaitingResponse();
            if (w != null && (w.flags & WrFlags.NO_TIMEOUT) == 0) {
                deadline = responseWaitSinceNs() + nic.ackTimeoutNs;
            }
        }
        if (rnrHoldUntilNs != 0) {
            deadline = deadline == Long.MAX_VALUE ? rnrHoldUntilNs : earlier(deadline, rnrHoldUntilNs);
        }
        return deadline;
    }

    private static long earlier(final long a, final long b) {
        return b - a < 0 ? b : a;
    }
}
