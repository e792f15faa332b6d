package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.MemoryRegion;
import io.jdet.MemoryWindow;
import io.jdet.QpAttributes;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.QueuePair;
import io.jdet.ResourceType;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WrFlags;
import io.jdet.internal.protocol.FrameSeal;
import io.jdet.internal.protocol.Isn;
import io.jdet.internal.protocol.PeerValues;
import io.jdet.internal.protocol.ProtocolNic;
import io.jdet.internal.protocol.ProtocolQp;
import io.jdet.internal.protocol.RecvWr;
import io.jdet.internal.protocol.Requester;
import io.jdet.internal.protocol.Responder;
import io.jdet.internal.protocol.SendWr;

/**
 * A queue pair: the verbs with their synchronous checks, and the state machine. The protocol halves live in
 * {@link Requester} (the send queue, outgoing requests, incoming responses) and {@link Responder} (the receive
 * queue, incoming requests, outgoing responses). Everything runs under the NIC's engine lock, except
 * that polls free work queue slots under a completion queue's ring lock ({@link #retire}, {@link #newEpoch}).
 */
public final class QpImpl implements QueuePair, ProtocolQp {
    public final NicImpl nic;
    final PdImpl pd;
    final CqImpl sqCq;
    final CqImpl rqCq;
    public final int number;
    final int index;
    final Requester requester;
    final Responder responder;
    int sqSges;
    int rqSges;
    public int maxOr;
    public int maxIr;
    public QpState state = QpState.IDLE;
    /** Bumped on reset and destroy: completions of an older epoch no longer free queue slots when polled. */
    int epoch;
    public long remotePeer = -1;
    public int remoteQpNum;
    /** The connection's frame protection, or null for plain frames; set by {@link #protect}. */
    public FrameSeal seal;
    /** The most payload bytes per frame: the NIC's, less a protected frame's trailer. */
    int maxPayload;
    String remoteAddress;
    /**
     * Acknowledgement owed to the peer: frames received since the last frame sent, each small send or write
     * counting 1 and any other frame {@link ProtocolNic#SMALL_WINDOW} (see {@link NicImpl#ackAfterUnits}).
     */
    int unackedUnits;
    boolean ackPending;
    /** The owed acknowledgement was asked for (FORCE_ACK): it leaves at the next progress pass. */
    boolean ackRequested;
    long ackDeadlineNs;
    /**
     * How long an acknowledgement nobody asked for may wait for a frame to carry it: the NIC's delayed-ack time, or
     * longer for a collective group's queue pair ({@link #lazyAcks}). Set before the queue pair connects.
     */
    private long ackDelayNs;
    boolean inAckList;
    /** The NAK sent when this side failed a request, repeated to the peer's retransmissions. */
    int errorNakStatus = -1;
    int errorNakSeq;
    int errorNakEvent;
    /** The event this side announced when it entered ERROR, repeated to the peer's later frames. */
    int errorCode = EventCode.QP_ERROR.code();
    /** Whether this queue pair raises no asynchronous events: a collective group's own, which raises CO events. */
    private volatile boolean silent;
    /** Set by a flush whose completion was lost: the event to raise once it is done (0: none). */
    private int flushOverflow;
    public boolean destroyed;
    /** This end's start sequence numbers (request low, response high): random, new for every incarnation. */
    long localPsn = Isn.pair();
    /** The peer's, once connected. */
    long remotePsn;

    private QpImpl(final PdImpl pd, final QpCreate c) {
        this.nic = pd.nic;
        this.ackDelayNs = nic.ackDelayNs;
        this.maxPayload = nic.maxPayload;
        this.pd = pd;
        this.sqCq = Checks.cq(c.sqCq());
        this.rqCq = Checks.cq(c.rqCq());
        this.sqSges = c.sqSges();
        this.rqSges = c.rqSges();
        this.maxOr = c.maxOr();
        this.maxIr = c.maxIr();
        this.index = nic.qpTable.allocate(this);
        this.number = index << 8 | nic.qpTable.randomTag();
        this.requester = new Requester(this, nic, c.sqSize());
        this.responder = new Responder(this, nic, c.rqSize(), Math.max(1, c.maxIr()));
    }

