package io.jdet.internal.protocol;

import io.jdet.Access;
import io.jdet.EventCode;
import io.jdet.WcFlags;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import static io.jdet.internal.wire.Frame.after;

/**
 * The responding half of a queue pair: the receive queue, the incoming request stream and the outgoing response
 * stream.
 *
 * <p>Requests are processed strictly in sequence order; a duplicate is only acknowledged, so a retransmitted read
 * or atomic never runs twice: its response waits in the inbound queue (the response cache) until the peer
 * acknowledges it, and is retransmitted from there. A send that finds no posted receive is answered with a
 * receiver-not-ready NAK and left for the peer to retry; any other failure is answered with a NAK naming the
 * status, and the queue pair enters ERROR. Engine lock held throughout.
 */
public final class Responder implements OrderedStream {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final ProtocolQp qp;
    private final ProtocolNic nic;
    public final WorkRing<RecvWr> queue;
    /** Next receive a message will consume. */
    private long consume;
    /** Next in-order request sequence number expected. */
    public int reqExpected;
    /** Next message id a send or write with immediate must carry. */
    private int expectedMsgId;
    /** The send or write whose fragments are arriving: where its next fragment starts (0 between messages). */
    private int msgOffset;
    /** A receive completion of the request being processed found its CQ full: the queue pair fails after it. */
    private boolean receiveCompletionLost;
    /** Its opcode and length, which every later fragment must repeat. */
    private int msgOpcode;
    private int msgLength;
    /** Of a write whose fragments are arriving: its key, and the address its first byte went to. */
    private int msgKey;
    private long msgAddress;
    /**
     * The least payload a fragment places straight into its target ({@link #placeable}): below it a look at the
     * datagram's header costs more than the copy it saves.
     */
    public static final int PLACE_MIN = 8192;
    /**
     * The payload's last bytes the engine copies itself even for a placed fragment: after the frame's CRC is checked,
     * and last, so that a reader polling a write's last byte finds the rest in place before it.
     */
    public static final int PLACE_TAIL = 64;
    /** Requests that arrived beyond a gap, held until it fills; their bits travel in every frame's SACK field. */
    public final HeldFrames heldRequests;
    /** Which responses beyond the cumulative ack the peer holds. */
    private final SackScoreboard scoreboard = new SackScoreboard();

    private InboundResponse[] inbound;
    private long iqHead;
    private long iqTail;
    private long iqTxIdx;
    private int rspNextSeq;
    private int rspTxSeq;
    private int rspLastAcked;
    private int rspHighestSent;
    private long rspLastProgressNs;
    private long rspLastAckProgressNs;
    private long rspRtoNs;

    /** One response waiting in the inbound queue until the requester acknowledges it. */
    private static final class InboundResponse {
        boolean read;
        int msgId;
        /** The sequence number of the request: a NAK that fails it names it. */
        int requestSeq;
        Region region;
        long offset;
        /** A read's key and address as the request named them: each response frame checks they still grant it. */
        int rKey;
        long address;
        int length;
        long original;
        int startSeq;
        int endSeq;
        /**
         * An atomic's operation, run when its response is first sent ({@link #runAtomic}): its opcode and operands,
         * the memory the request resolved to, and whether it ran (a resend answers with {@link #original}).
         */
        int atomicOpcode;
        long operand1;
        long operand2;
        MemorySegment target;
        long targetOffset;
        boolean executed;
    }

    public Responder(final ProtocolQp qp, final ProtocolNic nic, final int size, final int inboundSize) {
        this.qp = qp;
        this.nic = nic;
        this.queue = new WorkRing<>(size, RecvWr::new);
        this.heldRequests = new HeldFrames(nic.reorder);
        resizeInbound(inboundSize);
        reset();
    }

    public void resizeInbound(final int size) {
        // A power of two, so that a position maps to its entry with a mask; max_ir still bounds the occupancy.
        inbound = new InboundResponse[Integer.highestOneBit(Math.max(1, size) * 2 - 1)];
        for (int i = 0; i < inbound.length; i++) {
            inbound[i] = new InboundResponse();
        }
        iqHead = iqTail = iqTxIdx = 0;
    }

