package io.jdet.internal.protocol;

import io.jdet.Configuration;
import io.jdet.internal.observe.NicObserver;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * What the requester and the responder read of their NIC (its protocol settings, counters, reorder pool and
 * transmit buffers) and what they ask of it (send a frame, an ack or a NAK; resolve a remote key). The NIC in
 * {@code verbs} extends it. Engine lock held for every call.
 */
public abstract class ProtocolNic {
    /** {@link #transmit}: the frame went out. */
    public static final int SENT = 0;
    /** {@link #transmit}: the link refused the frame; send it again later. */
    public static final int LINK_BUSY = 1;
    /** {@link #transmit}: a payload piece's arena was closed under the engine; nothing was sent. */
    public static final int MEMORY_GONE = 2;

    public final Counters counters = new Counters();
    /** JFR events, logging and the counters' MBean: called on control and error paths only. */
    public final NicObserver observer;
    public final ReorderPool reorder;
    public final int maxPayload;
    public final int window;
    /**
     * The most unacknowledged frames of a request stream while those beyond {@link #window} are sends and writes of
     * {@link #SMALL_FRAME} bytes or less: {@link #SMALL_WINDOW} windows. The window bounds the bytes in flight (a
     * socket's buffer must hold them); 64 full frames hold as many bytes as about 2 000 small ones, yet 64 small
     * frames in flight left a sender of small messages waiting for acks. Reads and atomics keep the window (their
     * responses, not their requests, carry the bytes; a larger one measured slower reads on the fabric), and so does
     * the response stream.
     */
    public final int smallWindow;
    /** The most payload of a frame that counts as small for {@link #smallWindow}. */
    public static final int SMALL_FRAME = 2048;
    /** How many windows of small frames may be in flight. */
    public static final int SMALL_WINDOW = 4;
    public final long minRtoNs;
    public final long maxRtoNs;
    public final long ackTimeoutNs;
    public final long rnrDelayNs;
    public final int rnrRetryCount;
    /** The header of the frame being built, and its payload pieces: {@link #transmit} sends them. */
    public final MemorySegment txHeader;
    public final FrameGather txGather;
    /** Set when the link refused a frame: the next progress pumps every queue pair again. */
    public boolean txBlocked;

    /**
     * The frame being received whose payload lies apart from its header (the in-process fabric's lent payloads),
     * or null; with where that payload lies. See {@link #payload} and {@link #payloadOffset}.
     */
    private MemorySegment rxApart;
    private MemorySegment rxPayload;
    private long rxPayloadOffset;
    /** Of {@link #rxApart}: payload bytes the link received straight into their target ({@link #placed}). */
    private int rxPlaced;
    /**
     * A long send, write or read response is arriving whose next fragment can be received straight into place
     * ({@code Responder#nextPlaceable}): the link looks at each datagram's header ({@code FrameHandler#placing}).
     * Cleared after {@link #PLACE_MISSES} looks in a row at datagrams not to place (a message's short last fragment
     * and a write's first are two).
     */
    protected boolean placeHint;
    /** Looks in a row that found no fragment to place. */
    protected int placeMisses;
    /**
     * Looks in a row that find nothing to place before the link stops looking: more than the short frames that
     * come between two long messages of a collective exchange (a message's short last fragment, acknowledgements,
     * a rendezvous grant, a write's first fragment; at 4 the hint ended between them and the next message's
     * fragments, already queued, were taken by the batch receive and copied: a 2-rank 1 MiB all-to-all 13 to 19 %
     * slower). A look at a short datagram costs one {@code MSG_PEEK} call more than the batch receive would.
     */
    protected static final int PLACE_MISSES = 8;

    /** Scratch results of {@link #resolveRemote}. */
    public MemorySegment remoteSegment;
    public long remoteOffset;
    public Region remoteRegion;

    /**
     * Takes the protocol's settings.
     *
     * @param mtu         the link's frame size limit
     * @param c           the configuration
     * @param observer    the NIC's observer
     * @param txHeader    an 80-byte header buffer
     * @param gatherSlots payload pieces a frame may have
     */
    protected ProtocolNic(final int mtu, final Configuration c, final NicObserver observer,
                          final MemorySegment txHeader, final int gatherSlots) {
        this.observer = observer;
        this.reorder = new ReorderPool(mtu, this);
        this.maxPayload = mtu - Frame.HEADER_LENGTH;
        this.window = c.windowFrames();
        this.smallWindow = c.windowFrames() * SMALL_WINDOW;
        this.minRtoNs = TimeUnit.MICROSECONDS.toNanos(c.minRtoUs());
        this.maxRtoNs = TimeUnit.MICROSECONDS.toNanos(c.maxRtoUs());
        this.ackTimeoutNs = TimeUnit.MILLISECONDS.toNanos(c.ackTimeoutMs());
        this.rnrDelayNs = TimeUnit.MICROSECONDS.toNanos(c.rnrDelayUs());
        this.rnrRetryCount = c.rnrRetryCount();
        this.txHeader = txHeader;
        this.txGather = new FrameGather(gatherSlots);
    }

    /**
     * Records that the frame about to be handled has its payload apart from its header, until {@link #endApart}.
     * Raises nothing.
     *
     * @param frame         the frame's header memory
     * @param payload       the memory holding its payload
     * @param payloadOffset where the payload starts in it
     */
    protected final void beginApart(final MemorySegment frame, final MemorySegment payload, final long payloadOffset) {
        rxApart = frame;
        rxPayload = payload;
        rxPayloadOffset = payloadOffset;
    }