    static QpImpl create(final PdImpl pd, final QpCreate c) {
        if (c == null) {
            throw new IllegalArgumentException("create attributes are null");
        }
        final NicImpl nic = pd.nic;
        final CqImpl sq = Checks.cq(c.sqCq());
        final CqImpl rq = Checks.cq(c.rqCq());
        if (c.sqSize() < 0 || c.sqSize() > NicImpl.MAX_WQ_SIZE || c.rqSize() < 0 || c.rqSize() > NicImpl.MAX_WQ_SIZE) {
            throw new DetException(Errno.EINVAL, "queue sizes must be in [0, " + NicImpl.MAX_WQ_SIZE + "]: send "
                + c.sqSize() + ", receive " + c.rqSize());
        }
        if (c.sqSges() < 0 || c.sqSges() > NicImpl.MAX_SGES || c.rqSges() < 0 || c.rqSges() > NicImpl.MAX_SGES) {
            throw new DetException(Errno.EINVAL, "scatter/gather counts must be in [0, " + NicImpl.MAX_SGES
                + "]: send " + c.sqSges() + ", receive " + c.rqSges());
        }
        if (c.maxOr() < 0 || c.maxOr() > NicImpl.MAX_RD_ATOMIC || c.maxIr() < 0
            || c.maxIr() > NicImpl.MAX_RD_ATOMIC) {
            throw new DetException(Errno.EINVAL, "max_or and max_ir must be in [0, " + NicImpl.MAX_RD_ATOMIC + "]: "
                + c.maxOr() + ", " + c.maxIr());
        }
        if (c.sqSize() > 0 && sq == null || c.rqSize() > 0 && rq == null) {
            throw new DetException(Errno.EINVAL, "a queue with a non-zero size needs a completion queue");
        }
        if (sq != null && sq.nic != nic || rq != null && rq.nic != nic) {
            throw new DetException(Errno.EINVAL, "completion queue of another NIC");
        }
        if (sq != null && sq.closed || rq != null && rq.closed) {
            throw new IllegalStateException("completion queue destroyed");
        }
        if (nic.qps.size() >= NicImpl.MAX_QPS) {
            throw new DetException(Errno.EAGAIN, "the NIC has " + NicImpl.MAX_QPS + " queue pairs");
        }
        final QpImpl qp = new QpImpl(pd, c);
        if (sq != null) {
            sq.users++;
        }
        if (rq != null) {
            rq.users++;
        }
        pd.users++;
        nic.qps.add(qp);
        return qp;
    }

    @Override
    public int number() {
        return number;
    }

    /** Engine lock held. */
    @Override
    public boolean connected() {
        return state == QpState.CONNECTED;
    }

    @Override
    public QpAttributes query() {
        nic.lock.lock();
        try {
            checkOpen();
            return new QpAttributes(pd, sqCq, rqCq, state, nic.mtu, requester.queue.capacity, responder.queue.capacity, sqSges,
                rqSges, maxOr, maxIr, number, remoteQpNum, nic.address(), remoteAddress, localPsn, remotePsn);
        } finally {
            nic.lock.unlock();
        }
    }

    // ---------------------------------------------------------------- posting

    private SendWr begin(final long id, final int kind, final WcType type, final int flags) {
        checkOpen();
        nic.checkAlive();
        if ((flags & ~WrFlags.ALL) != 0) {
            throw new DetException(Errno.EINVAL, "unknown work request flags 0x" + Integer.toHexString(flags));
        }
        if (state != QpState.CONNECTED) {
            throw new DetException(Errno.ENOTCONN, "queue pair is " + state);
        }
        if (requester.queue.full()) {
            throw new DetException(Errno.ENOSPC, "send queue full (" + requester.queue.capacity + ")");
        }
        final SendWr w = requester.queue.next(sqSges);
        w.reset(id, kind, type, flags);
        return w;
    }