    public void reset() {
        heldRequests.drop();
        queue.clear();
        consume = 0;
        reqExpected = 1;
        expectedMsgId = 0;
        msgOffset = 0;
        iqHead = iqTail = iqTxIdx = 0;
        rspNextSeq = rspTxSeq = 1;
        rspLastAcked = rspHighestSent = 0;
        rspRtoNs = nic.minRtoNs;
        scoreboard.reset(0);
    }

    public void connected(final long now) {
        rspLastProgressNs = rspLastAckProgressNs = now;
    }

    /**
     * Starts the streams at negotiated sequence numbers instead of 1 (connection manager).
     *
     * @param responseIsn    the first sequence number of the outgoing response stream
     * @param peerRequestIsn the first sequence number of the peer's request stream
     */
    public void startAt(final int responseIsn, final int peerRequestIsn) {
        rspNextSeq = rspTxSeq = responseIsn;
        rspLastAcked = rspHighestSent = responseIsn - 1;
        scoreboard.reset(rspLastAcked);
        reqExpected = peerRequestIsn;
        expectedMsgId = Isn.firstMessageId(peerRequestIsn);
    }

    /** Whether a response-stream ack is one the peer can have sent (see {@link Requester#ackable}). */
    public boolean ackable(final int ack) {
        return !after(ack, rspHighestSent) && !after(rspLastAcked - 2 * nic.window, ack);
    }

    /** Whether the peer acknowledged every response sent. */
    public boolean responsesAcked() {
        return !after(rspNextSeq - 1, rspLastAcked);
    }





    public void post() {
        queue.tail++;
        nic.counters.recvPosted++;
    }


    public void resize(final int size) {
        final long shift = queue.resize(size);
        consume -= shift;
    }

    // ---------------------------------------------------------------- requests in

    public void onRequest(final MemorySegment f, final int opcode, final long now) {
        final int outcome = heldRequests.deliver(this, qp, f, opcode, now);
        if (outcome != HeldFrames.PROCESSED) {
            HeldFrames.count(outcome, nic.counters);
            nic.sendAck(qp); // at once, with the selective-ack bits: the sender repairs the gap without a timeout
        }
    }

    @Override
    public int expected() {
        return reqExpected;
    }

    /**
     * Runs the in-order request {@code seq}.
     *
     * @return true if it was accepted (and {@link #reqExpected} advanced)
     */
    @Override
    public boolean process(final MemorySegment f, final int opcode, final int seq, final long now) {
        // Count the request as received before handling it, so that a read or atomic response sent from inside
        // the handler acknowledges its own request (as in InfiniBand). Otherwise a read completes at the requester
        // while its request is still unacknowledged, and a retransmission timeout before the delayed ack goes back
        // to a request that is no longer outstanding. Undone if the request is refused or fails.
        reqExpected++;
        int outcome;
        try {
            outcome = switch (opcode) {
                case Frame.OP_SEND -> onSend(f);
                case Frame.OP_WRITE -> onWrite(f);
                case Frame.OP_READ -> onRead(f, seq, now);
                default -> onAtomic(f, opcode, seq, now);
            };
        } catch (final RuntimeException | InternalError e) {
            // The request could not be carried out (say, its memory refused the access): it fails, and is never
            // acknowledged as done. InternalError is what an access to memory unmapped underneath throws.
            nic.counters.engineErrors++;
            outcome = error(WcStatus.REMOTE_OP_ERR, EventCode.QP_FATAL);
        }
        // A message whose receive completion the CQ could not store (it overran: CQ_OVERRUN) is one the receiving
        // application never learns of: it fails at its sender too (REMOTE_OP_ERR, QP_RQ_ERROR), rather than being
        // acknowledged as delivered by the DISCONNECT the failure sends (ibverbs.md 4.3: a responder CQ overflow
        // never completes the request successfully).
        final boolean lost = receiveCompletionLost;
        receiveCompletionLost = false;
        if (outcome == OK && lost) {
            outcome = error(WcStatus.REMOTE_OP_ERR, EventCode.QP_RQ_ERROR);
        }
        if (outcome != OK) {
            reqExpected--;
        }
        // The queue pair fails only now, once reqExpected no longer counts a refused request: the NAK that failure
        // sends acknowledges what it carries, and a send this side refused must not complete successfully at its
        // sender.
        if (outcome == OK) {
            qp.frameReceived(now, (Frame.flags(f) & Frame.FLAG_FORCE_ACK) != 0,
                // the message's length, as the sender counts it (its fragments over a small MTU are all short)
                (opcode == Frame.OP_SEND || opcode == Frame.OP_WRITE)
                    && Integer.compareUnsigned(Frame.length(f), ProtocolNic.SMALL_FRAME) <= 0);
            return true;
        }
        if (outcome == RNR) {
            nic.counters.rnrNaksSent++;
            nic.sendNak(qp, Frame.NAK_RNR, seq, 0);
        } else {
            nic.counters.naksSent++;
            qp.failRequest(outcome & 0xFFFF, seq, outcome >>> 16);
        }
        if (lost) {
            qp.completionLost();
        }
        return false;
    }