    /**
     * Records that the frame about to be handled had its payload's first {@code placed} bytes received straight into
     * their target, and holds the rest of the payload after its header, until {@link #endApart}. Raises nothing.
     *
     * @param frame  the header, then the payload from byte {@code placed} on
     * @param placed payload bytes already in place
     */
    protected final void beginPlaced(final MemorySegment frame, final int placed) {
        beginApart(frame, frame, Frame.HEADER_LENGTH);
        rxPlaced = placed;
    }

    /** Ends what {@link #beginApart} began: the payload memory is the sender's again. Raises nothing. */
    protected final void endApart() {
        rxApart = null;
        rxPayload = null;
        rxPlaced = 0;
    }

    /**
     * How many of a received frame's payload bytes the link already received into their target: 0 but for the
     * frame being handled when it was placed ({@link #beginPlaced}); its {@link #payload} then holds the rest,
     * the payload from that byte on. Raises nothing.
     *
     * @param f a received frame (or a copy of one)
     * @return the bytes in place
     */
    public final int placed(final MemorySegment f) {
        return f == rxApart ? rxPlaced : 0;
    }

    /**
     * Notes that a long send, write or read response is arriving whose next fragment can be received into place.
     * Raises nothing.
     */
    final void longMessageContinues() {
        placeHint = true;
        placeMisses = 0;
    }

    /**
     * The memory holding a received frame's payload: the frame itself, unless it is the frame being handled and its
     * payload lies apart. Raises nothing.
     *
     * @param f a received frame (or a copy of one)
     * @return where its payload lies
     */
    public final MemorySegment payload(final MemorySegment f) {
        return f == rxApart ? rxPayload : f;
    }

    /**
     * Where a received frame's payload starts in {@link #payload}'s memory. Raises nothing.
     *
     * @param f a received frame (or a copy of one)
     * @return the offset
     */
    public final long payloadOffset(final MemorySegment f) {
        return f == rxApart ? rxPayloadOffset : Frame.HEADER_LENGTH;
    }

    /**
     * Makes every frame sent so far independent of the payload memory it lent (see {@code Link#settle}): called
     * before work is flushed, so the application never reuses memory a receiver may still read. Raises nothing.
     */
    public abstract void settleSent();

    /**
     * Seals and sends the frame in {@link #txHeader} and {@link #txGather} to a queue pair's peer.
     *
     * @param qp            the sending queue pair
     * @param payloadLength bytes of payload in the gather list
     * @return {@link #SENT}, {@link #LINK_BUSY} or {@link #MEMORY_GONE}
     */
    public abstract int transmit(ProtocolQp qp, int payloadLength);

    /**
     * Starts a batch of frames (a post): frames for one peer may share a datagram until {@link #endBatch}. Nests.
     */
    public abstract void beginBatch();

    /** Ends a batch: every frame held since the outermost {@link #beginBatch} leaves now. */
    public abstract void endBatch();

    /**
     * Ends a batch whose frames may wait for the next post's company (a post flagged {@code WrFlags.MORE}): see
     * {@code Link#uncorkHolding}.
     */
    public abstract void endBatchHolding();

    /**
     * A post left frames waiting for the window: the NIC takes in the acknowledgements already waiting for it, if
     * its link can tell without a system call that a frame waits ({@code Link#inputWaiting}), so that a burst of
     * posts keeps its frames flowing rather than stalling until the application's next poll. The caller holds the
     * engine lock and has ended its batch. Raises nothing (the pass's failure is counted, as a poll's).
     */
    public abstract void windowFull();

    /**
     * Asks for the queue pairs' timers to run no later than {@code deadlineNs} (a retransmission timeout or the end
     * of a receiver-not-ready wait): the background tick ({@code timerPeriodUs}, up to a second) only bounds idle
     * work, it must not stretch the protocol's own deadlines.
     *
     * @param deadlineNs when, on the {@link System#nanoTime} clock; {@link Long#MAX_VALUE} for none
     */
    public abstract void timerAt(long deadlineNs);

    /**
     * Sends a standalone ACK of the request stream now, with its selective-ack bits.
     *
     * @param qp the queue pair
     */
    public abstract void sendAck(ProtocolQp qp);

    /**
     * Answers a frame from the connected peer's address that did not prove itself (an inexact NAK or DISCONNECT)
     * with a rate-limited challenge ACK of the true state (RFC 5961), never by obeying it.
     *
     * @param qp the queue pair it named
     */
    public abstract void challenge(ProtocolQp qp);

    /**
     * Sends a standalone ACK flagged RESPONSE_SACK now.
     *
     * @param qp the queue pair
     */
    public abstract void sendResponseAck(ProtocolQp qp);

    /**
     * Sends a NAK of a request.
     *
     * @param qp        the queue pair
     * @param status    the NAK status
     * @param seq       the refused request
     * @param eventCode the event code
     */
    public abstract void sendNak(ProtocolQp qp, int status, int seq, int eventCode);

    /**
     * Resolves and checks an r_key range for a remote access; on success fills {@link #remoteSegment},
     * {@link #remoteOffset} and {@link #remoteRegion}.
     *
     * @param qp      the queue pair the request arrived on
     * @param rKey    the key
     * @param address the target address
     * @param length  bytes
     * @param need    the access needed
     * @param atomic  whether for an atomic
     * @return 0, or the failure as {@code event << 16 | status}
     */
    public abstract int resolveRemote(ProtocolQp qp, int rKey, long address, long length, int need,
                                      boolean atomic);
}