    @Override
    public void send(final long id, final DataSegment[] segments, final int count, final int flags,
                     final int immediate) {
        nic.lockDataPath();
        try {
            final SendWr w = begin(id, SendWr.KIND_SEND, WcType.SEND, flags);
            Segments.load(w.segments, nic, pd, segments, count, Access.LOCAL_READ);
            w.immediate = immediate;
            requester.post();
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void sendInvalidate(final long id, final DataSegment[] segments, final int count, final int flags,
                               final int rKey) {
        nic.lockDataPath();
        try {
            if ((flags & WrFlags.IMMEDIATE) != 0) {
                throw new DetException(Errno.EINVAL, "a send with invalidate carries no immediate value");
            }
            final SendWr w = begin(id, SendWr.KIND_SEND, WcType.SEND, flags);
            Segments.load(w.segments, nic, pd, segments, count, Access.LOCAL_READ);
            w.rKey = rKey;
            w.operand1 = 1; // marks "invalidate rKey at the peer"
            requester.post();
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void recv(final long id, final DataSegment[] segments, final int count) {
        nic.lockDataPath();
        try {
            checkOpen();
            nic.checkAlive();
            if (state != QpState.IDLE && state != QpState.CONNECTED) {
                throw new DetException(Errno.ENOTCONN, "queue pair is " + state);
            }
            if (responder.queue.full()) {
                throw new DetException(Errno.ENOSPC, "receive queue full (" + responder.queue.capacity + ")");
            }
            final RecvWr r = responder.queue.next(rqSges);
            Segments.load(r.segments, nic, pd, segments, count, Access.LOCAL_WRITE);
            r.id = id;
            responder.post();
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void read(final long id, final DataSegment[] segments, final int count, final long remoteAddress,
                     final int rKey, final int flags) {
        nic.lockDataPath();
        try {
            if (count == 0) {
                throw new DetException(Errno.EINVAL, "a read needs at least one segment");
            }
            final SendWr w = begin(id, SendWr.KIND_READ, WcType.RDMA_READ, flags);
            if (maxOr == 0) {
                throw new DetException(Errno.ENOBUFS, "max_or is 0");
            }
            Segments.load(w.segments, nic, pd, segments, count, Access.LOCAL_WRITE);
            w.remoteAddress = remoteAddress;
            w.rKey = rKey;
            requester.post();
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void write(final long id, final DataSegment[] segments, final int count, final long remoteAddress,
                      final int rKey, final int flags, final int immediate) {
        nic.lockDataPath();
        try {
            final SendWr w = begin(id, SendWr.KIND_WRITE, WcType.RDMA_WRITE, flags);
            Segments.load(w.segments, nic, pd, segments, count, Access.LOCAL_READ);
            w.remoteAddress = remoteAddress;
            w.rKey = rKey;
            w.immediate = immediate;
            requester.post();
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void compExch(final long id, final long compare, final long exchange, final DataSegment local,
                         final long remoteAddress, final int rKey, final int flags) {
        atomic(id, SendWr.KIND_COMP_EXCH, WcType.COMP_EXCH, compare, exchange, local, remoteAddress, rKey, flags);
    }

    @Override
    public void fetchAdd(final long id, final long add, final DataSegment local, final long remoteAddress,
                         final int rKey, final int flags) {
        atomic(id, SendWr.KIND_FETCH_ADD, WcType.FETCH_ADD, add, 0, local, remoteAddress, rKey, flags);
    }

    private final DataSegment[] atomicLocal = new DataSegment[1];
    private final DataSegment atomicEight = new DataSegment();

    private void atomic(final long id, final int kind, final WcType type, final long op1, final long op2,
                        final DataSegment local, final long remoteAddress, final int rKey, final int flags) {
        nic.lockDataPath();
        try {
            if (local == null) {
                throw new DetException(Errno.EINVAL, "no local segment for the original value");
            }
            if ((remoteAddress & 7) != 0) {
                throw new DetException(Errno.EINVAL, "remote address 0x" + Long.toHexString(remoteAddress)
                    + " is not 8-byte aligned");
            }
            final SendWr w = begin(id, kind, type, flags);
            if (maxOr == 0) {
                throw new DetException(Errno.ENOBUFS, "max_or is 0");
            }
            if (local.length() < 8) {
                throw new DetException(Errno.EOVERFLOW, "the local segment holds " + local.length()
                    + " bytes; an atomic returns 8");
            }
            atomicLocal[0] = atomicEight.set(local.address(), 8, local.lKey());
            Segments.load(w.segments, nic, pd, atomicLocal, 1, Access.LOCAL_WRITE);
            if (!nic.localRegion(local.lKey()).contains(local.address(), local.length())) {
                // the whole segment, as every local segment (det_validate_ds), not only the 8 bytes it receives
                throw new DetException(Errno.ERANGE, "segment 0 lies outside its region");
            }
            w.remoteAddress = remoteAddress;
            w.rKey = rKey;
            w.operand1 = op1;
            w.operand2 = op2;
            requester.post();
        } finally {
            atomicLocal[0] = null;
            nic.unlockDataPath();
        }
    }

    @Override
    public int bind(final long id, final MemoryWindow window, final MemoryRegion region, final long address,
                    final long length, final int access, final int flags) {
        final MwImpl mw = Checks.mw(window);
        nic.lockDataPath();
        try {
            final SendWr w = begin(id, SendWr.KIND_BIND, WcType.BIND, flags);
            checkWindow(mw, 1);
            if (length == 0) {
                w.window = mw;
                w.bindLength = 0;
                w.bindReplacedKey = mw.activeRKey;
                w.bindKey = mw.nextKey();
                mw.rKey = w.bindKey;
                requester.post();
                return w.bindKey;
            }
            final MrImpl mr = Checks.mr(region);
            checkBind(mw, mr, address, length, access);
            fillBind(w, mw, mr, address, length, access, mw.nextKey());
            mw.rKey = w.bindKey;
            requester.post();
            return w.bindKey;
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void bindType2(final long id, final MemoryWindow window, final int rKey, final MemoryRegion region,
                          final long address, final long length, final int access, final int flags) {
        final MwImpl mw = Checks.mw(window);
        final MrImpl mr = Checks.mr(region);
        nic.lockDataPath();
        try {
            final SendWr w = begin(id, SendWr.KIND_BIND_TYPE2, WcType.BIND, flags);
            checkWindow(mw, 2);
            if (length == 0) {
                throw new DetException(Errno.EINVAL, "a type 2 window cannot be bound with length 0");
            }
            if (rKey >>> 8 != mw.index) {
                throw new DetException(Errno.EINVAL, "key 0x" + Integer.toHexString(rKey)
                    + " does not belong to this window");
            }
            checkBind(mw, mr, address, length, access);
            fillBind(w, mw, mr, address, length, access, rKey);
            mw.rKey = rKey;
            requester.post();
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void localInvalidate(final long id, final int rKey, final int flags) {
        nic.lockDataPath();
        try {
            final SendWr w = begin(id, SendWr.KIND_LOCAL_INVALIDATE, WcType.LOCAL_INVALIDATE, flags);
            w.rKey = rKey;
            requester.post();
        } finally {
            nic.unlockDataPath();
        }
    }

    private void checkWindow(final MwImpl mw, final int type) {
        if (mw.nic != nic) {
            throw new DetException(Errno.EPERM, "window of another NIC, so of another protection domain");
        }
        if (mw.destroyed) {
            throw new IllegalStateException("window destroyed");
        }
        if (mw.type != type) {
            throw new DetException(Errno.EINVAL, "a type " + mw.type + " window; this verb binds type " + type);
        }
        if (mw.pd != pd) {
            throw new DetException(Errno.EPERM, "window and queue pair in different protection domains");
        }
    }

    private void checkBind(final MwImpl mw, final MrImpl mr, final long address, final long length,
                           final int access) {
        if (mr.nic != nic) {
            throw new DetException(Errno.EPERM, "region of another NIC, so of another protection domain");
        }
        if (!mr.valid) {
            throw new IllegalStateException("region deregistered");
        }
        if (mr.pd != mw.pd) {
            throw new DetException(Errno.EPERM, "region and window in different protection domains");
        }
        if (length < 0 || length > NicImpl.MAX_BIND_LENGTH) {
            throw new DetException(Errno.EINVAL, "window length " + length + " not in [1, 2^31]");
        }
        if ((access & ~(Access.ANY_REMOTE | Access.ZERO_BASED)) != 0) {
            throw new DetException(Errno.EINVAL, "window access 0x" + Integer.toHexString(access)
                + " has bits other than remote rights and ZERO_BASED");
        }
        if (mw.type == 1 && (access & Access.ZERO_BASED) != 0) {
            throw new DetException(Errno.EINVAL, "type 1 windows cannot be zero-based");
        }
        // det_bind's order: EPERM, EINVAL, ERANGE, then every EACCES
        if (Long.compareUnsigned(address + length, address) < 0 || !mr.contains(address, length)) {
            throw new DetException(Errno.ERANGE, "window range leaves the region");
        }
        // det_bind refuses a type 1 window without a remote right; ibv_bind_mw's mw_access_flags "is either 0 or"
        // remote rights, so a type 2 window may be bound granting nothing
        if (mw.type == 1 && (access & Access.ANY_REMOTE) == 0) {
            throw new DetException(Errno.EACCES, "a window must grant a remote right");
        }
        if ((mr.access & Access.MW_BIND) == 0) {
            throw new DetException(Errno.EACCES, "the region was registered without MW_BIND");
        }
        if ((access & (Access.REMOTE_WRITE | Access.REMOTE_ATOMIC)) != 0 && (mr.access & Access.LOCAL_WRITE) == 0) {
            throw new DetException(Errno.EACCES, "REMOTE_WRITE or REMOTE_ATOMIC needs LOCAL_WRITE on the region");
        }
        if ((access & Access.REMOTE_READ) != 0 && (mr.access & Access.LOCAL_READ) == 0) {
            throw new DetException(Errno.EACCES, "REMOTE_READ needs LOCAL_READ on the region");
        }
    }

    private static void fillBind(final SendWr w, final MwImpl mw, final MrImpl mr, final long address,
                                 final long length, final int access, final int key) {
        w.window = mw;
        w.bindRegion = mr;
        w.bindRegionKey = mr.currentKey(); // a modify before the bind runs re-keys the region: the bind fails then
        w.bindAddress = address;
        w.bindLength = length;
        w.bindAccess = access;
        w.bindKey = key;
        w.bindReplacedKey = mw.activeRKey;
    }

    // ---------------------------------------------------------------- state machine

    @Override
    public void modify(final QpModify m) {
        if (m == null) {
            throw new IllegalArgumentException("modify is null");
        }
        nic.lock.lock();
        try {
            checkOpen();
            nic.checkAlive();
            final int flags = m.flags();
            if ((flags & QpModify.STATE) != 0 && m.nextState() == null) {
                throw new DetException(Errno.EINVAL, "state flag without a state");
            }
            final QpState next = (flags & QpModify.STATE) != 0 ? m.nextState() : state;
            if (!legal(state, next)) {
                throw new DetException(Errno.EPERM, "transition " + state + " -> " + next);
            }
            final boolean resize = (flags & (QpModify.SQ_SIZE | QpModify.RQ_SIZE | QpModify.MAX_OR
                | QpModify.MAX_IR)) != 0;
            if (resize) {
                checkResize(m, next);
            }
            long peer = -1;
            if (state == QpState.IDLE && next == QpState.CONNECTED) {
                if (m.remoteAddress() == null) {
                    throw new DetException(Errno.EINVAL, "connecting needs the peer's address and number");
                }
                peer = nic.link.resolve(m.remoteAddress());
                if (peer < 0) {
                    throw new DetException(Errno.ENODEV, "cannot reach " + m.remoteAddress() + " from "
                        + nic.address());
                }
                if ((flags & QpModify.REMOTE_PSN) == 0) {
                    throw new DetException(Errno.EINVAL, "connecting needs the peer's start sequence numbers "
                        + "(its QueuePair.query().localPsn())");
                }
            } else if ((flags & QpModify.LOCAL_PSN) != 0) {
                throw new DetException(Errno.EINVAL, "start sequence numbers are set only with a connect from IDLE");
            }
            if (resize) {
                applyResize(m);
            }
            transition(next, m, peer);
        } finally {
            nic.lock.unlock();
        }
    }

    static boolean legal(final QpState from, final QpState to) {
        return switch (from) {
            case IDLE -> to != QpState.DISCONNECT;
            case CONNECTED -> to != QpState.IDLE;
            case DISCONNECT -> false;
            case ERROR -> to == QpState.IDLE || to == QpState.ERROR;
        };
    }

    private void checkResize(final QpModify m, final QpState next) {
        if (state != QpState.IDLE || next != QpState.IDLE && next != QpState.CONNECTED) {
            throw new DetException(Errno.EINVAL, "resizing is allowed only from IDLE to IDLE or CONNECTED");
        }
        final int flags = m.flags();
        if ((flags & QpModify.SQ_SIZE) != 0) {
            if (m.sqSize() < 0 || m.sqSize() > NicImpl.MAX_WQ_SIZE || m.sqSize() > 0 && sqCq == null) {
                throw new DetException(Errno.EINVAL, "send queue size " + m.sqSize());
            }
            if (m.sqSize() < requester.queue.depth()) {
                throw new DetException(Errno.EBUSY, "send queue holds " + requester.queue.depth());
            }
        }
        if ((flags & QpModify.RQ_SIZE) != 0) {
            if (m.rqSize() < 0 || m.rqSize() > NicImpl.MAX_WQ_SIZE || m.rqSize() > 0 && rqCq == null) {
                throw new DetException(Errno.EINVAL, "receive queue size " + m.rqSize());
            }
            if (m.rqSize() < responder.queue.depth()) {
                throw new DetException(Errno.EBUSY, "receive queue holds " + responder.queue.depth());
            }
        }
        if ((flags & QpModify.MAX_OR) != 0) {
            if (m.maxOr() < 0 || m.maxOr() > NicImpl.MAX_RD_ATOMIC) {
                throw new DetException(Errno.EINVAL, "max_or " + m.maxOr());
            }
            if (m.maxOr() < requester.orDepth) {
                throw new DetException(Errno.EBUSY, requester.orDepth + " reads or atomics in flight");
            }
        }
        if ((flags & QpModify.MAX_IR) != 0 && (m.maxIr() < 0 || m.maxIr() > NicImpl.MAX_RD_ATOMIC)) {
            throw new DetException(Errno.EINVAL, "max_ir " + m.maxIr());
        }
    }

    private void applyResize(final QpModify m) {
        final int flags = m.flags();
        if ((flags & QpModify.SQ_SIZE) != 0) {
            requester.resize(m.sqSize());
        }
        if ((flags & QpModify.RQ_SIZE) != 0) {
            responder.resize(m.rqSize());
        }
        if ((flags & QpModify.MAX_OR) != 0) {
            maxOr = m.maxOr();
        }
        if ((flags & QpModify.MAX_IR) != 0) {
            maxIr = m.maxIr();
            responder.resizeInbound(Math.max(1, maxIr));
        }
    }

    private void transition(final QpState next, final QpModify m, final long peer) {
        switch (next) {
            case IDLE -> {
                if ((m.flags() & QpModify.STATE) != 0) {
                    resetToIdle();
                }
            }
            case CONNECTED -> {
                if (state == QpState.IDLE) {
                    remotePeer = peer;
                    remoteQpNum = m.remoteQpNum();
                    remoteAddress = m.remoteAddress();
                    state = QpState.CONNECTED;
                    final long now = System.nanoTime();
                    requester.connected(now);
                    responder.connected(now);
                    if ((m.flags() & QpModify.LOCAL_PSN) != 0) {
                        localPsn = m.localPsn();
                    }
                    remotePsn = m.remotePsn();
                    requester.startAt(Isn.low(localPsn), Isn.high(remotePsn));
                    responder.startAt(Isn.high(localPsn), Isn.low(remotePsn));
                    nic.observer.connectionUp(number, remoteAddress, remoteQpNum);
                }
            }
            case DISCONNECT -> disconnect(EventCode.DISCONNECT.code(), false);
            case ERROR -> enterError(EventCode.QP_ERROR.code(), false, true, false);
        }
    }

    /**
     * IDLE to CONNECTED with negotiated initial sequence numbers (connection manager). Engine lock held.
     *
     * @param peer          the peer's link handle
     * @param address       the peer NIC's address
     * @param qpNum         the peer queue pair's number
     * @param requestIsn    this side's first request sequence number
     * @param responseIsn   this side's first response sequence number
     * @param peerRequest   the peer's first request sequence number
     * @param peerResponse  the peer's first response sequence number
     */
    public void connectTo(final long peer, final String address, final int qpNum, final int requestIsn,
                   final int responseIsn, final int peerRequest, final int peerResponse) {
        remotePeer = peer;
        remoteQpNum = qpNum;
        remoteAddress = address;
        seal = null;
        maxPayload = nic.maxPayload;
        state = QpState.CONNECTED;
        final long now = System.nanoTime();
        requester.connected(now);
        responder.connected(now);
        localPsn = Isn.pack(requestIsn, responseIsn);
        remotePsn = Isn.pack(peerRequest, peerResponse);
        requester.startAt(requestIsn, peerResponse);
        responder.startAt(responseIsn, peerRequest);
        nic.observer.connectionUp(number, address, qpNum);
    }

    /**
     * Protects every frame of this connection from now on (the connection manager's handshake made the keys):
     * called right after {@link #connectTo}, engine lock held, before any frame is sent. A payload per frame is then
     * smaller by the trailer.
     *
     * @param frameSeal the keys and state of both directions
     */
    public void protect(final FrameSeal frameSeal) {
        seal = frameSeal;
        maxPayload = nic.maxPayload - FrameSeal.TRAILER_LENGTH;
    }

    /** Whether nothing is outstanding: every posted work request completed, every response acknowledged. */
    public boolean quiescent() {
        return requester.drained() && responder.responsesAcked();
    }

    /**
     * Which incarnation of this queue pair is live: changes on every reset to IDLE and on destroy, so that a
     * connection manager call that waits can tell its connection from a later one of the same queue pair (engine
     * lock held).
     *
     * @return the epoch
     */
    public int epoch() {
        return epoch;
    }

    /** Back to IDLE: queues emptied without completions, protocol state reset, older completions detached. */
    void resetToIdle() {
        newEpoch();
        requester.reset();
        responder.reset();
        state = QpState.IDLE;
        remotePeer = -1;
        remoteQpNum = 0;
        remoteAddress = null;
        seal = null;
        maxPayload = nic.maxPayload;
        errorCode = EventCode.QP_ERROR.code();
        ackPending = false;
        unackedUnits = 0;
        errorNakStatus = -1;
        localPsn = Isn.pair(); // a new incarnation: frames of the old one miss its sequence space
        remotePsn = 0;
    }

    /**
     * A graceful disconnect, asked locally or by the peer: flush, then IDLE, or ERROR if send work was lost
     * (DET's rule, kept deliberately: work that never ran is an error).
     */
    void disconnect(final int code, final boolean remote) {
        disconnect(code, remote, !remote);
    }

    /** A graceful disconnect; {@code notifyPeer} false when the connection manager has told the peer already. */
    public void disconnect(final int code, final boolean remote, final boolean notifyPeer) {
        if (notifyPeer) {
            nic.sendDisconnect(remotePeer, remoteQpNum, number, code, this);
        }
        if (state == QpState.CONNECTED) {
            nic.observer.connectionDown(number, remoteAddress, remoteQpNum, code, remote, false);
        }
        state = QpState.DISCONNECT;
        final int flushed = requester.flush();
        responder.flush();
        if (flushed > 0 || flushOverflow != 0) {
            state = QpState.ERROR;
            errorCode = code;
        } else {
            resetToIdle();
        }
        if (!silent) {
            nic.asyncEvent(remote ? code | EventCode.REMOTE_BIT : code, ResourceType.QP, this);
        }
        raiseFlushOverflow();
    }

    @Override
    public void flushOverflowed(final boolean receiveQueue) {
        if (flushOverflow == 0) {
            flushOverflow = (receiveQueue ? EventCode.QP_RQ_ERROR : EventCode.QP_SQ_ERROR).code();
        }
    }

    /** After a flush: the queue whose completion was lost says so (det.md 3.5), once. */
    private void raiseFlushOverflow() {
        final int code = flushOverflow;
        flushOverflow = 0;
        if (code != 0 && !silent) {
            nic.asyncEvent(code, ResourceType.QP, this);
        }
    }

    /**
     * Makes this queue pair raise no asynchronous events: a collective group's internal queue pairs are invisible
     * to the user, whose event queue gets the group's {@link EventCode#CO_ERROR} instead.
     */
    public void silence() {
        silent = true;
    }

    /**
     * Lets an acknowledgement nobody asked for wait up to half the NIC's smallest retransmission timeout for a frame
     * that carries it, instead of the delayed-ack time: for a collective group's queue pairs, whose peers wait for
     * no unsignaled send's acknowledgement (a signaled one asks for its ack, and the group signals every few sends)
     * and which send frames back often (chunks, credit returns), while a member's messages to a peer it never
     * answers drew an acknowledgement each. Half this NIC's timeout, so that a peer configured alike never
     * retransmits for want of it (one whose smallest timeout is shorter may resend a frame, which arrives as a
     * duplicate and costs nothing else). Call before the queue pair connects. Raises nothing.
     */
    public void lazyAcks() {
        ackDelayNs = Math.max(nic.ackDelayNs, nic.minRtoNs / 2);
    }

    /**
     * Enters ERROR: flushes every outstanding work request (suppressed ones too) with FLUSHED.
     *
     * @param code       the event code
     * @param remote     whether the peer caused it
     * @param notifyPeer whether to send the peer a disconnect carrying the code
     * @param raise      whether to raise the asynchronous event
     */
    @Override
    public void enterError(final int code, final boolean remote, final boolean notifyPeer, final boolean raise) {
        if (state == QpState.ERROR) {
            return;
        }
        final boolean wasConnected = state == QpState.CONNECTED;
        errorCode = code;
        if (wasConnected) {
            nic.observer.connectionDown(number, remoteAddress, remoteQpNum, code, remote, true);
        } else {
            nic.observer.queuePairError(number, code, remote);
        }
        state = QpState.ERROR;
        if (notifyPeer && wasConnected) {
            nic.sendDisconnect(remotePeer, remoteQpNum, number, code, this);
        }
        requester.flush();
        responder.flush();
        if (raise && !silent) {
            nic.asyncEvent(remote ? code | EventCode.REMOTE_BIT : code, ResourceType.QP, this);
            if (!remote && flushOverflow == code) {
                flushOverflow = 0; // the event just raised names that queue already: it says so once (det.md 3.5)
            }
        }
        raiseFlushOverflow();
    }

    /**
     * Detaches older completions (reset, destroy): engine lock held. The epoch changes under the ring locks of both
     * completion queues, which polls hold while they free slots without the engine lock, so no poll frees a slot
     * of the new epoch for a completion of the old. (A poll holds one ring lock at a time and the engine lock
     * orders the callers of this method: taking two is safe.)
     */
    void newEpoch() {
        if (sqCq != null) {
            sqCq.lockRing();
        }
        if (rqCq != null && rqCq != sqCq) {
            rqCq.lockRing();
        }
        epoch++;
        if (rqCq != null && rqCq != sqCq) {
            rqCq.unlockRing();
        }
        if (sqCq != null) {
            sqCq.unlockRing();
        }
    }

    /** A completion could not be stored: the queue pair fails (the CQ raised CQ_OVERRUN). */
    @Override
    public void completionLost() {
        enterError(EventCode.QP_ERROR.code(), false, true, true);
    }

    /** Frees work queue slots when a completion is polled: the ring lock of the polled queue held. */
    void retire(final boolean receiveQueue, final int reap) {
        if (receiveQueue) {
            responder.queue.retire(reap);
        } else {
            requester.queue.retire(reap);
        }
    }

    // ---------------------------------------------------------------- frames in

    /** A frame from the connected peer, CRC and header already checked. */
    void onFrame(final java.lang.foreign.MemorySegment f, final int opcode, final long now) {
        final boolean ackable = requester.ackable(io.jdet.internal.wire.Frame.reqAck(f))
            && responder.ackable(io.jdet.internal.wire.Frame.rspAck(f));
        if (opcode == io.jdet.internal.wire.Frame.OP_DISCONNECT) {
            if (!ControlCheck.exact(this, io.jdet.internal.wire.Frame.seq(f))) {
                return; // not provably the peer's: at most a challenge ACK
            }
        } else if (!ackable) {
            // It acknowledges what was never sent (RFC 5961): not from the peer; dropped whole, the peer challenged.
            nic.counters.ackUnsent++;
            nic.challenge(this);
            return;
        }
        if (ackable && carriesAcks(f, opcode)) {
            final int sack = io.jdet.internal.wire.Frame.sack(f);
            final boolean responseSack = opcode == io.jdet.internal.wire.Frame.OP_ACK
                && (io.jdet.internal.wire.Frame.flags(f) & io.jdet.internal.wire.Frame.FLAG_RESPONSE_SACK) != 0;
            requester.onAck(io.jdet.internal.wire.Frame.reqAck(f), responseSack ? 0 : sack, now);
            if (state != QpState.CONNECTED) {
                return;
            }
            responder.onResponseAck(io.jdet.internal.wire.Frame.rspAck(f), responseSack ? sack : 0, now);
            if (state != QpState.CONNECTED) {
                return; // a response it released could not be sent (its region is gone): the read failed
            }
        }
        switch (opcode) {
            case io.jdet.internal.wire.Frame.OP_ACK -> nic.counters.acksReceived++;
            case io.jdet.internal.wire.Frame.OP_NAK -> requester.onNak(f, now);
            case io.jdet.internal.wire.Frame.OP_DISCONNECT -> {
                final int code = io.jdet.internal.wire.Frame.key(f);
                if (!PeerValues.disconnectCode(code)) {
                    protocolError(EventCode.QP_ERROR);
                } else if ((code & ~EventCode.REMOTE_BIT) == EventCode.DISCONNECT.code()) {
                    disconnect(EventCode.DISCONNECT.code(), true);
                } else {
                    enterError(code & ~EventCode.REMOTE_BIT, true, false, true);
                }
            }
            case io.jdet.internal.wire.Frame.OP_READ_RESP, io.jdet.internal.wire.Frame.OP_ATOMIC_RESP ->
                requester.onResponse(f, opcode, now);
            default -> responder.onRequest(f, opcode, now);
        }
    }

    /**
     * Whether a frame's ack fields are acknowledgements. Those of an {@code INVALID_QP} DISCONNECT are not: the NIC
     * that sent it answered for a queue pair it does not have, so they are 0, and with a random initial sequence
     * number 0 can fall inside the window, where it would complete requests that never arrived.
     */
    private static boolean carriesAcks(final java.lang.foreign.MemorySegment f, final int opcode) {
        return opcode != io.jdet.internal.wire.Frame.OP_DISCONNECT
            || (io.jdet.internal.wire.Frame.key(f) & ~EventCode.REMOTE_BIT) != EventCode.INVALID_QP.code();
    }

    /**
     * Notes an in-order sequenced frame. One flagged FORCE_ACK (the sender waits for it to complete a signaled
     * work request) is acknowledged at the next progress pass of the application (so that a reply posted
     * meanwhile carries the ack, as in a ping-pong), or at once in a pass of the progress thread; others within
     * the delayed-ack time, or at once after a quarter of the sender's window. That ack leaves the link at once
     * too ({@link io.jdet.internal.link.Link#push}), not at the end of the pass: the pass may still be taking in a
     * long run of frames, and a sender whose window is full waits for it.
     */
    @Override
    public void frameReceived(final long now, final boolean ackRequested, final boolean small) {
        unackedUnits += small ? 1 : ProtocolNic.SMALL_WINDOW;
        if (unackedUnits >= nic.ackAfterUnits) {
            nic.sendAck(this);
            nic.link.push();
            return;
        }
        if (ackRequested) {
            this.ackRequested = true;
        }
        final long deadline = ackRequested ? now + 1 : now + ackDelayNs;
        if (!ackPending) {
            ackPending = true;
            ackDeadlineNs = deadline;
            nic.owesAck(this);
        } else if (deadline - ackDeadlineNs < 0) {
            ackDeadlineNs = deadline;
        }
    }

    /**
     * Sends the acknowledgement this queue pair owes, if any, now rather than at the application's next pass: for
     * the library's own users that know the sender waits for it and that the application may not poll this NIC
     * again soon (a collective member whose rendezvous just ended). The caller holds the engine's data-path lock.
     * Raises nothing.
     */
    public void ackNow() {
        if (ackPending && !destroyed) {
            nic.sendAck(this);
        }
    }

    /** Every frame sent carries the acknowledgements: nothing is owed any more. */
    void acksSent() {
        unackedUnits = 0;
        ackPending = false;
        ackRequested = false;
    }

    /**
     * Answers a frame that reached this queue pair in ERROR: repeat the NAK or the disconnect.
     *
     * @param echoSeq the frame's request ack + 1: the disconnect carries it, so the peer finds it exact
     */
    void reannounceError(final int echoSeq) {
        if (errorNakStatus >= 0) {
            nic.sendNak(this, errorNakStatus, errorNakSeq, errorNakEvent);
        } else {
            nic.sendDisconnect(remotePeer, remoteQpNum, number, errorCode, this, echoSeq);
        }
    }

    /**
     * The connected peer sent a value out of range (an unknown NAK status or event, a DISCONNECT code that is no
     * event, a response that matches nothing): the connection fails. Counted; the peer is told with a DISCONNECT
     * carrying the event; ERROR with a local event, every outstanding work request flushed.
     *
     * @param event what was wrong, as the event raised and sent
     */
    @Override
    public void protocolError(final EventCode event) {
        nic.counters.protocolErrors++;
        enterError(event.code(), false, true, true);
    }

    /** This side failed a request: tell the peer with a NAK naming the status, then enter ERROR. */
    @Override
    public void failRequest(final int status, final int seq, final int event) {
        errorNakStatus = status;
        errorNakSeq = seq;
        errorNakEvent = event;
        nic.sendNak(this, status, seq, event);
        enterError(event, false, false, true);
    }

    /** Timer work: retransmissions, receiver-not-ready retries, give-ups. */
    void onTimer(final long now) {
        if (state == QpState.CONNECTED) {
            requester.onTimer(now);
        }
        if (state == QpState.CONNECTED) {
            responder.onTimer(now);
        }
    }

    // ---------------------------------------------------------------- what the protocol reads (ProtocolQp)

    @Override
    public int remoteQpNum() {
        return remoteQpNum;
    }

    @Override
    public int maxOr() {
        return maxOr;
    }

    @Override
    public int maxIr() {
        return maxIr;
    }

    @Override
    public Requester requester() {
        return requester;
    }

    @Override
    public Responder responder() {
        return responder;
    }

    @Override
    public boolean completeSend(final long id, final WcStatus status, final WcType type, final int length,
                                final int reap) {
        return sqCq.append(id, status, type, 0, length, 0, 0, reap, this, false);
    }

    @Override
    public boolean completeRecv(final long id, final WcStatus status, final int wcFlags, final int length,
                                final int immediate, final int invalidated) {
        return rqCq.append(id, status, WcType.RECV, wcFlags, length, immediate, invalidated, 1, this, true);
    }

    @Override
    public WcStatus runLocal(final SendWr w) {
        return LocalOps.run(this, w);
    }

    @Override
    public void undoLocal(final SendWr w, final boolean ran) {
        LocalOps.undo(w, ran);
    }

    @Override
    public boolean invalidateRemote(final int rKey) {
        return LocalOps.invalidate(this, rKey, true);
    }

    public void checkOpen() {
        if (destroyed) {
            throw new IllegalStateException("queue pair destroyed");
        }
    }

    CompletionQueue sendCq() {
        return sqCq;
    }

    @Override
    public void close() {
        nic.lock.lock();
        try {
            if (destroyed) {
                return;
            }
            if (state == QpState.CONNECTED) {
                nic.sendDisconnect(remotePeer, remoteQpNum, number, EventCode.QP_DESTROYED.code(), this);
                nic.destroyedQps.add(number, remotePeer, remoteQpNum, responder.reqExpected - 1,
                    requester.rspExpected - 1);
            }
            if (state != QpState.ERROR) {
                state = QpState.ERROR;
                requester.flush();
                responder.flush();
            }
            newEpoch();
            destroyed = true;
            nic.removeQp(this);
            if (sqCq != null) {
                sqCq.users--;
            }
            if (rqCq != null) {
                rqCq.users--;
            }
            pd.users--;
        } finally {
            nic.lock.unlock();
        }
        if (nic.event != null) {
            nic.event.purge(this);
        }
    }

    @Override
    public String toString() {
        return "QueuePair[" + nic.address() + "#" + number + ", " + state + "]";
    }

    /**
     * @return the sequence number of this queue pair's next request, which a connection manager disconnect carries
     *         (engine lock held)
     */
    public int nextRequestSeq() {
        return requester.nextRequestSeq();
    }

    @Override
    public int maxPayload() {
        return maxPayload;
    }
}