    private static final int OK = 0;
    private static final int RNR = -1;

    private static int error(final WcStatus status, final EventCode event) {
        return event.code() << 16 | status.code();
    }

    private int onSend(final MemorySegment f) {
        final int offset = Frame.offset(f);
        final int n = Frame.payloadLength(f);
        final int total = Frame.length(f);
        final int flags = Frame.flags(f);
        if (consume == queue.tail) {
            if (offset == 0) {
                return RNR;
            }
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_MSG_ID);
        }
        final RecvWr r = queue.at(consume);
        if (Frame.msgId(f) != expectedMsgId) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_MSG_ID);
        }
        final boolean last = (flags & Frame.FLAG_LAST) != 0;
        if (!fragmentFits(Frame.OP_SEND, offset, n, total, last)) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
        if (total > r.segments.total) {
            completeReceive(r, WcStatus.BOUNDS_ERR, 0, 0, 0, 0);
            return error(WcStatus.BOUNDS_ERR, EventCode.BOUNDS_VIOLATION);
        }
        if (!r.segments.stillValid()) {
            completeReceive(r, WcStatus.LOCAL_PROTECTION_ERR, 0, 0, 0, 0);
            return error(WcStatus.REMOTE_OP_ERR, EventCode.INVALID_L_KEY);
        }
        final int placed = nic.placed(f); // a placed frame's first bytes are in place already (placeable)
        r.segments.place(nic.payload(f), nic.payloadOffset(f), offset + placed, n - placed);
        if (!last) {
            nextFragment(Frame.OP_SEND, offset + n, total);
            if (nextPlaceable(f, r.segments, offset + n, n, total)) {
                nic.longMessageContinues();
            }
            return OK;
        }
        msgOffset = 0;
        int wcFlags = 0;
        int invalidated = 0;
        if ((flags & Frame.FLAG_INVALIDATE) != 0) {
            invalidated = Frame.key(f);
            if (!qp.invalidateRemote(invalidated)) {
                completeReceive(r, WcStatus.INVALID_REQUEST, 0, 0, 0, 0);
                return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_RDMA_KEY);
            }
            wcFlags |= WcFlags.INVALIDATED;
        }
        if ((flags & Frame.FLAG_IMMEDIATE) != 0) {
            wcFlags |= WcFlags.IMMEDIATE;
        }
        if ((flags & Frame.FLAG_SOLICITED) != 0) {
            wcFlags |= WcFlags.SOLICITED;
        }
        // Only a send flagged IMMEDIATE carries a value: whatever else the field holds is not the application's.
        completeReceive(r, WcStatus.SUCCESS, wcFlags, total, (flags & Frame.FLAG_IMMEDIATE) != 0
            ? Frame.immediate(f) : 0, invalidated);
        return OK;
    }

    private int onWrite(final MemorySegment f) {
        final int flags = Frame.flags(f);
        final boolean immediate = (flags & Frame.FLAG_IMMEDIATE) != 0;
        final int n = Frame.payloadLength(f);
        final int offset = Frame.offset(f);
        final int total = Frame.length(f);
        final boolean last = (flags & Frame.FLAG_LAST) != 0;
        if (immediate) {
            if (consume == queue.tail) {
                return offset == 0 ? RNR : error(WcStatus.INVALID_REQUEST, EventCode.INVALID_MSG_ID);
            }
            if (Frame.msgId(f) != expectedMsgId) {
                return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_MSG_ID);
            }
        }
        if (!fragmentFits(Frame.OP_WRITE, offset, n, total, last)) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
        if (offset == 0 && total > n) {
            // The first frame of a longer write checks the whole range before it places a byte, as rxe checks the
            // RETH's length: a write that runs out of its region places nothing (ibverbs.md 4.3). Each frame still
            // checks its own bytes below, so a key revoked in the middle of the message stops the rest.
            final int status = nic.resolveRemote(qp, Frame.key(f), Frame.address(f), total, Access.REMOTE_WRITE,
                false);
            if (status != 0) {
                return status;
            }
        }
        if (n > 0) {
            final int status = nic.resolveRemote(qp, Frame.key(f), Frame.address(f), n, Access.REMOTE_WRITE, false);
            if (status != 0) {
                return status;
            }
            // A placed frame's first bytes are in place already (placeable resolved this same range, this pass)
            final int placed = nic.placed(f);
            Scatter.copyLastByteLast(nic.payload(f), nic.payloadOffset(f), nic.remoteSegment,
                nic.remoteOffset + placed, n - placed);
        }
        if (!last) {
            nextFragment(Frame.OP_WRITE, offset + n, total);
            msgKey = Frame.key(f);
            msgAddress = Frame.address(f) - offset;
            if (nextPlaceable(f, null, offset + n, n, total)) {
                nic.longMessageContinues();
            }
            return OK;
        }
        msgOffset = 0;
        if (immediate) {
            int wcFlags = WcFlags.IMMEDIATE;
            if ((flags & Frame.FLAG_SOLICITED) != 0) {
                wcFlags |= WcFlags.SOLICITED;
            }
            completeReceive(queue.at(consume), WcStatus.SUCCESS, wcFlags, total, Frame.immediate(f), 0);
        }
        return OK;
    }

    /**
     * How many payload bytes of a frame, whose header alone was received, may go straight into their target before
     * the frame is received and its CRC checked ({@code FrameHandler#placement}), and where: only the next in-order
     * fragment of a send, into the receive it consumes (the first fragment too, if at least a placement's worth
     * follows it: where a send's bytes go is this side's choice, not the header's), or of a write whose first
     * fragment this side accepted with its whole range, repeating its key, length and address; a fragment that
     * starts where the last ended and ends within its message, with the message's id; every byte but the last
     * {@link #PLACE_TAIL}, at least {@link #PLACE_MIN} of them, held by one piece of the target. So a header
     * corrupted on the way places bytes only into memory of a message that has not completed, where the true
     * fragment goes; the CRC decides after whether it counts. Changes no state. Raises nothing.
     *
     * @param h      the frame's header (its CRC unchecked)
     * @param target where the placed bytes go: the target region lends them
     * @return the bytes to place, or 0
     */
    public int placeable(final MemorySegment h, final FrameGather target) {
        final int opcode = Frame.opcode(h);
        final int offset = Frame.offset(h);
        final int n = Frame.payloadLength(h);
        final int total = Frame.length(h);
        final int placed = n - PLACE_TAIL;
        if (placed < PLACE_MIN || Frame.seq(h) != reqExpected || offset != msgOffset || total < 0
            || (long) offset + n > total || msgOffset != 0 && (opcode != msgOpcode || total != msgLength)) {
            return 0;
        }
        if (opcode == Frame.OP_SEND) {
            // a first fragment only of a long send: one of 64 KiB (a full frame and a short one) costs two looks and
            // two receives for one copy saved, about what the copy costs
            if (Frame.msgId(h) != expectedMsgId || consume == queue.tail
                || offset == 0 && total - n < PLACE_MIN + PLACE_TAIL) {
                return 0;
            }
            final RecvWr r = queue.at(consume);
            return total <= r.segments.total && r.segments.stillValid()
                && r.segments.lendPlace(target, offset, placed) ? placed : 0;
        }
        if (opcode != Frame.OP_WRITE || msgOffset == 0 || Frame.key(h) != msgKey
            || Frame.address(h) != msgAddress + offset
            || nic.resolveRemote(qp, msgKey, Frame.address(h), n, Access.REMOTE_WRITE, false) != 0) {
            return 0; // a write's first fragment names its own target: never placed; a refused one fails as usual
        }
        nic.remoteRegion.addTo(target, nic.remoteOffset, placed);
        return placed;
    }

    /**
     * Whether the fragment after {@code f}, which ended at {@code end}, can be received into place
     * ({@link #placeable}), so that the link should look at each datagram's header for it
     * ({@code ProtocolNic#longMessageContinues}). A protected connection never places; otherwise a sender fills
     * every fragment but the last as it filled this one, so the next one carries {@code n} bytes or what is left, and
     * it places only if that leaves {@link #PLACE_MIN} bytes besides its tail and, for a scatter list, one piece
     * holds them. Where none can (a sealed connection, a link whose MTU is an Ethernet's 1500 bytes, a target of
     * short pieces), each look would cost a system call and the batched receive for nothing. Raises nothing.
     *
     * @param f      the fragment just accepted (opened, if it came protected)
     * @param target the message's scatter list, or null for a write's contiguous range
     * @param end    where the next fragment starts in the message
     * @param n      the payload of the fragment just accepted
     * @param total  the message's length
     * @return whether the next fragment can be placed
     */
    static boolean nextPlaceable(final MemorySegment f, final Scatter target, final long end, final int n,
                                 final long total) {
        final long next = Math.min(n, total - end);
        return (Frame.flags(f) & Frame.FLAG_PROTECTED) == 0 && next >= PLACE_MIN + PLACE_TAIL
            && (target == null || target.holds(end, (int) next - PLACE_TAIL));
    }

    /**
     * Whether a send or write fragment continues its message: the first starts at offset 0 with a length that is
     * not negative, each later one starts where the one before ended and repeats the opcode and length, a fragment
     * without LAST carries bytes and leaves some for later, and the LAST one ends exactly at the length. Any
     * other frame in the middle of a message cuts it short, which is refused the same way.
     */
    private boolean fragmentFits(final int opcode, final int offset, final int n, final int total,
                                 final boolean last) {
        if (total < 0 || offset != msgOffset || msgOffset != 0 && (opcode != msgOpcode || total != msgLength)) {
            return false;
        }
        final long end = (long) offset + n;
        return last ? end == total : n > 0 && end < total;
    }

    private void nextFragment(final int opcode, final int offset, final int total) {
        msgOpcode = opcode;
        msgOffset = offset;
        msgLength = total;
    }

    private void completeReceive(final RecvWr r, final WcStatus status, final int wcFlags, final int length,
                                 final int immediate, final int invalidated) {
        consume++;
        expectedMsgId++;
        nic.counters.messagesReceived++;
        if (!qp.completeRecv(r.id, status, wcFlags, length, immediate, invalidated)) {
            receiveCompletionLost = true; // acted on by process, once the request's outcome is settled
        }
    }

    private int onRead(final MemorySegment f, final int seq, final long now) {
        if (msgOffset != 0 || Frame.payloadLength(f) != 0) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH); // cuts a message short, or has data
        }
        if (iqTail - iqHead >= Math.max(qp.maxIr(), 0)) {
            return error(WcStatus.INVALID_REQUEST, EventCode.MAX_IR_EXCEEDED);
        }
        final int length = Frame.length(f);
        if (length < 0) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
        Region region = null;
        long offset = 0;
        if (length > 0) {
            final int status = nic.resolveRemote(qp, Frame.key(f), Frame.address(f), length, Access.REMOTE_READ,
                false);
            if (status != 0) {
                return status;
            }
            region = nic.remoteRegion;
            offset = nic.remoteOffset;
        }
        final InboundResponse e = inbound[(int) iqTail & inbound.length - 1];
        e.read = true;
        e.msgId = Frame.msgId(f);
        e.requestSeq = seq;
        e.region = region;
        e.offset = offset;
        e.rKey = Frame.key(f);
        e.address = Frame.address(f);
        e.length = length;
        // In long: a read within a frame of 2^31 bytes overflows an int sum, and would be answered by one frame.
        queueResponse(e, (int) Math.max(1, ((long) length + qp.maxPayload() - 1) / qp.maxPayload()), now);
        return OK;
    }

    private int onAtomic(final MemorySegment f, final int opcode, final int seq, final long now) {
        if (opcode != Frame.OP_COMP_EXCH && opcode != Frame.OP_FETCH_ADD) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_OPCODE);
        }
        if (msgOffset != 0 || Frame.payloadLength(f) != 0 || Frame.length(f) != 8) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
        if (iqTail - iqHead >= Math.max(qp.maxIr(), 0)) {
            return error(WcStatus.INVALID_REQUEST, EventCode.MAX_IR_EXCEEDED);
        }
        final int status = nic.resolveRemote(qp, Frame.key(f), Frame.address(f), 8, Access.REMOTE_ATOMIC, true);
        if (status != 0) {
            return status;
        }
        final MemorySegment target = nic.remoteSegment;
        final long at = nic.remoteOffset;
        if (((target.address() + at) & 7) != 0) {
            return error(WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
        final InboundResponse e = inbound[(int) iqTail & inbound.length - 1];
        e.read = false;
        e.msgId = Frame.msgId(f);
        e.requestSeq = seq;
        e.region = nic.remoteRegion;
        e.offset = 0;
        e.rKey = Frame.key(f);
        e.address = Frame.address(f);
        e.original = 0;
        e.length = 0;
        e.atomicOpcode = opcode;
        e.operand1 = Frame.operand1(f);
        e.operand2 = Frame.operand2(f);
        e.target = target;
        e.targetOffset = at;
        e.executed = false;
        queueResponse(e, 1, now); // runs it at once unless earlier responses wait to be sent or acknowledged
        return OK;
    }

    /**
     * Runs an atomic as its response is first sent, so that it runs after every earlier request of the queue pair
     * has been answered once: requests run in sequence order, and only a later send or write may overtake an
     * earlier read or atomic (ibverbs.md 5.1), so a read answered before it must not return what the atomic wrote.
     * A read takes its data as each response frame leaves, which a full response window can hold back, and again
     * as a lost frame is resent; a frame that left may still point at the memory (a UDP datagram staged in the
     * batch, an in-process frame not yet consumed): so an atomic behind a read runs only once the peer has
     * acknowledged the read's response ({@link #pumpResponses}). The key is checked again, as a read's frames
     * check theirs ({@link #stillGranted}): revoked meanwhile, the atomic does not run and fails as a late write
     * would.
     *
     * @return false if the key no longer grants the atomic (the request is failed)
     */
    private boolean runAtomic(final InboundResponse e) {
        if (nic.resolveRemote(qp, e.rKey, e.address, 8, Access.REMOTE_ATOMIC, true) != 0
            || nic.remoteSegment != e.target || nic.remoteOffset != e.targetOffset || !e.region.usable()) {
            return false;
        }
        try {
            e.original = e.atomicOpcode == Frame.OP_COMP_EXCH
                ? (long) LONG.compareAndExchange(e.target, e.targetOffset, e.operand1, e.operand2)
                : (long) LONG.getAndAdd(e.target, e.targetOffset, e.operand1);
        } catch (final IllegalStateException closedMeanwhile) {
            return false; // the memory's arena closed since the check: as good as revoked
        }
        e.executed = true;
        nic.counters.atomicsExecuted++;
        return true;
    }

    /** Drops an answered response's references to registered memory. */
    private static void forget(final InboundResponse e) {
        e.region = null;
        e.target = null;
    }

    /** Whether a read response not yet acknowledged comes before {@code e} in the inbound queue. */
    private boolean readAnsweredBefore(final InboundResponse e) {
        for (long i = iqHead; i < iqTail; i++) {
            final InboundResponse earlier = inbound[(int) i & inbound.length - 1];
            if (earlier == e) {
                return false;
            }
            if (earlier.read) {
                return true;
            }
        }
        return false;
    }

    private void queueResponse(final InboundResponse e, final int frames, final long now) {
        e.startSeq = rspNextSeq;
        e.endSeq = rspNextSeq + frames - 1;
        rspNextSeq += frames;
        iqTail++;
        // process() counted the request in reqExpected before calling its handler, so this response acknowledges
        // its own request.
        pumpResponses(now);
    }

    // ---------------------------------------------------------------- responses out

    public void pumpResponses(final long now) {
        while (after(rspNextSeq, rspTxSeq) && !after(rspTxSeq, rspLastAcked + nic.window)
            && qp.connected()) {
            if (!after(rspTxSeq, rspHighestSent) && scoreboard.isSacked(rspTxSeq, rspLastAcked)) {
                rspTxSeq++; // going back: the peer holds this one already
                continue;
            }
            InboundResponse e = inbound[(int) iqTxIdx & inbound.length - 1];
            while (after(rspTxSeq, e.endSeq)) {
                iqTxIdx++;
                e = inbound[(int) iqTxIdx & inbound.length - 1];
            }
            if (!e.read && !e.executed && readAnsweredBefore(e)) {
                // An atomic behind a read whose response the peer has not acknowledged waits for that ack: a read
                // response frame that is lost is resent from the memory as it is then, so running the atomic now
                // could still show the read what the atomic wrote. onResponseAck pumps again once the ack comes.
                return;
            }
            if (!transmit(e, rspTxSeq, !after(rspTxSeq, rspHighestSent))) {
                nic.txBlocked = true;
                return;
            }
            if (after(rspTxSeq, rspHighestSent)) {
                if (rspHighestSent == rspLastAcked) {
                    rspLastProgressNs = now;
                    rspLastAckProgressNs = now;
                    nic.timerAt(now + Math.min(rspRtoNs, nic.ackTimeoutNs));
                }
                rspHighestSent = rspTxSeq;
            } else {
                nic.counters.retransmitted++;
            }
            rspTxSeq++;
        }
    }

    private boolean transmit(final InboundResponse e, final int seq, final boolean retransmission) {
        final FrameGather g = nic.txGather;
        g.clear();
        final long offset = (long) (seq - e.startSeq) * qp.maxPayload();
        final boolean last = seq == e.endSeq;
        int flags = last ? Frame.FLAG_LAST | Frame.FLAG_FORCE_ACK : 0;
        if (retransmission) {
            flags |= Frame.FLAG_FORCE_ACK;
        }
        int payload = 0;
        if (!e.read && !e.executed && !runAtomic(e)) {
            return failResponse(e);
        }
        if (e.read) {
            payload = (int) Math.min(qp.maxPayload(), e.length - offset);
            if (payload > 0) {
                if (!stillGranted(e)) {
                    return failResponse(e);
                }
                e.region.addTo(g, e.offset + offset, payload);
            }
        }
        Frame.writeBase(nic.txHeader, e.read ? Frame.OP_READ_RESP : Frame.OP_ATOMIC_RESP, flags, payload,
            qp.remoteQpNum(), qp.number(), seq, reqExpected - 1, qp.requester().rspExpected - 1, e.msgId);
        Frame.writeExtension(nic.txHeader, 0, e.original, 0, 0, e.length, (int) offset, 0);
        final int outcome = nic.transmit(qp, payload);
        if (outcome == ProtocolNic.MEMORY_GONE) {
            return failResponse(e);
        }
        return outcome == ProtocolNic.SENT;
    }

    /**
     * Whether the read's key still grants what it granted when the read arrived: the same memory, with remote read
     * right. Every frame of a response asks, its first sending and each resend alike, because the key may have been
     * revoked since (the region deregistered or re-keyed by {@code modify}, a window unbound, rebound, invalidated
     * or destroyed): a revoked key reads nothing more, as a write arriving after the change is refused. Raises
     * nothing.
     */
    private boolean stillGranted(final InboundResponse e) {
        return nic.resolveRemote(qp, e.rKey, e.address, e.length, Access.REMOTE_READ, false) == 0
            && nic.remoteRegion == e.region && nic.remoteOffset == e.offset && e.region.usable();
    }

    /**
     * The key a read response comes from was revoked (its region deregistered or re-keyed, its window unbound or
     * destroyed, or its arena closed) after the read arrived, and part of the response is still to be sent: the
     * engine may not read that memory for the peer any more, so the read fails at the requester as if its key had
     * been invalid when it arrived, and the queue pair enters ERROR.
     *
     * @return false: nothing was sent
     */
    private boolean failResponse(final InboundResponse e) {
        nic.counters.naksSent++;
        qp.failRequest(WcStatus.PROTECTION_ERR.code(), e.requestSeq, EventCode.INVALID_RDMA_KEY.code());
        return false;
    }

    /**
     * Takes the peer's acknowledgement of the response stream: the cumulative {@code ack} and, from an ACK flagged
     * RESPONSE_SACK, the responses it holds beyond a gap; gaps below those are resent at once, once per recovery.
     */
    public void onResponseAck(final int ack, final int sack, final long now) {
        if (after(ack, rspHighestSent)) {
            return;
        }
        final boolean advanced = after(ack, rspLastAcked);
        scoreboard.onAck(rspLastAcked, ack, sack, rspHighestSent);
        if (advanced) {
            rspLastAcked = ack;
            rspLastProgressNs = now;
            rspLastAckProgressNs = now;
            if (after(rspHighestSent, ack)) {
                nic.timerAt(now + Math.min(rspRtoNs, nic.ackTimeoutNs));
            }
            while (iqHead < iqTail && !after(inbound[(int) iqHead & inbound.length - 1].endSeq, ack)) {
                forget(inbound[(int) iqHead & inbound.length - 1]);
                iqHead++;
            }
            if (!after(rspTxSeq, rspLastAcked)) {
                rspTxSeq = rspLastAcked + 1; // going back, and the peer holds more than the resend point
            }
            if (iqTxIdx < iqHead || !after(rspTxSeq, rspLastAcked + 1)) {
                iqTxIdx = iqHead;
            }
        }
        if (scoreboard.any()) {
            repairResponses();
        }
        if (advanced) {
            pumpResponses(now);
        }
    }

    /** Resends each response frame missing below the highest one the peer holds. */
    private void repairResponses() {
        final int top = scoreboard.top(rspLastAcked);
        for (int seq = scoreboard.repairFrom(rspLastAcked); after(top, seq); seq++) {
            if (!after(rspTxSeq, seq)) {
                return; // going back already: the pump resends it
            }
            if (!scoreboard.isSacked(seq, rspLastAcked)) {
                InboundResponse e = null;
                for (long i = iqHead; i < iqTail && e == null; i++) {
                    final InboundResponse c = inbound[(int) i & inbound.length - 1];
                    if (!after(c.startSeq, seq) && !after(seq, c.endSeq)) {
                        e = c;
                    }
                }
                if (e == null || !transmit(e, seq, true)) {
                    return;
                }
                nic.counters.retransmitted++;
                nic.counters.sackRetransmitted++;
            }
            scoreboard.repaired(seq);
        }
    }

    public void onTimer(final long now) {
        final boolean outstanding = after(rspHighestSent, rspLastAcked);
        if (outstanding && now - rspLastAckProgressNs >= nic.ackTimeoutNs) {
            // Due whatever the retransmission timer says (see Requester.onTimer).
            nic.counters.retryExceeded++;
            qp.enterError(EventCode.ACK_TIMEOUT.code(), false, true, true);
            return;
        }
        if (outstanding && now - rspLastProgressNs >= rspRtoNs) {
            nic.counters.timeouts++;
            nic.observer.retransmitTimeout(qp.number(), true, rspLastAcked + 1, rspRtoNs);
            scoreboard.onTimeout();
            scoreboard.goBack(rspLastAcked + 1);
            rspTxSeq = rspLastAcked + 1;
            iqTxIdx = iqHead;
            rspRtoNs = Math.min(rspRtoNs * 2, nic.maxRtoNs);
            rspLastProgressNs = now;
            nic.timerAt(now + rspRtoNs);
        } else if (!after(rspHighestSent, rspLastAcked)) {
            rspRtoNs = nic.minRtoNs;
        }
        pumpResponses(now);
    }

    /** When {@link #onTimer} next has work: the retransmission timeout or the give-up, whichever comes first. */
    public long nextDeadline() {
        if (!after(rspHighestSent, rspLastAcked)) {
            return Long.MAX_VALUE;
        }
        final long rto = rspLastProgressNs + rspRtoNs;
        final long giveUp = rspLastAckProgressNs + nic.ackTimeoutNs;
        return giveUp - rto < 0 ? giveUp : rto;
    }

    /** Flushes posted receives with FLUSHED; drops queued responses and held requests silently. */
    public void flush() {
        heldRequests.drop();
        msgOffset = 0;
        int flushed = 0;
        for (long i = consume; i < queue.tail; i++) {
            flushed++;
            if (!qp.completeRecv(queue.at(i).id, WcStatus.FLUSHED, 0, 0, 0, 0)) {
                qp.flushOverflowed(true);
            }
        }
        consume = queue.tail;
        for (long i = iqHead; i < iqTail; i++) {
            forget(inbound[(int) i & inbound.length - 1]);
        }
        iqHead = iqTail = iqTxIdx = 0;
        rspTxSeq = rspNextSeq;
        rspHighestSent = rspLastAcked = rspNextSeq - 1;
        scoreboard.reset(rspLastAcked);
        nic.counters.wrFlushed += flushed;
    }
}
