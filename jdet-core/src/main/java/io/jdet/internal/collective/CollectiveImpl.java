package io.jdet.internal.collective;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CollectiveTuning;
import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.MemoryRegion;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.QueuePair;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.WrFlags;
import io.jdet.internal.verbs.CqImpl;
import io.jdet.internal.verbs.MrImpl;
import io.jdet.internal.verbs.PdImpl;
import io.jdet.internal.verbs.PollHook;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A collective group: checks and queues posts, and runs the queued collectives one after another from the poll
 * hook of its completion queue (whoever polls drives it; a second concurrent poller skips). Each collective is a
 * {@link Schedule} of rounds; a round ends when its receives are copied out and its sends are posted, then its local
 * copies and reductions run and the next round's transfers are queued on the {@link Channel}s. A send from the
 * caller's memory (zero copy) may still wait for its acknowledgement then: the round waits for it only where its
 * local operations or the next round's receives and early copies would write bytes it reads ({@link #writesClear}),
 * and the last round waits for them all, so a collective completes only once the caller's memory is no longer read.
 * A collective posted to an idle group starts before the next poll's engine pass, so its first messages carry the
 * acknowledgements that pass would otherwise send on their own.
 */
public final class CollectiveImpl implements Collective {
    enum State { CREATED, JOINING, JOINED, FAILED, CLOSED }

    final PdImpl pd;
    final CqImpl cq;
    final CollectiveTuning tuning;
    private final long timeoutNs;
    /** The NIC's largest memory region: the most scratch memory the group can register. */
    private final long maxRegion;
    /** The NIC's largest completion queue: the mesh's must fit. */
    private final int maxCqSize;
    final ReentrantLock lock = new ReentrantLock();
    private volatile State state = State.CREATED;
    private final PollHook hook = new PollHook() {
        @Override
        public void beforePass() {
            if (startWaiting) {
                progress();
            }
        }

        @Override
        public void afterPass() {
            progress();
        }
    };
    /**
     * A collective waits to start: queued while none ran (under {@link #lock}, which {@link #progress} holds as it
     * starts one). A poll then runs a step before its engine pass as well as after it.
     */
    private volatile boolean startWaiting;

    int rank = -1;
    int size;
    long tag;
    private long joinId;
    private int joinFlags;
    private Thread joiner;
    /** Set by {@link #close} once it has freed the group's resources (under {@link #lock}). */
    private boolean released;

    /** Set by the joiner: one channel per peer (null at this rank), their completion queue and slot memory. */
    private Channel[] channels;
    private CqImpl dataCq;
    private final List<AutoCloseable> resources = new ArrayList<>();

    private final ArrayDeque<Request> queue = new ArrayDeque<>();
    /** Requests whose collectives completed, for the next posts to reuse (under {@link #lock}). */
    private final ArrayDeque<Request> spare = new ArrayDeque<>();
    /**
     * What {@link Algorithms} asks for scratch memory: made once, not at every collective. Read when the first
     * collective starts; a test in this package may replace it before then, to make scratch memory fail.
     */
    Algorithms.Scratch scratchSource = this::scratch;
    /** Builds each collective's schedule; made at the first, once the rank and size are known. */
    private Algorithms algorithms;
    private Request current;
    private final Schedule schedule = new Schedule();
    private int ordinal;
    private int round;
    private int recvsPending;
    private int sendOpsPending;
    private int chunksInFlight;
    /**
     * Where {@link #writesClear} last said no: the collective's ordinal, its round and the zero-copy chunks then in
     * flight. While none of them changes (no send was retired, none posted), the answer stands, so a waiting poll
     * does not walk every channel's send queue again.
     */
    private int blockedOrdinal = -1;
    private int blockedRound;
    private int blockedChunks;
    /** Whether the current round's early copies ran. */
    private boolean earlyDone;
    private long lastProgressNs;
    private final WorkCompletion[] wcs = new WorkCompletion[64];

    private Arena scratchArena;
    private MemoryRegion scratchMr;
    private String failure;

