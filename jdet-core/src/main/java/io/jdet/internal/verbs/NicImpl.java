package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.Nic;
import io.jdet.NicAttributes;
import io.jdet.ProtectionDomain;
import io.jdet.QpState;
import io.jdet.ResourceType;
import io.jdet.WcStatus;
import io.jdet.internal.link.FrameHandler;
import io.jdet.internal.link.Link;
import io.jdet.internal.link.LinkLock;
import io.jdet.internal.protocol.FrameSeal;
import io.jdet.internal.protocol.Isn;
import io.jdet.internal.protocol.PeerValues;
import io.jdet.internal.protocol.ProtocolNic;
import io.jdet.internal.protocol.ProtocolQp;
import io.jdet.internal.protocol.TokenBucket;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * A NIC: a link, the objects created on it, and the engine that runs their protocol. One lock guards it all but
 * the completion queues' rings (see the package's threading notes); posts and polls take it briefly and drive the
 * engine themselves (a poll that finds its queue empty receives frames and runs due timers, or waits for the pass
 * of the thread that holds the engine, {@link #passForPoll}), so a busy-polling application needs no thread
 * hand-off. A progress thread per NIC covers the rest: timers when
 * nobody polls, and frames while threads are blocked waiting for events, except while an application thread
 * blocked on an event sleeps on the link itself and runs the engine when a frame wakes it (the link waiter,
 * {@link #claimLink}): then one frame costs one wake-up. If that thread dies (an {@link Error},
 * or its link failing outside the engine), the NIC becomes fatal: see {@link #failFatally}.
 */
public final class NicImpl extends ProtocolNic implements Nic, FrameHandler {
    static final int MAX_PDS = 65536;
    static final int MAX_MRS = 262144;
    static final long MAX_MR_SIZE = Integer.MAX_VALUE;
    static final int MAX_MWS = 524288;
    static final int MAX_CQS = 131072;
    static final int MAX_CQ_SIZE = 131072;
    static final int MAX_QPS = 65536;
    static final int MAX_WQ_SIZE = 65536;
    static final int MAX_SGES = 256;
    static final int MAX_RD_ATOMIC = PeerValues.MAX_RD_ATOMIC;
    static final long MAX_BIND_LENGTH = 1L << 31;
    private static final int RX_BATCH = 64;
    private static final long APP_ACTIVE_NS = TimeUnit.MICROSECONDS.toNanos(500);
    /** Idle application passes skipped between two that run ({@link #progressQuietly}): a power of two, less one. */
    static final int IDLE_PASS_MASK = 63;
    private static final VarHandle LAST_APP_NS;
    private static final VarHandle LINK_WAITER;
    private static final VarHandle PASSES_BEGUN;
    private static final VarHandle PASSES_DONE;
    /** The longest {@link #shutdown} waits for the link waiter to leave the link before it closes it. */
    private static final long LINK_WAITER_LEAVE_NS = TimeUnit.SECONDS.toNanos(2);

    static {
        try {
            LAST_APP_NS = MethodHandles.lookup().findVarHandle(NicImpl.class, "lastAppNs", long.class);
            LINK_WAITER = MethodHandles.lookup().findVarHandle(NicImpl.class, "linkWaiter", Thread.class);
            PASSES_BEGUN = MethodHandles.lookup().findVarHandle(NicImpl.class, "passesBegun", long.class);
            PASSES_DONE = MethodHandles.lookup().findVarHandle(NicImpl.class, "passesDone", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public final DeviceImpl device;
    final String name;
    public final Link link;
    final EventQueueImpl event;
    /**
     * The engine lock, which flushes the link's batched frames as its holder lets go, and releases with a store
     * rather than a fence ({@link LinkLock}).
     */
    public final LinkLock lock;
    final KeyTable keys = new KeyTable();
    public final KeyTable qpTable = new KeyTable();
    /** Queue pairs destroyed lately while connected, and to whom (engine lock). */
    final DestroyedQps destroyedQps = new DestroyedQps();
    final List<PdImpl> pds = new ArrayList<>();
    final List<CqImpl> cqs = new ArrayList<>();
    final List<QpImpl> qps = new ArrayList<>();
    int mrCount;
    int mwCount;
    public final CmHandler cm;
    /** Bounds the replies to frames for unknown queue pairs ({@code Configuration.unknownRepliesPerSecond}). */
    private final TokenBucket unknownReplies;
    /** Bounds challenge ACKs ({@code Configuration.challengeAcksPerSecond}). */
    private final TokenBucket challenges;

    final int mtu;
    /**
     * When a standalone ACK leaves at once: a quarter of the sender's window, in units of {@code QpImpl}'s
     * unacknowledged count ({@code windowFrames / 4} frames, or four times as many small sends and writes).
     */
    final int ackAfterUnits;
    final long ackDelayNs;
    private final long timerPeriodNs;

    private final ByteBuffer txHeaderView;
    private final FrameCrc txCrc = new FrameCrc();
    private static final FrameGather NO_PAYLOAD = new FrameGather(0);

    /** Scratch memory of protected connections, made with the first one. */
    private io.jdet.internal.protocol.SealBuffers sealBuffers;

    private QpImpl[] ackList = new QpImpl[16];
    private int ackCount;
    private long nextTimerNs;
    /** When the application last drove the engine; written under the lock, read by the progress thread without. */
    private long lastAppNs;
    private long rxNow;


    private Thread progressThread;
    /**
     * The application thread that sleeps on the link ({@link Link#APPLICATION}) while it waits for an event, and
     * runs the engine itself when it wakes ({@link #claimLink}); null when none does. While one does, the progress
     * thread stays off the link, so that a frame wakes that thread alone.
     */
    private volatile Thread linkWaiter;
    /** Whether the progress thread is in, or about to enter, the link's await (a new link waiter wakes it). */
    private volatile boolean progressAwaiting;
    /** When the progress thread plans to wake from its sleep (engine lock held to write or read). */
    private long progressSleepUntilNs;
    /** When the link waiter plans to wake from its sleep on the link (engine lock held to write or read). */
    private long linkWaiterSleepUntilNs;
    private volatile boolean closed;
    /** Why the progress thread died, once it has: the NIC is in its fatal state (see {@link #failFatally}). */
    private volatile Throwable fatalCause;
    /** Set by the first {@link #shutdown}: a NIC shuts down once, whichever close ran it. */
    private final AtomicBoolean shutdownStarted = new AtomicBoolean();
    /** Set when that shutdown is over: a close that lost the race waits for it. */
    private volatile boolean shutdownDone;
    /** The longest a close that lost the race waits for the other's shutdown (which joins threads for 2 s each). */
    private static final long SHUTDOWN_WAIT_NS = TimeUnit.SECONDS.toNanos(6);
    /** Set by the first {@link #failFatally}: a NIC fails once, with one event, whichever thread met the failure. */
    private final AtomicBoolean failedOnce = new AtomicBoolean();
    /**
     * Engine passes begun and finished (written under the engine lock, read without): a poll that finds the engine
     * busy waits for a pass begun after it looked instead of running one of its own ({@link #passForPoll}).
     */
    @SuppressWarnings("unused") // through PASSES_BEGUN
    private long passesBegun;
    @SuppressWarnings("unused") // through PASSES_DONE
    private long passesDone;
    /** Application passes found idle since the last that ran ({@link #progressQuietly}); engine lock. */
    private int idlePasses;
    /** A poll found the engine busy and waits for a pass: the holder runs one as it lets go of the engine. */
    private volatile boolean passWanted;

    NicImpl(final DeviceImpl device, final String name, final Link link, final EventQueueImpl event) {
        final ByteBuffer headerView = ByteBuffer.allocateDirect(Frame.HEADER_LENGTH); // no session per frame
        this.txHeaderView = headerView;
        super(link.mtu(), device.configuration, new io.jdet.internal.observe.NicObserver(link.address()),
            MemorySegment.ofBuffer(headerView), MAX_SGES + 2); // + a protected frame's trailer
        this.device = device;
        this.name = name;
        this.link = link;
        this.lock = new LinkLock(link);
        this.event = event;
        final io.jdet.Configuration c = device.configuration;
        this.mtu = link.mtu();
        this.ackAfterUnits = Math.max(1, c.windowFrames() / 4) * SMALL_WINDOW;
        this.ackDelayNs = TimeUnit.MICROSECONDS.toNanos(c.ackDelayUs());
        this.timerPeriodNs = TimeUnit.MICROSECONDS.toNanos(c.timerPeriodUs());
        this.cm = device.cmFactory.apply(this);
        this.unknownReplies = new TokenBucket(c.unknownRepliesPerSecond(), Math.max(1, c.unknownRepliesPerSecond() / 10));
        this.challenges = new TokenBucket(c.challengeAcksPerSecond(), Math.max(1, c.challengeAcksPerSecond() / 10));
    }

    /**
     * Takes one of the rate-limited replies to unknown traffic ({@code Configuration.unknownRepliesPerSecond}), or
     * counts the reply as limited (engine lock held).
     *
     * @param now the clock, {@link System#nanoTime()}
     * @return whether a reply may be sent now
     */
    public boolean unknownReplyAllowed(final long now) {
        if (unknownReplies.tryTake(now)) {
            return true;
        }
        counters.repliesLimited++;
        return false;
    }

    /**
     * The scratch memory every protected connection of this NIC shares (engine lock held).
     *
     * @return the buffers, made on first use
     */
    public io.jdet.internal.protocol.SealBuffers sealBuffers() {
        if (sealBuffers == null) {
            sealBuffers = new io.jdet.internal.protocol.SealBuffers(mtu);
        }
        return sealBuffers;
    }

    Thread progressThread() {
        return progressThread;
    }

    /** @return the application thread sleeping on the link now ({@link #claimLink}), or null; for tests */
    Thread linkWaiter() {
        return linkWaiter;
    }

    void start() {
        progressThread = Thread.ofPlatform().daemon().name("jdet-progress-" + link.address())
            .start(this::progressLoop);
    }

    // ---------------------------------------------------------------- API

    @Override
    public NicAttributes query() {
        checkOpen();
        return new NicAttributes(name, link.address(), 0x8086, 0, 1, Frame.VERSION, mtu, MAX_PDS, MAX_MRS,
            MAX_MR_SIZE, MAX_MWS, MAX_CQS, CqImpl.ENTRIES_PER_PAGE, MAX_CQ_SIZE, MAX_QPS, MAX_WQ_SIZE,
            MAX_WQ_SIZE, Integer.MAX_VALUE, Integer.MAX_VALUE, 1, MAX_SGES, MAX_RD_ATOMIC, MAX_RD_ATOMIC, 4096);
    }

    @Override
    public String address() {
        return link.address();
    }

    @Override
    public io.jdet.ConnectionManager connectionManager() {
        return cm;
    }

    @Override
    public ProtectionDomain allocPd() {
        lock.lock();
        try {
            checkOpen();
            if (pds.size() >= MAX_PDS) {
                throw new DetException(Errno.EAGAIN, "the NIC has " + MAX_PDS + " protection domains");
            }
            final PdImpl pd = new PdImpl(this);
            pds.add(pd);
            return pd;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public CompletionQueue createCq(final int size, final io.jdet.EventQueue eventQueue) {
        final EventQueueImpl eq = eventQueue == null ? null : Checks.event(eventQueue, device);
        if (size < 0 || size > MAX_CQ_SIZE) {
            throw new DetException(Errno.EINVAL, "size " + size + " not in [0, " + MAX_CQ_SIZE + "]");
        }
        synchronized (device) {
            if (eq != null) {
                if (eq.isClosed()) {
                    throw new IllegalStateException("event queue closed");
                }
                eq.users++;
                eq.addSource(this);
            }
        }
        lock.lock();
        try {
            checkOpen();
            if (cqs.size() >= MAX_CQS) {
                throw new DetException(Errno.EAGAIN, "the NIC has " + MAX_CQS + " completion queues");
            }
            final CqImpl cq = new CqImpl(this, size, eq);
            cqs.add(cq);
            return cq;
        } catch (final RuntimeException e) {
            releaseEventUser(eq, null);
            throw e;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Map<String, Long> counters() {
        lock.lock();
        try {
            final Map<String, Long> m = counters.snapshot();
            link.addCounters(m);
            return m;
        } finally {
            lock.unlock();
        }
    }

    void releaseEventUser(final EventQueueImpl eq, final Object owner) {
        if (eq != null) {
            synchronized (device) {
                eq.users--;
                eq.removeSource(this);
            }
            if (owner != null) {
                eq.purge(owner);
            }
        }
    }

    /**
     * Takes the engine lock on the data path (posts and polls) without ever parking on it: the holder (another
     * poller, or the progress thread) keeps it only for a few microseconds, where {@code lock()} would park in
     * slices of 10 µs and more once its spins are spent. Spins briefly, then yields between attempts so a
     * descheduled holder gets the CPU.
     */
    void lockDataPath() {
        if (lock.tryLock()) {
            return;
        }
        for (int attempt = 0; !lock.tryLock(); attempt++) {
            if (attempt < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /**
     * Lets go of the engine lock taken by {@link #lockDataPath}. The outermost holder first runs the engine pass a
     * poll asked for while it held the lock ({@link #passForPoll}): the waiting poll's work is done by the thread
     * that has the engine already (flat combining), rather than after a hand-off of the lock.
     */
    void unlockDataPath() {
        try {
            if (passWanted && lock.getHoldCount() == 1 && !closed) {
                passWanted = false;
                progressQuietly();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The engine pass of a poll that found its completion queue empty: receives frames, sends owed acks, runs due
     * timers. If another thread holds the engine, waits for a pass that begins after this call (which the holder
     * runs as it lets go, {@link #unlockDataPath}, or this thread runs once the lock is free) instead of queueing
     * for the lock: several polls share one pass, and none waits for a lock hand-off. Never parks on the lock,
     * and never allocates.
     */
    void passForPoll() {
        if (lock.tryLock()) {
            try {
                if (passWanted) {
                    passWanted = false; // this pass begins after every waiting poll asked: it serves them too
                }
                progressQuietly();
            } finally {
                unlockDataPath();
            }
            return;
        }
        final long seen = (long) PASSES_BEGUN.getAcquire(this);
        passWanted = true; // volatile, after reading passesBegun: a holder that misses it lets go of the lock below
        for (int attempt = 0; (long) PASSES_DONE.getAcquire(this) <= seen; attempt++) {
            if (lock.tryLock()) {
                try {
                    if ((long) PASSES_DONE.getAcquire(this) <= seen) {
                        if (passWanted) {
                            passWanted = false; // as above: the release below must not run a second pass for it
                        }
                        progressQuietly();
                    }
                } finally {
                    unlockDataPath();
                }
                return;
            }
            if (attempt < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /**
     * An engine pass for an application's poll (engine lock held): its failure is not the caller's, so it is
     * counted, not thrown. When the link can tell that nothing waits ({@link Link#mayHaveInput}), no
     * acknowledgement is owed and no frame is held back, all such a pass would do is read the clock for due
     * timers: {@link #IDLE_PASS_MASK} of every {@code IDLE_PASS_MASK + 1} are skipped, so that a thread spinning on
     * an empty queue reads the clock once per 64 polls rather than at each (issue 7's "polling that does no work
     * when nothing changed"), and timers run at most 64 idle polls late. A skipped pass still counts as one for
     * the polls waiting in {@link #passForPoll}: it began after they asked and found nothing. Counted in
     * {@code engine.idle_passes_skipped}.
     */
    void progressQuietly() {
        if (closed) {
            return; // its link may be closed already; a poll of a closed NIC's queue finds nothing new
        }
        if (ackCount == 0 && !txBlocked && (++idlePasses & IDLE_PASS_MASK) != 0 && !link.mayHaveInput()) {
            PASSES_BEGUN.setRelease(this, passesBegun + 1);
            final boolean idle = !link.mayHaveInput(); // looked again after beginning, as a pass receives
            PASSES_DONE.setRelease(this, passesDone + 1);
            if (idle) {
                counters.idlePassesSkipped++;
                return;
            }
            // A frame came meanwhile: a waiting poll may take this empty pass for its own and find nothing (a
            // poll may always come back empty); the full pass below takes the frame in at once.
        }
        idlePasses = 0;
        try {
            progress(System.nanoTime());
        } catch (final RuntimeException e) {
            counters.engineErrors++;
        }
    }

    public void checkOpen() {
        if (closed) {
            throw new IllegalStateException("NIC closed");
        }
    }

    /**
     * Refuses new work on a NIC whose engine has died.
     *
     * @throws DetException EIO once the NIC failed fatally
     */
    public void checkAlive() {
        final Throwable cause = fatalCause; // volatile: pairs with the write in failFatally
        if (cause != null) {
            throw new DetException(Errno.EIO, "the NIC failed fatally: " + cause);
        }
    }

    MrImpl localRegion(final int lKey) {
        final Object o = keys.lookup(lKey);
        return o instanceof MrImpl mr && mr.lKey == lKey && mr.usable() ? mr : null;
    }

    void removeQp(final QpImpl qp) {
        qps.remove(qp);
        qpTable.release(qp.index);
    }

    void asyncEvent(final int rawCode, final ResourceType type, final Object handle) {
        if (event != null) {
            event.post(rawCode, type, handle);
        }
    }

    // ---------------------------------------------------------------- frames out

    /**
     * Seals and sends the frame in {@link #txHeader} and {@link #txGather} to a queue pair's peer.
     *
     * @return {@link #SENT}, {@link #LINK_BUSY}, or {@link #MEMORY_GONE}: the caller fails the work the payload
     *         belongs to (the application closed the arena of a registered region while the frame was built)
     */
    @Override
    public int transmit(final ProtocolQp p, final int payloadLength) {
        final QpImpl qp = (QpImpl) p;
        Frame.sack(txHeader, qp.responder.heldRequests.bits);
        try {
            if (qp.seal != null) {
                qp.seal.seal(txHeader, txGather);
            }
            if (link.checksummed(qp.remotePeer)) {
                txCrc.seal(txHeader, txHeaderView, Frame.HEADER_LENGTH, txGather);
            }
            if (!link.send(qp.remotePeer, txHeader, Frame.HEADER_LENGTH, txGather)) {
                counters.linkBusy++;
                return LINK_BUSY;
            }
        } catch (final IllegalStateException e) {
            // A closed arena makes every access to its memory throw (the JDK's guarantee), so the engine never
            // reads freed memory; anything else is a fault of the engine's own.
            if (payloadAlive()) {
                throw e;
            }
            return MEMORY_GONE;
        }
        counters.framesSent++;
        counters.bytesSent += payloadLength;
        qp.acksSent();
        return SENT;
    }

    private boolean payloadAlive() {
        for (int i = 0; i < txGather.count(); i++) {
            if (!txGather.segment(i).scope().isAlive()) {
                return false;
            }
        }
        return true;
    }

    private boolean sendControl(final QpImpl qp, final long peer, final int opcode, final int dstQp, final int srcQp,
                                final int seq, final int reqAck, final int rspAck, final int key, final int length,
                                final int sack) {
        return sendControl(qp, peer, opcode, 0, dstQp, srcQp, seq, reqAck, rspAck, key, length, sack);
    }

    /** A header-only frame; sealed when {@code qp} (the queue pair it speaks for, or null) is protected. */
    private boolean sendControl(final QpImpl qp, final long peer, final int opcode, final int flags, final int dstQp,
                                final int srcQp, final int seq, final int reqAck, final int rspAck, final int key,
                                final int length, final int sack) {
        Frame.writeBase(txHeader, opcode, flags, 0, dstQp, srcQp, seq, reqAck, rspAck, 0);
        Frame.sack(txHeader, sack);
        Frame.writeExtension(txHeader, 0, 0, 0, key, length, 0, 0);
        txGather.clear();
        FrameGather payload = NO_PAYLOAD;
        if (qp != null && qp.seal != null && peer == qp.remotePeer) {
            qp.seal.seal(txHeader, txGather);
            payload = txGather;
        }
        if (link.checksummed(peer)) {
            txCrc.seal(txHeader, txHeaderView, Frame.HEADER_LENGTH, payload);
        }
        final boolean sent = link.send(peer, txHeader, Frame.HEADER_LENGTH, payload);
        if (sent) {
            counters.framesSent++;
        } else {
            counters.linkBusy++;
        }
        return sent;
    }

    @Override
    public void sendAck(final ProtocolQp p) {
        final QpImpl qp = (QpImpl) p;
        if (qp.state != QpState.CONNECTED) {
            return;
        }
        if (sendControl(qp, qp.remotePeer, Frame.OP_ACK, qp.remoteQpNum, qp.number, 0, qp.responder.reqExpected - 1,
            qp.requester.rspExpected - 1, 0, 0, qp.responder.heldRequests.bits)) {
            counters.acksSent++;
            qp.acksSent();
        }
    }

    /** An ACK whose SACK field describes the response stream: the responses this side holds beyond a gap. */
    @Override
    public void sendResponseAck(final ProtocolQp p) {
        final QpImpl qp = (QpImpl) p;
        if (qp.state != QpState.CONNECTED) {
            return;
        }
        if (sendControl(qp, qp.remotePeer, Frame.OP_ACK, Frame.FLAG_RESPONSE_SACK, qp.remoteQpNum, qp.number, 0,
            qp.responder.reqExpected - 1, qp.requester.rspExpected - 1, 0, 0, qp.requester.heldResponses.bits)) {
            counters.acksSent++;
            qp.acksSent();
        }
    }

    @Override
    public void sendNak(final ProtocolQp p, final int status, final int seq, final int eventCode) {
        final QpImpl qp = (QpImpl) p;
        sendControl(qp, qp.remotePeer, Frame.OP_NAK, qp.remoteQpNum, qp.number, seq, qp.responder.reqExpected - 1,
            qp.requester.rspExpected - 1, status, eventCode, qp.responder.heldRequests.bits);
    }

    void sendDisconnect(final long peer, final int dstQp, final int srcQp, final int code, final QpImpl qp) {
        sendDisconnect(peer, dstQp, srcQp, code, qp, qp == null ? 0 : qp.requester.nextRequestSeq());
    }

    /**
     * A DISCONNECT whose sequence number proves it belongs (RFC 5961): the receiver obeys it only if {@code seq}
     * is exactly the next request it expects. Sent unprompted, that is the next request this side would send; in
     * answer to a frame, that frame's request ack + 1, which a blind spoofer cannot know.
     */
    void sendDisconnect(final long peer, final int dstQp, final int srcQp, final int code, final QpImpl qp,
                        final int seq) {
        if (qp == null) {
            sendDisconnect(peer, dstQp, srcQp, code, null, seq, 0, 0);
        } else {
            sendDisconnect(peer, dstQp, srcQp, code, qp, seq, qp.responder.reqExpected - 1,
                qp.requester.rspExpected - 1);
        }
    }

    /** A DISCONNECT carrying the given acknowledgements (and, from a queue pair, its SACK of held requests). */
    private void sendDisconnect(final long peer, final int dstQp, final int srcQp, final int code, final QpImpl qp,
                                final int seq, final int reqAck, final int rspAck) {
        if (peer < 0) {
            return;
        }
        counters.disconnectsSent++;
        sendControl(qp, peer, Frame.OP_DISCONNECT, dstQp, srcQp, seq, reqAck, rspAck, code, 0,
            qp == null ? 0 : qp.responder.heldRequests.bits);
    }

    /**
     * An exchange with the connected peer's address did not prove itself (an inexact DISCONNECT or NAK, an ACK
     * of something never sent): instead of obeying it, the true peer gets an ACK of the true state (RFC 5961's
     * challenge ACK), within {@code Configuration.challengeAcksPerSecond}. A peer that really meant it answers
     * with the exact frame; a spoofer never sees the challenge.
     */
    @Override
    public void challenge(final ProtocolQp qp) {
        if (challenges.tryTake(rxNow)) {
            counters.challengeAcks++;
            sendAck(qp);
        } else {
            counters.repliesLimited++;
        }
    }

    void owesAck(final QpImpl qp) {
        if (qp.inAckList) {
            return;
        }
        if (ackCount == ackList.length) {
            ackList = java.util.Arrays.copyOf(ackList, ackCount * 2);
        }
        ackList[ackCount++] = qp;
        qp.inAckList = true;
    }

    /**
     * Sends the acknowledgements that are due.
     *
     * @param now     the current time
     * @param appPass whether the application drives this pass: an ack a sender asked for then waits for the next
     *                pass (a reply the application posts meanwhile carries it); in the progress thread's pass it
     *                leaves at once
     */
    private void flushAcks(final long now, final boolean appPass) {
        int kept = 0;
        for (int i = 0; i < ackCount; i++) {
            final QpImpl qp = ackList[i];
            if (qp.ackPending && !qp.destroyed && now - qp.ackDeadlineNs < 0 && (appPass || !qp.ackRequested)) {
                ackList[kept++] = qp;
                continue;
            }
            if (qp.ackPending && !qp.destroyed) {
                sendAck(qp);
            }
            qp.inAckList = false;
        }
        for (int i = kept; i < ackCount; i++) {
            ackList[i] = null;
        }
        ackCount = kept;
    }

    // ---------------------------------------------------------------- frames in

    /**
     * Resolves a remote key and range at this (responding) NIC; on success fills {@link #remoteSegment},
     * {@link #remoteOffset} and {@link #remoteRegion}.
     *
     * @return 0, or an error as {@code event << 16 | status}
     */
    @Override
    public int resolveRemote(final ProtocolQp p, final int rKey, final long address, final long length,
                             final int need, final boolean atomic) {
        final QpImpl qp = (QpImpl) p;
        final EventCode badKey = atomic ? EventCode.INVALID_ATOMIC_KEY : EventCode.INVALID_RDMA_KEY;
        final Object o = keys.lookup(rKey);
        final MrImpl mr;
        long at = address;
        final int rights;
        if (o instanceof MrImpl region && region.rKey == rKey && rKey != 0 && region.valid) {
            mr = region;
            rights = region.access;
            if (mr.pd != qp.pd) {
                return fault(WcStatus.PROTECTION_ERR, EventCode.PROTECTION_VIOLATION);
            }
        } else if (o instanceof MwImpl mw && mw.activeRKey == rKey && mw.bound && !mw.destroyed) {
            if (mw.pd != qp.pd || mw.type == 2 && mw.boundQp != qp) {
                return fault(WcStatus.PROTECTION_ERR, EventCode.PROTECTION_VIOLATION);
            }
            if (mw.grantLapsed()) {
                return fault(WcStatus.PROTECTION_ERR, badKey); // its region was re-keyed: as good as deregistered
            }
            mr = mw.mr;
            rights = mw.access;
            if (mw.zeroBased) {
                if (address < 0 || address > mw.length) {
                    return fault(WcStatus.BOUNDS_ERR, EventCode.BOUNDS_VIOLATION);
                }
                at = mw.address + address;
            }
            if (!allowed(rights, need)) {
                return fault(WcStatus.ACCESS_ERR, EventCode.ACCESS_VIOLATION);
            }
            if (Long.compareUnsigned(at + length, at) < 0) {
                return fault(WcStatus.WRAP_ERR, EventCode.WRAP_ERROR);
            }
            final long off = at - mw.address;
            if (off < 0 || off > mw.length || length > mw.length - off) {
                return fault(WcStatus.BOUNDS_ERR, EventCode.BOUNDS_VIOLATION);
            }
        } else {
            return fault(WcStatus.PROTECTION_ERR, badKey);
        }
        if (!mr.usable()) {
            return fault(WcStatus.PROTECTION_ERR, badKey); // its arena was closed: as good as deregistered
        }
        if (!allowed(rights, need)) {
            return fault(WcStatus.ACCESS_ERR, EventCode.ACCESS_VIOLATION);
        }
        if (Long.compareUnsigned(at + length, at) < 0) {
            return fault(WcStatus.WRAP_ERR, EventCode.WRAP_ERROR);
        }
        if (!mr.contains(at, length)) {
            return fault(WcStatus.BOUNDS_ERR, EventCode.BOUNDS_VIOLATION);
        }
        remoteSegment = mr.segment;
        remoteOffset = at - mr.address;
        remoteRegion = mr;
        return 0;
    }

    private static boolean allowed(final int rights, final int need) {
        if (need == Access.REMOTE_ATOMIC) {
            return (rights & Access.REMOTE_ATOMIC) != 0
                || (rights & (Access.REMOTE_READ | Access.REMOTE_WRITE)) == (Access.REMOTE_READ | Access.REMOTE_WRITE);
        }
        return (rights & need) == need;
    }

    private static int fault(final WcStatus status, final EventCode event) {
        return event.code() << 16 | status.code();
    }

    /** The engine places a lent payload straight from the sender's memory: one copy per byte on the fabric. */
    @Override
    public boolean takesPayloadApart() {
        return true;
    }

    @Override
    public void onFrame(final MemorySegment frame, final int frameLength, final long peer, final MemorySegment payload,
                        final long payloadOffset) {
        beginApart(frame, payload, payloadOffset);
        try {
            onFrame(frame, frameLength, peer);
        } finally {
            endApart();
        }
    }

    /**
     * A long send, write or read response is arriving over a link that can receive it into place (only the UDP link
     * asks).
     */
    @Override
    public boolean placing() {
        return placeHint;
    }

    /**
     * Where the payload of a peeked datagram goes, if it is the next fragment of a long send, write or read response
     * on a plain (not sealed) connected queue pair from its own peer: see
     * {@link io.jdet.internal.protocol.Responder#placeable} and {@link io.jdet.internal.protocol.Requester#placeable}.
     * Otherwise 0, and after {@link #PLACE_MISSES} such answers in a row the link stops looking until the next long
     * message. Engine lock held; changes no state but the hint's.
     */
    @Override
    public int placement(final MemorySegment h, final int length, final long peer, final FrameGather target) {
        int placed = 0;
        if (fatalCause == null && !closed && Frame.magic(h) == Frame.MAGIC && Frame.version(h) == Frame.VERSION
            && (Frame.flags(h) & ~Frame.ALL_FLAGS) == 0
            && (Frame.flags(h) & Frame.FLAG_PROTECTED) == 0 && Frame.wireLength(h, 0) == length) {
            final int dst = Frame.dstQp(h);
            if (qpTable.lookup(dst) instanceof QpImpl qp && qp.number == dst && !qp.destroyed
                && qp.state == QpState.CONNECTED && qp.seal == null && peer == qp.remotePeer
                && Frame.srcQp(h) == qp.remoteQpNum) {
                final int opcode = Frame.opcode(h);
                if (opcode == Frame.OP_WRITE || opcode == Frame.OP_SEND) {
                    placed = qp.responder.placeable(h, target);
                } else if (opcode == Frame.OP_READ_RESP) {
                    placed = qp.requester.placeable(h, target);
                }
            }
        }
        if (placed > 0) {
            placeMisses = 0;
        } else if (++placeMisses >= PLACE_MISSES) {
            placeHint = false;
        }
        return placed;
    }

    @Override
    public void onPlacedFrame(final MemorySegment frame, final int frameLength, final long peer, final int placed) {
        beginPlaced(frame, placed);
        try {
            onFrame(frame, frameLength, peer);
        } finally {
            endApart();
        }
    }

    @Override
    public void settleSent() {
        link.settle();
    }

    @Override
    public void onFrame(final MemorySegment frame, final int frameLength, final long peer) {
        counters.framesReceived++;
        if (frameLength < Frame.HEADER_LENGTH || Frame.magic(frame) != Frame.MAGIC
            || Frame.version(frame) != Frame.VERSION || (Frame.flags(frame) & ~Frame.ALL_FLAGS) != 0
            || Frame.wireLength(frame, 0) != frameLength) {
            counters.badHeader++;
            return;
        }
        MemorySegment f = frame;
        int length = frameLength;
        final int opcode = Frame.opcode(f);
        if (!knownOpcode(opcode)) {
            counters.badOpcode++;
            return;
        }
        final int dst = Frame.dstQp(f);
        if (Frame.isConnectionManager(opcode)) {
            if (dst != 0) {
                counters.badHeader++;
                return;
            }
            try {
                cm.onFrame(f, opcode, peer);
            } catch (final RuntimeException e) {
                counters.engineErrors++; // that frame is lost; the rest of the receive batch still runs
            }
            return;
        }
        final Object o = qpTable.lookup(dst);
        final QpImpl qp = o instanceof QpImpl q && q.number == dst && !q.destroyed ? q : null;
        if (qp == null) {
            counters.unknownQp++;
            if (opcode != Frame.OP_DISCONNECT && opcode != Frame.OP_NAK
                && (opcode != Frame.OP_ACK || destroyedQps.indexOf(dst, peer, Frame.srcQp(f)) >= 0)) {
                // At most a rate-limited trickle of replies, each no larger than the frame it answers: a spoofed
                // flood cannot be reflected. The reply echoes the frame's ack, so only its true sender obeys it.
                if (unknownReplies.tryTake(rxNow)) {
                    // A queue pair destroyed while connected to that sender says so again, should its DISCONNECT
                    // have been lost or inexact: the peer then ends as it would have, not with INVALID_QP.
                    final int gone = destroyedQps.indexOf(dst, peer, Frame.srcQp(f));
                    if (gone < 0) {
                        sendDisconnect(peer, Frame.srcQp(f), dst, EventCode.INVALID_QP.code(), null,
                            Frame.reqAck(f) + 1);
                    } else { // with its last acks: the peer's requests that arrived still complete successfully
                        sendDisconnect(peer, Frame.srcQp(f), dst, EventCode.QP_DESTROYED.code(), null,
                            Frame.reqAck(f) + 1, destroyedQps.reqAck(gone), destroyedQps.rspAck(gone));
                    }
                } else {
                    counters.repliesLimited++;
                }
            }
            return;
        }
        if (qp.state == QpState.IDLE) {
            counters.notConnected++;
            return;
        }
        if (peer != qp.remotePeer || Frame.srcQp(f) != qp.remoteQpNum) {
            counters.foreignSource++;
            return;
        }
        final boolean isProtected = (Frame.flags(f) & Frame.FLAG_PROTECTED) != 0;
        if (qp.seal != null) {
            if (!isProtected) {
                counters.sealMissing++; // an injected plain frame, however exact its numbers
                return;
            }
            f = qp.seal.open(f, length);
            if (f == null) {
                return; // forged, altered or replayed: counted by the seal
            }
            length -= FrameSeal.TRAILER_LENGTH;
        } else if (isProtected) {
            counters.badHeader++; // protection this connection never agreed
            return;
        }
        if (qp.state == QpState.ERROR) {
            // Any frame but the peer's own NAK or DISCONNECT (those get no answer, so two queue pairs in ERROR never
            // trade frames) is answered, one for one, with this side's NAK or DISCONNECT again: the first may have
            // met a full ring or been lost, and an ACK may be all the peer still sends while it waits for a response.
            if (opcode != Frame.OP_DISCONNECT && opcode != Frame.OP_NAK) {
                qp.reannounceError(Frame.reqAck(f) + 1);
            }
            return;
        }
        try {
            qp.onFrame(f, opcode, rxNow);
        } catch (final RuntimeException | InternalError e) {
            // The queue pair's state can no longer be trusted: it fails, rather than go on and acknowledge work
            // that may not have been done. (A request that fails is answered by the responder itself, with a NAK.)
            // The rest of the receive batch still runs.
            counters.engineErrors++;
            qp.enterError(EventCode.QP_FATAL.code(), false, true, true);
        }
    }


    private static boolean knownOpcode(final int opcode) {
        return opcode <= Frame.OP_FETCH_ADD || opcode == Frame.OP_ACK || opcode == Frame.OP_DISCONNECT
            || opcode == Frame.OP_READ_RESP || opcode == Frame.OP_ATOMIC_RESP || opcode == Frame.OP_NAK
            || Frame.isConnectionManager(opcode);
    }

    // ---------------------------------------------------------------- progress

    /**
     * Receives a batch of frames, sends owed acknowledgements and runs due timers. Engine lock held. Allocation
     * free.
     *
     * @param now the current time
     * @return how much work was done
     */
    int progress(final long now) {
        if (fatalCause != null) {
            return 0; // a dead engine runs nothing: its link may be what failed
        }
        LAST_APP_NS.setOpaque(this, now); // opaque: the progress thread only needs to see it eventually
        return doProgress(now, true);
    }

    @Override
    public void beginBatch() {
        link.cork();
    }

    @Override
    public void endBatch() {
        link.uncork();
    }

    @Override
    public void endBatchHolding() {
        link.uncorkHolding();
    }

    /**
     * Runs an engine pass for a post whose window is full, when acknowledgements wait. Unlike a poll's, the pass does
     * not count as the application driving the engine: an application that posts a burst and then stops polling
     * must not keep the progress thread off for {@link #APP_ACTIVE_NS}, or the frames still waiting for the window
     * would wait that long.
     */
    @Override
    public void windowFull() {
        if (link.inputWaiting() && !closed && fatalCause == null) {
            try {
                doProgress(System.nanoTime(), true);
            } catch (final RuntimeException e) {
                counters.engineErrors++;
            }
        }
    }

    private int doProgress(final long now, final boolean appPass) {
        // One batch per pass: acks, responses and the frames the acks release share datagrams where they can.
        PASSES_BEGUN.setRelease(this, passesBegun + 1); // engine lock held: the only writer
        link.cork();
        try {
            rxNow = now;
            int work = link.receive(this, RX_BATCH);
            if (ackCount > 0) {
                flushAcks(now, appPass);
            }
            if (txBlocked) {
                txBlocked = false;
                for (int i = 0; i < qps.size(); i++) {
                    final QpImpl qp = qps.get(i);
                    if (qp.state == QpState.CONNECTED) {
                        qp.requester.pump(now);
                        qp.responder.pumpResponses(now);
                    }
                }
            }
            if (now - nextTimerNs >= 0) {
                nextTimerNs = now + timerPeriodNs;
                for (int i = 0; i < qps.size(); i++) {
                    qps.get(i).onTimer(now);
                }
                cm.onTimer(now);
                // The next tick comes no later than the earliest deadline still ahead (another queue pair's RTO,
                // say, armed before this one brought the tick forward; a give-up; the connection manager's next
                // retransmission).
                for (int i = 0; i < qps.size(); i++) {
                    final QpImpl qp = qps.get(i);
                    if (qp.state == QpState.CONNECTED) {
                        timerAt(qp.requester.nextDeadline());
                        timerAt(qp.responder.nextDeadline());
                    }
                }
                timerAt(cm.nextDeadline());
                work++;
            }
            return work;
        } finally {
            PASSES_DONE.setRelease(this, passesDone + 1); // release: what the pass completed is visible with it
            link.uncork();
        }
    }

    @Override
    public void timerAt(final long deadlineNs) {
        // engine lock held. A deadline already due (a queue pair not connected keeps its stale one) is left to
        // the tick: running the timers on every pass for it would do nothing but cost.
        if (deadlineNs != Long.MAX_VALUE && deadlineNs - nextTimerNs < 0 && deadlineNs - rxNow > 0) {
            nextTimerNs = deadlineNs;
            // A thread asleep on the link (the progress thread while the application is idle, or an application
            // thread blocked as link waiter) computed its sleep before this deadline existed: a post or a call from
            // another thread armed it, and if no frame comes (the one sent was lost) nothing else wakes the sleeper
            // before its planned time, up to a timer period. Woken, it runs the engine and sleeps again until the
            // deadline. (The thread running the engine now sleeps after it looked at the deadlines.)
            final Thread me = Thread.currentThread();
            if (deadlineNs - progressSleepUntilNs < 0 && me != progressThread) {
                progressSleepUntilNs = deadlineNs;
                link.wakeup(Link.PROGRESS);
                // It may sleep off the link instead (parked while a link waiter held it, or while the application
                // was active), where the link's wakeup does not reach it.
                LockSupport.unpark(progressThread);
            }
            final Thread waiter = linkWaiter;
            if (waiter != null && waiter != me && deadlineNs - linkWaiterSleepUntilNs < 0) {
                linkWaiterSleepUntilNs = deadlineNs;
                link.wakeup(Link.APPLICATION);
            }
        }
    }

    private long nextDeadline(final long now) {
        long deadline = now + timerPeriodNs;
        for (int i = 0; i < ackCount; i++) {
            deadline = Math.min(deadline, ackList[i].ackDeadlineNs);
        }
        for (int i = 0; i < qps.size(); i++) {
            final QpImpl qp = qps.get(i);
            if (qp.state == QpState.CONNECTED) {
                deadline = Math.min(deadline, Math.min(qp.requester.nextDeadline(), qp.responder.nextDeadline()));
            }
        }
        // The tick may have been brought forward (the connection manager's retransmissions among others): no
        // later than it. A tick already due is run at once.
        return nextTimerNs - deadline < 0 ? nextTimerNs : deadline;
    }

    // ---------------------------------------------------------------- the link waiter

    /**
     * Makes the calling thread, blocked waiting for an event this NIC may raise, the NIC's link waiter: from now
     * until {@link #releaseLink} it sleeps on the link ({@code link.await(Link.APPLICATION, ...)}) and runs the
     * engine itself whenever it wakes ({@link #runForLinkWaiter}), so an arriving frame costs one wake-up, that of
     * the thread it is for, as a blocking socket read does. The progress thread stays off the link meanwhile (it
     * is woken out of the link's await if it is in it) and takes over again when the waiter leaves.
     *
     * @return false if another thread is the link waiter, or the NIC is closed or dead: wait some other way
     */
    boolean claimLink() {
        if (closed || fatalCause != null || !LINK_WAITER.compareAndSet(this, null, Thread.currentThread())) {
            return false;
        }
        if (closed) { // volatile both ways: shutdown sets closed, then waits while a link waiter is set
            linkWaiter = null;
            return false;
        }
        if (progressAwaiting) {
            link.wakeup(Link.PROGRESS); // off the link with it, so that the next frame wakes the waiter alone
        }
        return true;
    }

    /**
     * One turn of the link waiter (engine lock not held): receives what arrived, sends owed acks, runs due timers.
     *
     * @return how long the waiter may sleep before the engine's next deadline, or -1 if the NIC closed or died
     *         (the waiter then releases the link and waits some other way)
     */
    long runForLinkWaiter() {
        if (closed || fatalCause != null) {
            return -1;
        }
        lockDataPath();
        try {
            if (closed) {
                return -1;
            }
            final long now = System.nanoTime();
            try {
                progress(now);
                final long sleepNs = Math.max(1000, nextDeadline(now) - now);
                linkWaiterSleepUntilNs = now + sleepNs;
                return sleepNs;
            } catch (final RuntimeException e) {
                counters.engineErrors++; // as in the progress thread: the protocol retransmits what was lost
                return timerPeriodNs;
            }
        } finally {
            unlockDataPath();
        }
    }

    /**
     * Ends the calling thread's turn as link waiter ({@link #claimLink}).
     *
     * @param handBack whether the progress thread should take over at once (the waiter timed out, failed, or
     *                 leaves other threads blocked); otherwise it takes over when it next looks, within a timer
     *                 period, since the application that got its event drives the engine itself meanwhile
     */
    void releaseLink(final boolean handBack) {
        linkWaiter = null;
        if (handBack && progressThread != null) {
            LockSupport.unpark(progressThread);
        }
    }

    /** Waits (bounded) until no application thread sleeps on the link: closed is set, so none claims it again. */
    private void awaitLinkWaiterGone() {
        final long deadline = System.nanoTime() + LINK_WAITER_LEAVE_NS;
        while (true) {
            final Thread waiter = linkWaiter;
            if (waiter == null || waiter == Thread.currentThread() || System.nanoTime() - deadline > 0) {
                return;
            }
            link.wakeup(Link.APPLICATION);
            LockSupport.parkNanos(this, 20_000);
        }
    }

    /**
     * The progress thread's body. A {@link RuntimeException} inside the engine is counted ({@code engine.errors})
     * and the thread goes on (the protocol retransmits what was lost); anything else that escapes, an
     * {@link Error} anywhere or an exception from the link outside the engine lock, puts the NIC into its fatal
     * state ({@link #failFatally}) instead of ending the thread silently.
     */
    private void progressLoop() {
        try {
            runProgress();
        } catch (final Throwable t) {
            failFatally(t);
        }
    }

    /**
     * The NIC's engine died: from now on it is fatal, as an RDMA device after {@code IBV_EVENT_DEVICE_FATAL}.
     * Every queue pair enters ERROR, so every outstanding work request completes with {@code FLUSHED}, and its
     * peer is told with a DISCONNECT carrying {@code QP_FATAL} where the link still carries it; one
     * {@code NIC_FATAL} event goes to the NIC's event queue, counted in {@code engine.errors}; posts, modifies and
     * connection manager calls fail with EIO; polls return what was completed. Closing still works.
     */
    private void failFatally(final Throwable cause) {
        if (closed) {
            return; // the NIC is being closed under the thread that failed: no fatal event after the close
        }
        if (!failedOnce.compareAndSet(false, true)) {
            return; // failed already (the link waiter and the progress thread both met it): one event
        }
        fatalCause = cause; // first, so that nothing new is accepted while the rest is done
        try {
            lock.lock();
            try {
                counters.engineErrors++;
                for (int i = 0; i < qps.size(); i++) {
                    final QpImpl qp = qps.get(i);
                    final boolean wasConnected = qp.state == QpState.CONNECTED;
                    qp.enterError(EventCode.QP_FATAL.code(), false, false, false);
                    if (wasConnected) {
                        tellPeerFatal(qp);
                    }
                }
                cm.nicFailed();
                asyncEvent(EventCode.NIC_FATAL.code(), ResourceType.NIC, this);
            } finally {
                lock.unlock();
            }
        } catch (final Throwable secondary) {
            cause.addSuppressed(secondary); // the event or a flush failed as well: EIO still names the cause
        }
    }

    /**
     * The link failed under the link waiter ({@link #claimLink}), outside the engine: the NIC becomes fatal as if
     * its progress thread had met the failure ({@link #failFatally}), and the progress thread ends.
     *
     * @param cause what the link threw
     */
    void linkWaiterFailed(final Throwable cause) {
        failFatally(cause);
        final Thread progress = progressThread;
        if (progress != null) {
            LockSupport.unpark(progress); // it sees the NIC fatal and ends
        }
    }

    private void tellPeerFatal(final QpImpl qp) {
        try {
            sendDisconnect(qp.remotePeer, qp.remoteQpNum, qp.number, EventCode.QP_FATAL.code(), qp);
        } catch (final RuntimeException linkFailed) {
            counters.linkBusy++; // the link is what failed: the peer learns from its own timeout
        }
    }

    private void runProgress() {
        while (!closed && fatalCause == null) { // a link waiter may have made the NIC fatal ({@link #linkWaiterFailed})
            final Thread waiter = linkWaiter;
            if (waiter != null) {
                // An application thread sleeps on the link and runs the engine, timers included, when it wakes:
                // stay off the link, so that a frame wakes that thread alone. It unparks this thread when it
                // leaves without its event; otherwise this thread looks again within a timer period. (The
                // blocker is that thread: what this one waits for.) The waiter may leave with its event before
                // a deadline it was woken for, or the application may arm one after it left and go idle: this
                // park is then the engine's only sleeper, so it records its wake-up (timerAt unparks it for an
                // earlier deadline) and ends no later than the next tick, brought forward or not: a deadline
                // after that tick is brought forward only by the tick itself (timerAt forwards only deadlines
                // before it), so a park of a whole period from now could miss it by up to a period.
                long parkNs = timerPeriodNs;
                if (lock.tryLock()) {
                    try {
                        if (closed) {
                            return;
                        }
                        final long now = System.nanoTime();
                        if (nextTimerNs - now > 0) { // a tick due already is the waiter's to run: it wakes for it
                            parkNs = Math.min(parkNs, nextTimerNs - now);
                        }
                        progressSleepUntilNs = now + parkNs;
                    } finally {
                        lock.unlock();
                    }
                } else {
                    parkNs = Math.min(parkNs, APP_ACTIVE_NS); // its recorded wake-up is stale: look again soon
                }
                LockSupport.parkNanos(waiter, parkNs);
                continue;
            }
            long now = System.nanoTime();
            final long appNs = (long) LAST_APP_NS.getOpaque(this); // pairs with the opaque write in progress()
            if (now - appNs < APP_ACTIVE_NS && device.blockedWaiters.get() == 0) {
                // The application drives the engine (its polls run the timers too): stay off the lock, so that
                // its posts and polls never contend with this thread (each take of the lock moves its cache line
                // between cores) and look again when it would count as idle.
                LockSupport.parkNanos(this, Math.max(1000, appNs + APP_ACTIVE_NS - now));
                continue;
            }
            long waitNs = timerPeriodNs;
            // A lock held by someone else means the application is driving the engine right now.
            boolean appActive = true;
            int work = 0;
            if (lock.tryLock()) {
                try {
                    if (closed) {
                        return;
                    }
                    appActive = now - lastAppNs < APP_ACTIVE_NS && device.blockedWaiters.get() == 0;
                    if (!appActive || now - nextTimerNs >= 0 || ackCount > 0) {
                        work = doProgress(now, false);
                    }
                    waitNs = Math.max(1000, nextDeadline(now) - now);
                    // Under the engine lock, so that a deadline armed after this point wakes the sleep below
                    // (timerAt); one armed by this thread's own pass is in waitNs already.
                    progressSleepUntilNs = now + (appActive ? Math.min(waitNs, APP_ACTIVE_NS)
                        : Math.min(waitNs, timerPeriodNs));
                } catch (final RuntimeException e) {
                    // The engine thread must survive whatever happens (say, memory freed under a registration):
                    // count it and go on; the protocol retransmits what was lost.
                    counters.engineErrors++;
                } finally {
                    lock.unlock();
                }
            }
            if (work > 1 && !appActive) {
                continue;
            }
            if (appActive) {
                // The application drives the engine; look again soon, so that when it stops polling (or blocks
                // on an event) frames are served promptly. Frames do not wake this thread meanwhile: waking it
                // would cost every sender an unpark.
                LockSupport.parkNanos(this, Math.min(waitNs, APP_ACTIVE_NS));
            } else {
                progressAwaiting = true; // volatile both ways with linkWaiter: see claimLink
                try {
                    if (linkWaiter == null) {
                        link.await(Math.min(waitNs, timerPeriodNs));
                    }
                } finally {
                    progressAwaiting = false;
                }
            }
        }
    }

    // ---------------------------------------------------------------- close

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            if (!pds.isEmpty() || !cqs.isEmpty()) {
                throw new DetException(Errno.EBUSY, pds.size() + " protection domain(s) and " + cqs.size()
                    + " completion queue(s) remain");
            }
            closed = true;
        } finally {
            lock.unlock();
        }
        shutdown();
    }

    /** Destroys everything on the NIC, then closes it (device close). */
    void closeAll() {
        try {
            destroyEverything();
        } finally {
            shutdown(); // whatever failed above, the NIC's thread, link and manager end
        }
    }

    private void destroyEverything() {
        // Collective groups first, as their own close does it: their joiners end, their tags are released, and the
        // memory of their slots (never registered with the device's bookkeeping) is freed.
        final List<io.jdet.Collective> groups = new ArrayList<>();
        lock.lock();
        try {
            for (final PdImpl pd : pds) {
                groups.addAll(pd.groups);
            }
        } finally {
            lock.unlock();
        }
        for (final io.jdet.Collective group : groups) {
            try {
                group.close();
            } catch (final RuntimeException alreadyBroken) {
                // best effort: the rest of the NIC still goes below
            }
        }
        final List<QpImpl> toDestroy;
        lock.lock();
        try {
            toDestroy = new ArrayList<>(qps);
        } finally {
            lock.unlock();
        }
        for (final QpImpl qp : toDestroy) {
            qp.close();
        }
        lock.lock();
        try {
            for (final CqImpl cq : new ArrayList<>(cqs)) {
                cq.users = 0;
                cq.dropPollHooks(); // a collective group's: its queue pairs are gone above, its polls end here
                cq.close();
            }
            final List<Object> objects = keys.all();
            for (final Object o : objects) {
                if (o instanceof MwImpl mw) {
                    mw.close();
                }
            }
            for (final Object o : objects) {
                if (o instanceof MrImpl mr) {
                    mr.close();
                }
            }
            for (final PdImpl pd : new ArrayList<>(pds)) {
                pd.users = 0;
                pd.close();
            }
            closed = true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits up to {@code ms} for a thread to end, even if the caller is interrupted meanwhile (its interrupt is
     * restored on return): the link is unmapped and closed right after, so a closing thread that was interrupted
     * must still not pull it from under a progress thread asleep on it.
     */
    private static void joinUninterruptibly(final Thread thread, final long ms) {
        final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(ms);
        boolean interrupted = false;
        try {
            while (thread.isAlive()) {
                final long leftMs = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMs <= 0) {
                    return;
                }
                try {
                    thread.join(leftMs);
                } catch (final InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void shutdown() {
        closed = true;
        if (!shutdownStarted.compareAndSet(false, true)) {
            // Nic.close and Det.close raced: one thread shuts the NIC down; the other returns once it has (the
            // link, the manager and the reorder pool close once: a second close of the pool's arena would throw).
            final long deadline = System.nanoTime() + SHUTDOWN_WAIT_NS;
            final boolean interrupted = Thread.interrupted(); // else parkNanos returns at once: a busy wait
            try {
                while (!shutdownDone && System.nanoTime() - deadline < 0) {
                    LockSupport.parkNanos(this, 100_000);
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            return;
        }
        try {
            link.wakeup();
            awaitLinkWaiterGone();
            if (progressThread != null && progressThread != Thread.currentThread()) {
                progressThread.interrupt();
                joinUninterruptibly(progressThread, 2000);
            }
        } finally {
            // Whatever failed above or here, every resource is released and the NIC leaves its device and queue.
            lock.lock();
            try {
                try {
                    link.close();
                } finally {
                    try {
                        cm.close();
                    } finally {
                        reorder.close();
                    }
                }
            } finally {
                lock.unlock();
                try {
                    releaseEventUser(event, this);
                    device.removeNic(this);
                } finally {
                    shutdownDone = true;
                }
            }
        }
    }

    @Override
    public String toString() {
        return "Nic[" + name + " @ " + link.address() + "]";
    }
}