    private CollectiveImpl(final PdImpl pd, final CqImpl cq, final CollectiveTuning tuning) {
        this.pd = pd;
        this.cq = cq;
        this.tuning = tuning;
        this.timeoutNs = TimeUnit.MILLISECONDS.toNanos(tuning.timeoutMs());
        final io.jdet.NicAttributes nic = pd.nic().query();
        this.maxRegion = nic.maxMrSize();
        this.maxCqSize = nic.maxCqSize();
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    /**
     * Creates a group ({@code det_create_co}); the domain and queue were checked by the caller.
     *
     * @param pd     the domain
     * @param cq     the completion queue of the group's work requests
     * @param tuning the device's collective tunables
     * @return the group
     */
    public static CollectiveImpl create(final PdImpl pd, final CqImpl cq, final CollectiveTuning tuning) {
        final CollectiveImpl co = new CollectiveImpl(pd, cq, tuning);
        cq.addPollHook(co.hook);
        return co;
    }

    // ------------------------------------------------------------------ posts

    @Override
    public void join(final long id, final long joinTag, final int joinSize, final int joinRank,
                     final String rootAddress, final int flags) {
        checkFlags(flags);
        if (joinSize < 2 || joinRank < 0 || joinRank >= joinSize) {
            throw new DetException(Errno.EINVAL, "size " + joinSize + " and rank " + joinRank
                + ": need size >= 2 and 0 <= rank < size");
        }
        if (joinRank != 0 && rootAddress == null) {
            throw new DetException(Errno.EINVAL, "the root address is null");
        }
        if (joinSize > tuning.maxSize()) {
            throw new DetException(Errno.E2BIG, "size " + joinSize + " above the maximum " + tuning.maxSize());
        }
        final long entries = Joiner.meshCqEntries(joinSize, tuning);
        if (entries > maxCqSize) {
            throw new DetException(Errno.E2BIG, joinSize + " members with " + tuning.slotsFor(joinSize) + " slots each need a "
                + "completion queue of " + entries + " entries; the NIC's largest holds " + maxCqSize);
        }
        final long slotBytes = Joiner.slotRegionBytes(joinSize, tuning);
        if (slotBytes > maxRegion) {
            throw new DetException(Errno.E2BIG, joinSize + " members with " + tuning.slotsFor(joinSize) + " slots of "
                + tuning.slotBytes() + " bytes need a region of " + slotBytes + " bytes; the NIC's largest is "
                + maxRegion);
        }
        lock.lock();
        try {
            if (state == State.CLOSED) {
                throw new IllegalStateException("collective group destroyed");
            }
            if (state != State.CREATED) {
                throw new DetException(Errno.EBUSY, "the group has already joined");
            }
            Tags.claim(joinTag, joinSize, joinRank);
            tag = joinTag;
            size = joinSize;
            rank = joinRank;
            joinId = id;
            joinFlags = flags;
            state = State.JOINING;
            joiner = Thread.ofVirtual().name("jdet-co-join-" + joinRank).unstarted(
                new Joiner(this, rootAddress == null ? "" : rootAddress));
            joiner.start();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void barrier(final long id, final int flags) {
        final Request q = request(WcType.BARRIER, id, flags);
        enqueue(q);
    }

    @Override
    public void bcast(final long id, final int root, final DataSegment segment, final int flags) {
        final Request q = request(WcType.BCAST, id, flags);
        checkRoot(root);
        q.root = root;
        // A member of the tree's inside forwards what it received from its own segment: it reads it too.
        q.dst = resolve(required(segment, "segment"), root == rank ? Access.LOCAL_READ
            : Access.LOCAL_WRITE | Access.LOCAL_READ, "segment", q.dstHeld);
        q.length = q.dst.length();
        enqueue(q);
    }

    @Override
    public void scatter(final long id, final int root, final DataSegment src, final DataSegment dst,
                        final int flags) {
        final Request q = request(WcType.SCATTER, id, flags);
        checkRoot(root);
        q.root = root;
        if (rank == root) {
            q.src = resolve(required(src, "src"), Access.LOCAL_READ, "src", q.srcHeld);
            if (q.src.length() % size != 0) {
                throw new DetException(Errno.EINVAL, "source length " + q.src.length() + " does not divide by "
                    + size);
            }
            if (dst != null) {
                q.dst = resolve(dst, Access.LOCAL_WRITE, "dst", q.dstHeld);
                if (q.dst.length() != q.src.length() / size) {
                    throw new DetException(Errno.EINVAL, "destination is not one block long");
                }
                checkApart(q.src, -1, q.dst, -1);
            }
            q.length = q.src.length();
        } else {
            q.dst = resolve(required(dst, "dst"), Access.LOCAL_WRITE, "dst", q.dstHeld);
            q.length = q.dst.length();
        }
        enqueue(q);
    }

    @Override
    public void scatterv(final long id, final int root, final DataSegment[] src, final DataSegment dst,
                         final int flags) {
        final Request q = request(WcType.SCATTERV, id, flags);
        checkRoot(root);
        q.root = root;
        if (rank == root) {
            q.srcV = resolveAll(src, Access.LOCAL_READ, "src", true, q, true);
            q.dst = dst == null ? null : resolve(dst, Access.LOCAL_WRITE, "dst", q.dstHeld);
            checkOwnBlock(q.srcV[rank], q.dst, "src[" + rank + "]", "dst");
            for (int j = 0; j < size; j++) {
                checkApart(q.srcV[j], j, q.dst, -1);
            }
            q.length = sum(q.srcV);
        } else {
            q.dst = resolve(required(dst, "dst"), Access.LOCAL_WRITE, "dst", q.dstHeld);
            q.length = q.dst.length();
        }
        enqueue(q);
    }

    @Override
    public void gather(final long id, final int root, final DataSegment src, final DataSegment dst,
                       final int flags) {
        final Request q = request(WcType.GATHER, id, flags);
        checkRoot(root);
        q.root = root;
        if (rank == root) {
            q.dst = resolve(required(dst, "dst"), Access.LOCAL_WRITE, "dst", q.dstHeld);
            if (q.dst.length() % size != 0) {
                throw new DetException(Errno.EINVAL, "destination length " + q.dst.length()
                    + " does not divide by " + size);
            }
            if (src != null) {
                q.src = resolve(src, Access.LOCAL_READ, "src", q.srcHeld);
                if (q.src.length() != q.dst.length() / size) {
                    throw new DetException(Errno.EINVAL, "source is not one block long");
                }
                checkApart(q.src, -1, q.dst, -1);
            }
            q.length = q.dst.length();
        } else {
            q.src = resolve(required(src, "src"), Access.LOCAL_READ, "src", q.srcHeld);
            q.length = q.src.length();
        }
        enqueue(q);
    }

    @Override
    public void gatherv(final long id, final int root, final DataSegment src, final DataSegment[] dst,
                        final int flags) {
        final Request q = request(WcType.GATHERV, id, flags);
        checkRoot(root);
        q.root = root;
        if (rank == root) {
            q.dstV = resolveAll(dst, Access.LOCAL_WRITE, "dst", true, q, false);
            q.src = src == null ? null : resolve(src, Access.LOCAL_READ, "src", q.srcHeld);
            checkOwnBlock(q.src, q.dstV[rank], "src", "dst[" + rank + "]");
            for (int j = 0; j < size; j++) {
                checkApart(q.src, -1, q.dstV[j], j);
            }
            q.length = sum(q.dstV);
        } else {
            q.src = resolve(required(src, "src"), Access.LOCAL_READ, "src", q.srcHeld);
            q.length = q.src.length();
        }
        enqueue(q);
    }

    @Override
    public void allgather(final long id, final DataSegment src, final DataSegment dst, final int flags) {
        final Request q = request(WcType.ALLGATHER, id, flags);
        q.dst = resolve(required(dst, "dst"), Access.LOCAL_WRITE | Access.LOCAL_READ, "dst", q.dstHeld);
        if (q.dst.length() % size != 0) {
            throw new DetException(Errno.EINVAL, "destination length " + q.dst.length() + " does not divide by "
                + size);
        }
        if (src != null) {
            q.src = resolve(src, Access.LOCAL_READ, "src", q.srcHeld);
            if (q.src.length() != q.dst.length() / size) {
                throw new DetException(Errno.EINVAL, "source is not one block long");
            }
            checkApart(q.src, -1, q.dst, -1);
        }
        q.length = q.dst.length();
        enqueue(q);
    }

    @Override
    public void allgatherv(final long id, final DataSegment src, final DataSegment[] dst, final int flags) {
        final Request q = request(WcType.ALLGATHERV, id, flags);
        q.dstV = resolveAll(dst, Access.LOCAL_WRITE | Access.LOCAL_READ, "dst", false, q, false);
        if (src != null) {
            q.src = resolve(src, Access.LOCAL_READ, "src", q.srcHeld);
            if (q.src.length() != q.dstV[rank].length()) {
                throw new DetException(Errno.EINVAL, "source length differs from dst[rank]");
            }
            for (int j = 0; j < size; j++) {
                checkApart(q.src, -1, q.dstV[j], j);
            }
        }
        q.length = sum(q.dstV);
        enqueue(q);
    }

    @Override
    public void alltoall(final long id, final DataSegment src, final DataSegment dst, final int flags) {
        final Request q = request(WcType.ALLTOALL, id, flags);
        q.src = resolve(required(src, "src"), Access.LOCAL_READ, "src", q.srcHeld);
        q.dst = resolve(required(dst, "dst"), Access.LOCAL_WRITE, "dst", q.dstHeld);
        if (q.src.length() != q.dst.length() || q.src.length() % size != 0) {
            throw new DetException(Errno.EINVAL, "lengths " + q.src.length() + " and " + q.dst.length()
                + " must be equal and divide by " + size);
        }
        checkApart(q.src, -1, q.dst, -1);
        q.length = q.dst.length();
        enqueue(q);
    }

    @Override
    public void alltoallv(final long id, final DataSegment[] src, final DataSegment[] dst, final int flags) {
        final Request q = request(WcType.ALLTOALLV, id, flags);
        q.srcV = resolveAll(src, Access.LOCAL_READ, "src", false, q, true);
        q.dstV = resolveAll(dst, Access.LOCAL_WRITE, "dst", false, q, false);
        checkOwnBlock(q.srcV[rank], q.dstV[rank], "src[" + rank + "]", "dst[" + rank + "]");
        for (int j = 0; j < size; j++) {
            for (int k = 0; k < size; k++) {
                checkApart(q.srcV[j], j, q.dstV[k], k);
            }
        }
        q.length = sum(q.dstV);
        enqueue(q);
    }

    @Override
    public void allreduce(final long id, final DataSegment src, final DataSegment dst, final ReduceOp op,
                          final ReduceType type, final int flags) {
        final Request q = request(WcType.ALLREDUCE, id, flags);
        reduction(q, op, type);
        q.dst = resolve(required(dst, "dst"), Access.LOCAL_WRITE | Access.LOCAL_READ, "dst", q.dstHeld);
        q.src = src == null ? null : resolve(src, Access.LOCAL_READ, "src", q.srcHeld);
        checkElements(q);
        enqueue(q);
    }

    @Override
    public void reduce(final long id, final int root, final DataSegment src, final DataSegment dst,
                       final ReduceOp op, final ReduceType type, final int flags) {
        final Request q = request(WcType.REDUCE, id, flags);
        checkRoot(root);
        reduction(q, op, type);
        q.root = root;
        if (rank == root) {
            q.dst = resolve(required(dst, "dst"), Access.LOCAL_WRITE | Access.LOCAL_READ, "dst", q.dstHeld);
            q.src = src == null ? null : resolve(src, Access.LOCAL_READ, "src", q.srcHeld);
        } else {
            q.src = resolve(required(src, "src"), Access.LOCAL_READ, "src", q.srcHeld);
        }
        checkElements(q);
        enqueue(q);
    }

    // ------------------------------------------------------------------ checks

    private static void checkFlags(final int flags) {
        if ((flags & ~WrFlags.SUPPRESSED) != 0) {
            throw new DetException(Errno.EINVAL, "flags 0x" + Integer.toHexString(flags)
                + ": a collective knows only SUPPRESSED");
        }
    }

    /** Checks what every post checks and makes its request; the slot is taken only by {@link #enqueue}. */
    private Request request(final WcType type, final long id, final int flags) {
        checkFlags(flags);
        final State s = state;
        if (s == State.CLOSED) {
            throw new IllegalStateException("collective group destroyed");
        }
        if (s != State.JOINED && s != State.JOINING) {
            throw new DetException(Errno.ENOTCONN, s == State.FAILED ? "the group failed: " + failure
                : "the group is not joined");
        }
        Request q;
        lock.lock();
        try {
            q = spare.poll();
        } finally {
            lock.unlock();
        }
        if (q == null) {
            q = new Request(); // until the group's depth of them exist; a post that fails checks drops its own
        }
        return q.reset(type, id, flags);
    }

    private void checkRoot(final int root) {
        if (root < 0 || root >= size) {
            throw new DetException(Errno.EINVAL, "root " + root + " not in [0, " + size + ")");
        }
    }

    private static DataSegment required(final DataSegment ds, final String what) {
        if (ds == null) {
            throw new DetException(Errno.EINVAL, what + " is null");
        }
        return ds;
    }

    /** Checks a segment and fills {@code into} with it. */
    private Buf resolve(final DataSegment ds, final int access, final String what, final Buf into) {
        return resolve(ds, access, what, -1, into);
    }

    /** Checks member {@code index}'s segment of a vector (or a lone segment, index -1) and fills {@code into}. */
    private Buf resolve(final DataSegment ds, final int access, final String what, final int index, final Buf into) {
        final MrImpl mr = pd.region(ds, access, what, index);
        return into.set(mr, mr.segment(), ds.address() - mr.address(), ds.address(), ds.length(), ds.lKey());
    }

    private Buf[] resolveAll(final DataSegment[] ds, final int access, final String what, final boolean ownMayBeNull,
                             final Request q, final boolean source) {
        if (ds == null || ds.length != size) {
            throw new DetException(Errno.EINVAL, what + " must hold one segment per member (" + size + ")");
        }
        final Buf[] out = source ? q.srcVector(size) : q.dstVector(size);
        for (int i = 0; i < size; i++) {
            if (ds[i] == null) {
                if (ownMayBeNull && i == rank) {
                    out[i] = null;
                    continue;
                }
                throw new DetException(Errno.EINVAL, what + "[" + i + "] is null");
            }
            out[i] = resolve(ds[i], access, what, i, source ? q.srcBuf(i) : q.dstBuf(i));
        }
        return out;
    }

    /**
     * MPI's aliasing rule: a source may not overlap a destination of the same collective, since blocks received
     * would overwrite blocks not yet sent (an all-to-all with src == dst completed SUCCESS with wrong data); the
     * verbs that offer it take a null source for in place. EINVAL; names the segments (index -1: not a vector's)
     * only when it throws.
     */
    private static void checkApart(final Buf src, final int srcIndex, final Buf dst, final int dstIndex) {
        if (src != null && dst != null && src.length() > 0 && dst.length() > 0
            && Long.compareUnsigned(src.addr(), dst.addr() + dst.length()) < 0
            && Long.compareUnsigned(dst.addr(), src.addr() + src.length()) < 0) {
            throw new DetException(Errno.EINVAL, (srcIndex < 0 ? "src" : "src[" + srcIndex + "]") + " overlaps "
                + (dstIndex < 0 ? "dst" : "dst[" + dstIndex + "]") + ": a source may not alias a destination (pass a"
                + " null source for in place where the verb offers it)");
        }
    }

    /** A member's own block is copied locally: where both ends are given, they must be as long (EINVAL). */
    private static void checkOwnBlock(final Buf from, final Buf to, final String fromName, final String toName) {
        if (from != null && to != null && from.length() != to.length()) {
            throw new DetException(Errno.EINVAL, fromName + " is " + from.length() + " bytes but " + toName + " "
                + to.length() + ": this member's own block must fit exactly");
        }
    }

    private static long sum(final Buf[] bufs) {
        long n = 0;
        for (final Buf b : bufs) {
            n += b == null ? 0 : b.length();
        }
        return n;
    }

    private static void reduction(final Request q, final ReduceOp op, final ReduceType type) {
        if (op == null || type == null) {
            throw new DetException(Errno.EINVAL, "the reduction needs an op and a type");
        }
        if (type == ReduceType.FLOAT64 && (op == ReduceOp.BAND || op == ReduceOp.BOR || op == ReduceOp.BXOR)) {
            throw new DetException(Errno.EINVAL, "bitwise " + op + " on doubles");
        }
        q.op = op;
        q.reduceType = type;
    }

    private void checkElements(final Request q) {
        final long n = (q.dst != null ? q.dst : q.src).length();
        if (n % 8 != 0 || q.src != null && q.dst != null && q.src.length() != q.dst.length()) {
            throw new DetException(Errno.EINVAL, "lengths must be equal multiples of 8 bytes");
        }
        final long most = maxRegion / 2;
        if (n > most) {
            throw new DetException(Errno.E2BIG, n + " bytes to reduce; the most is " + most
                + " (the reduction's scratch memory, one region, holds two such buffers)");
        }
        q.length = n;
    }

    /** Takes a slot: ENOSPC when the group's depth is used, ENOTCONN if it failed meanwhile. */
    private void enqueue(final Request q) {
        lock.lock();
        try {
            if (state != State.JOINED && state != State.JOINING) {
                throw new DetException(Errno.ENOTCONN, "the group is not joined" + (failure == null ? ""
                    : ": " + failure));
            }
            final int outstanding = queue.size() + (current != null ? 1 : 0) + (state == State.JOINING ? 1 : 0);
            if (outstanding >= tuning.depth()) {
                throw new DetException(Errno.ENOSPC, outstanding + " collectives outstanding, the depth");
            }
            queue.add(q);
            if (current == null) {
                startWaiting = true;
            }
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ join results

    /** The joiner finished: the mesh is connected. Takes ownership of the resources. */
    void joined(final Channel[] mesh, final CompletionQueue meshCq, final List<AutoCloseable> owned) {
        lock.lock();
        try {
            if (released) {
                closeAll(owned);
                return;
            }
            resources.addAll(owned);
            channels = mesh;
            dataCq = (CqImpl) meshCq;
            if (state != State.JOINING) {
                return;
            }
            state = State.JOINED;
            if ((joinFlags & WrFlags.SUPPRESSED) == 0) {
                cq.completeCollective(joinId, WcStatus.SUCCESS, WcType.JOIN, 0);
            }
        } finally {
            lock.unlock();
        }
    }

    /** The joiner failed; it hands back whatever it created. */
    void joinFailed(final WcStatus status, final String why, final List<AutoCloseable> owned) {
        lock.lock();
        try {
            if (released) {
                closeAll(owned);
                return;
            }
            resources.addAll(owned);
            if (state != State.JOINING) {
                return;
            }
            failure = "join: " + why;
            state = State.FAILED;
            cq.completeCollective(joinId, status, WcType.JOIN, 0);
            flushQueued();
            cq.raiseCollectiveEvent(EventCode.CO_ERROR.code(), this);
            // Members that completed their join (the root failed after releasing them) learn at once, not by
            // timeout: the queue pairs the joiner connected go to ERROR, which tells each peer.
            for (final AutoCloseable c : owned) {
                if (c instanceof QueuePair qp) {
                    toError(qp);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    boolean closing() {
        return state == State.CLOSED;
    }

    long timeoutNs() {
        return timeoutNs;
    }

    // ------------------------------------------------------------------ progress

    private void progress() {
        if (state != State.JOINED || !lock.tryLock()) {
            return;
        }
        cq.lockEngine(); // after the group's lock, as posts take them: no deregistration while a step copies
        try {
            if (state != State.JOINED) {
                return;
            }
            if (current != null && !current.buffersValid()) {
                // Before any received chunk is copied out, since a region may have gone since the last step.
                fail(WcStatus.LOCAL_PROTECTION_ERR, current.type + ": a buffer's region was deregistered or "
                    + "re-keyed while the collective ran");
                return;
            }
            final long now = System.nanoTime();
            int n;
            while ((n = dataCq.drain(wcs)) > 0) {
                for (int i = 0; i < n; i++) {
                    handle(wcs[i], now);
                    if (state != State.JOINED) {
                        return;
                    }
                }
            }
            advance(now);
            startWaiting = false; // advance started what was queued, or nothing is
            if (current == null) {
                for (final Channel ch : channels) {
                    if (ch != null) {
                        ch.pumpSends(schedule, ordinal);
                    }
                }
            } else if (now - lastProgressNs > timeoutNs) {
                fail(WcStatus.RETRY_EXCEEDED, current.type + " made no progress in " + tuning.timeoutMs() + " ms");
                return;
            }
            flushAcks(); // after the step's messages, one of which may have carried them
        } catch (final RuntimeException | Error e) {
            // Whatever went wrong ends the group, never a poll that throws and leaves a collective half run
            // (a later pass would otherwise find nothing pending and complete it successfully).
            fail(failureStatus(e), String.valueOf(e));
        } finally {
            cq.unlockEngine();
            lock.unlock();
        }
    }

    /** Sends the acknowledgements that ended rendezvous into this member and that no message carried yet. */
    private void flushAcks() {
        for (final Channel ch : channels) {
            if (ch != null) {
                ch.flushAck();
            }
        }
    }

    /**
     * What a throwable in progress means for the collective: a peer's message that broke the rules
     * ({@link IllegalStateException}) is {@code BAD_RESPONSE}; a post refused because a connection failed is
     * {@code RETRY_EXCEEDED}, as that connection's flushed work would say; anything else is this member's own
     * failure (its scratch memory could not be registered, say), {@code LOCAL_OP_ERR}.
     */
    private static WcStatus failureStatus(final Throwable e) {
        if (e instanceof IllegalStateException) {
            return WcStatus.BAD_RESPONSE;
        }
        if (e instanceof DetException d && d.errno() == Errno.ENOTCONN) {
            return WcStatus.RETRY_EXCEEDED;
        }
        return WcStatus.LOCAL_OP_ERR;
    }

    private void handle(final WorkCompletion wc, final long now) {
        final long id = wc.id();
        final long kind = id >>> 56;
        final int peer = (int) (id >>> 32 & 0xff_ffff);
        if (wc.status() != WcStatus.SUCCESS) {
            fail(wc.status() == WcStatus.FLUSHED ? WcStatus.RETRY_EXCEEDED : wc.status(),
                "the connection to rank " + peer + " failed (" + wc.status() + ")");
            return;
        }
        final Channel ch = channels[peer];
        if (kind == Channel.KIND_RECV) {
            ch.arrived((int) id, wc.length(), wc.immediate());
        } else {
            chunksInFlight -= ch.completed(wc.reapCount());
        }
        lastProgressNs = now;
    }

    private void advance(final long now) {
        while (true) {
            if (current == null) {
                if (queue.isEmpty()) {
                    return;
                }
                start(queue.poll(), now);
                if (!current.buffersValid()) {
                    fail(WcStatus.LOCAL_PROTECTION_ERR, current.type + ": a buffer's region was deregistered or "
                        + "re-keyed after the post");
                    return;
                }
            }
            for (final Channel ch : channels) {
                if (ch != null) {
                    recvsPending -= ch.matchRecvs(schedule, ordinal);
                    sendOpsPending -= ch.pumpSends(schedule, ordinal);
                    chunksInFlight += ch.postedChunks;
                    ch.postedChunks = 0;
                }
            }
            if (!earlyDone) {
                earlyDone = true; // the round's first sends are posted: its early copies overlap their flight
                runLocals(round, true);
            }
            if (recvsPending > 0 || sendOpsPending > 0) {
                return;
            }
            if (chunksInFlight > 0 && (round + 1 >= schedule.rounds || !writesClearCached())) {
                // The collective completes only once every send is acknowledged (the caller may reuse its
                // memory then), and a step goes on before only where it writes no byte a send still reads.
                return;
            }
            if (!current.buffersValid()) {
                // As a queue pair's work request finds its region gone: no byte more goes to or from it.
                fail(WcStatus.LOCAL_PROTECTION_ERR, current.type + ": a buffer's region was deregistered or "
                    + "re-keyed while the collective ran");
                return;
            }
            if (round + 1 >= schedule.rounds) {
                flushAcks(); // nothing of this collective follows to carry them: before the last copies run
            }
            runLocals(round, false);
            lastProgressNs = now;
            round++;
            if (round >= schedule.rounds) {
                final Request done = current;
                current = null;
                if ((done.flags & WrFlags.SUPPRESSED) == 0) {
                    cq.completeCollective(done.id, WcStatus.SUCCESS, done.type, (int) Math.min(done.length,
                        Integer.MAX_VALUE));
                }
                spare.add(done.reset(null, 0, 0)); // for a later post to refill
                continue;
            }
            startRound(round);
        }
    }

    /** {@link #writesClear} for the current round, unless it said no with the same chunks in flight. */
    private boolean writesClearCached() {
        if (blockedOrdinal == ordinal && blockedRound == round && blockedChunks == chunksInFlight) {
            return false;
        }
        if (writesClear(round)) {
            return true;
        }
        blockedOrdinal = ordinal;
        blockedRound = round;
        blockedChunks = chunksInFlight;
        return false;
    }

    /**
     * Whether round {@code r}'s copies and reductions, and the receives and early copies of round {@code r + 1},
     * leave alone every byte that a zero-copy send not yet acknowledged reads: a retransmission reads it again. A
     * receive from peer P may write bytes of a send to P still in flight if P writes them into this member's
     * advertised destination: P does so after this member's advertisement, which the queue pair delivers after the
     * send, so P holds the send's bytes by then and a retransmission of it is a duplicate P only acknowledges.
     */
    private boolean writesClear(final int r) {
        final Schedule s = schedule;
        for (int op = s.roundStart[r]; op < s.roundStart[r + 1]; op++) {
            if ((s.kind[op] == Schedule.COPY || s.kind[op] == Schedule.REDUCE) && localWriteReadInFlight(s, op)) {
                return false;
            }
        }
        for (int op = s.roundStart[r + 1]; op < s.roundStart[r + 2]; op++) {
            if (s.kind[op] == Schedule.EARLY_COPY && localWriteReadInFlight(s, op)) {
                return false;
            }
            if (s.kind[op] == Schedule.RECV) {
                final Channel from = channels[s.peer[op]];
                final int exempt = from.placedByPeerWrite(s, op) ? from.peer : -1;
                for (int b = s.first[op], end = b + s.count[op]; b < end; b++) {
                    if (sendInFlightReads(s.address(b), s.blockLen[b], exempt)) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    /** Whether a send not yet acknowledged reads a byte that local operation {@code op} writes (its second block). */
    private boolean localWriteReadInFlight(final Schedule s, final int op) {
        return sendInFlightReads(s.address(s.first[op] + 1), s.total[op], -1);
    }

    /** Whether a zero-copy send not yet acknowledged, to any peer but {@code exemptPeer}, reads those bytes. */
    private boolean sendInFlightReads(final long from, final long length, final int exemptPeer) {
        for (final Channel ch : channels) {
            if (ch != null && ch.peer != exemptPeer && ch.readsInFlight(schedule, from, length)) {
                return true;
            }
        }
        return false;
    }

    private void start(final Request q, final long now) {
        current = q;
        ordinal++;
        if (algorithms == null) {
            algorithms = new Algorithms(schedule, rank, size, tuning, scratchSource); // rank and size are final now
        }
        round = 0; // before the build, which may throw: a failed start leaves no count of an earlier collective
        recvsPending = 0;
        sendOpsPending = 0;
        lastProgressNs = now;
        algorithms.build(q);
        if (schedule.rounds > 0) {
            startRound(0);
        }
    }

    private void startRound(final int r) {
        final Schedule s = schedule;
        earlyDone = false;
        for (int op = s.roundStart[r]; op < s.roundStart[r + 1]; op++) {
            if (s.kind[op] == Schedule.SEND) {
                channels[s.peer[op]].sendQ.add(op);
                sendOpsPending++;
            } else if (s.kind[op] == Schedule.RECV) {
                channels[s.peer[op]].recvQ.add(op);
                recvsPending++;
            }
        }
    }

    /** Runs round {@code r}'s early copies, or its copies and reductions once its transfers are done. */
    private void runLocals(final int r, final boolean early) {
        final Schedule s = schedule;
        if (r >= s.rounds) {
            return;
        }
        for (int op = s.roundStart[r]; op < s.roundStart[r + 1]; op++) {
            final byte k = s.kind[op];
            if (early ? k == Schedule.EARLY_COPY : k == Schedule.COPY || k == Schedule.REDUCE) {
                final int src = s.first[op];
                final int dst = src + 1;
                final MemorySegment from = s.segs[s.blockBuf[src]];
                final MemorySegment to = s.segs[s.blockBuf[dst]];
                if (k != Schedule.REDUCE) {
                    MemorySegment.copy(from, s.blockOff[src], to, s.blockOff[dst], s.total[op]);
                } else {
                    Reduction.apply(current.op, current.reduceType, from, s.blockOff[src], to, s.blockOff[dst],
                        s.total[op]);
                }
            }
        }
    }

    /** The group's scratch memory, grown (only between collectives) to at least {@code bytes}. */
    private int scratch(final Schedule s, final long bytes) {
        final long need = Math.max(bytes, 8);
        if (scratchMr == null || scratchMr.length() < need) {
            if (scratchMr != null) {
                scratchMr.close();
                scratchArena.close();
            }
            final long grown = Math.max(need, Math.min(maxRegion, scratchMr == null ? 0 : scratchMr.length() * 2));
            scratchArena = Arena.ofShared();
            scratchMr = pd.regMr(scratchArena.allocate(grown, 64), Access.LOCAL_READ | Access.LOCAL_WRITE);
        }
        return s.buffer((MrImpl) scratchMr, scratchMr.segment(), 0, scratchMr.address(), scratchMr.lKey());
    }

    // ------------------------------------------------------------------ failure and close

    private void fail(final WcStatus status, final String why) {
        if (state != State.JOINED) {
            return;
        }
        state = State.FAILED;
        failure = why;
        final boolean running = current != null || !queue.isEmpty();
        if (current != null) {
            cq.completeCollective(current.id, status, current.type, 0);
            current = null;
        }
        flushQueued();
        cq.raiseCollectiveEvent((running ? EventCode.CO_ERROR : EventCode.CO_DESTROYED).code(),
            this);
        tearDown();
    }

    private void flushQueued() {
        for (Request q = queue.poll(); q != null; q = queue.poll()) {
            cq.completeCollective(q.id, WcStatus.FLUSHED, q.type, 0);
        }
    }

    /** Moves every mesh queue pair to ERROR, which tells each peer, so that every member fails alike. */
    private void tearDown() {
        if (channels == null) {
            return;
        }
        for (final Channel ch : channels) {
            if (ch != null) {
                ch.clear();
                toError(ch.qp);
            }
        }
    }

    private static void toError(final QueuePair qp) {
        try {
            qp.modify(new QpModify().state(QpState.ERROR));
        } catch (final RuntimeException alreadyDown) {
            // the queue pair failed or closed already; the peer knows
        }
    }

    @Override
    public void close() {
        final Thread j;
        lock.lock();
        try {
            if (state == State.CLOSED) {
                return;
            }
            final State was = state;
            state = State.CLOSED;
            if (current != null) {
                cq.completeCollective(current.id, WcStatus.FLUSHED, current.type, 0);
                current = null;
            }
            if (was == State.JOINING) {
                cq.completeCollective(joinId, WcStatus.FLUSHED, WcType.JOIN, 0);
            }
            flushQueued();
            j = joiner;
        } finally {
            lock.unlock();
        }
        cq.removePollHook(hook);
        cq.purgeCollectiveEvents(this);
        if (j != null) {
            j.interrupt();
            // Waits even if this thread is interrupted (the status is kept): a close that returned at once left the
            // joiner to hand its queue pairs, regions, listener and memory to a group already torn down.
            final long until = System.nanoTime() + timeoutNs + TimeUnit.SECONDS.toNanos(1);
            boolean interrupted = false;
            for (long left = until - System.nanoTime(); j.isAlive() && left > 0; left = until - System.nanoTime()) {
                try {
                    j.join(java.time.Duration.ofNanos(left));
                } catch (final InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        lock.lock();
        try {
            released = true; // a joiner that outlived the wait closes what it made itself
            if (rank >= 0) {
                Tags.release(tag, rank);
            }
            final List<AutoCloseable> all = new ArrayList<>();
            if (channels != null) {
                for (final Channel ch : channels) {
                    if (ch != null) {
                        all.add(ch.qp);
                    }
                }
            }
            all.addAll(resources);
            if (scratchMr != null) {
                all.add(scratchMr);
                all.add(scratchArena);
            }
            closeAll(all);
            channels = null;
            resources.clear();
        } finally {
            lock.unlock();
            pd.releaseGroup(this); // last: its queue pairs and regions are gone from the domain (or still hold it)
        }
    }

    /**
     * Closes queue pairs (and listeners and windows) first, then completion queues, regions and arenas, as their
     * dependencies require.
     */
    static void closeAll(final List<AutoCloseable> all) {
        for (int pass = 0; pass < 4; pass++) {
            for (final AutoCloseable c : all) {
                final boolean now = switch (pass) {
                    case 0 -> c instanceof QueuePair || c instanceof io.jdet.ConnectionListener
                        || c instanceof io.jdet.MemoryWindow;
                    case 1 -> c instanceof CompletionQueue;
                    case 2 -> c instanceof MemoryRegion;
                    default -> c instanceof Arena;
                };
                if (now) {
                    try {
                        c.close();
                    } catch (final Exception ignored) {
                        // best effort: a resource that is gone already
                    }
                }
            }
        }
    }

    @Override
    public String toString() {
        return "Collective[tag=0x" + Long.toHexString(tag) + ", rank=" + rank + "/" + size + ", " + state
            + (failure == null ? "" : ", " + failure) + "]";
    }
}
