package io.jdet.internal.verbs;

import io.jdet.CompletionQueue;
import io.jdet.CqArm;
import io.jdet.CqAttributes;
import io.jdet.CqState;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.ResourceType;
import io.jdet.WcFlags;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A completion queue: a ring of completions kept as parallel primitive arrays, so appending and polling allocate
 * nothing. Each entry remembers its work queue and that queue's epoch, so that polling frees the queue's slots
 * ({@code reap_cnt}) unless the queue pair was reset or destroyed since.
 *
 * <p>Threading: the ring has a lock of its own (a short spin lock, {@link #lockRing}), taken by a poller as it takes,
 * and by the engine only to change what pollers read (resize, an epoch) or to append while the queue is armed (the
 * order is always engine lock, then ring lock). Appending otherwise takes no lock of the ring: the engine (one
 * appender at a time, under the engine lock) publishes an entry with a release store of the count of entries
 * appended, and reuses a slot only once the pollers' count of entries taken, released after they read it, says it
 * is free. A poll that finds completions takes them under the ring lock alone, without the NIC's engine lock, so
 * threads polling different queues (or one polling while another posts) do not wait for each other; only a poll
 * that finds the queue empty runs an engine pass. Freeing the work queue slots a completion covers is a count the
 * engine folds in ({@link io.jdet.internal.protocol.WorkRing#retire}), freed only after the poll published what it
 * took (an engine that sees the slot free sees the completion gone); a queue pair's epoch changes under the ring
 * locks of its queues ({@link QpImpl#newEpoch}), so a poll never frees slots of a reset queue.
 */
public final class CqImpl implements CompletionQueue {
    /** Completions per DET page (4096 / 40); sizes are rounded up to a multiple of it. */
    static final int ENTRIES_PER_PAGE = 102;
    private static final int STORED = 0;
    private static final int STORED_FIRE = 1;
    private static final int LOST_IN_ERROR = 2;
    private static final int LOST_OVERRUN = 3;
    private static final VarHandle RING_LOCK;
    private static final VarHandle APPENDED;
    private static final VarHandle TAKEN;

    static {
        try {
            RING_LOCK = MethodHandles.lookup().findVarHandle(CqImpl.class, "ringLocked", int.class);
            APPENDED = MethodHandles.lookup().findVarHandle(CqImpl.class, "appended", long.class);
            TAKEN = MethodHandles.lookup().findVarHandle(CqImpl.class, "taken", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final NicImpl nic;
    final EventQueueImpl event;
    private int size;
    private long[] ids;
    private WcStatus[] statuses;
    private WcType[] types;
    private int[] flags;
    private int[] lengths;
    private int[] immediates;
    private int[] invalidated;
    private int[] reaps;
    private int[] epochs;
    private QpImpl[] qps;
    private boolean[] receive;
    /**
     * Completions appended since the queue was made, a count that only grows: entry {@code n} lies at index
     * {@code n % size}. Written by appenders, who hold the engine lock (one at a time), with a release store after
     * the entry; read by pollers with acquire.
     */
    private long appended;
    /**
     * Completions taken since the queue was made: written by pollers, who hold the ring lock, with a release store
     * after they read the entries; read by appenders with acquire before they reuse a slot.
     */
    private long taken;
    /** Where entry {@link #appended} goes ({@code appended % size}, kept so that appending divides nothing). */
    private int tailAt;
    /** Where entry {@link #taken} lies ({@code taken % size}); written by pollers, under the ring lock. */
    private int headAt;
    private CqState state = CqState.READY;
    private int arm;
    private int threshold;
    /** Collective groups' progress, run by every poll (see {@link #addPollHook}); replaced, never mutated. */
    private volatile PollHook[] hooks = new PollHook[0];
    /** Queue pairs using this queue. */
    int users;
    /** Set under the engine lock; read by polls without it. */
    volatile boolean closed;
    /** The ring lock: 1 while a thread holds it ({@link #lockRing}). */
    @SuppressWarnings("unused") // through RING_LOCK
    private int ringLocked;

    CqImpl(final NicImpl nic, final int size, final EventQueueImpl event) {
        this.nic = nic;
        this.event = event;
        allocate(roundUp(size));
    }

    static int roundUp(final int size) {
        return (size + ENTRIES_PER_PAGE - 1) / ENTRIES_PER_PAGE * ENTRIES_PER_PAGE;
    }

    private void allocate(final int capacity) {
        final long[] i = new long[capacity];
        final WcStatus[] s = new WcStatus[capacity];
        final WcType[] t = new WcType[capacity];
        final int[] f = new int[capacity];
        final int[] l = new int[capacity];
        final int[] im = new int[capacity];
        final int[] inv = new int[capacity];
        final int[] r = new int[capacity];
        final int[] e = new int[capacity];
        final QpImpl[] q = new QpImpl[capacity];
        final boolean[] rc = new boolean[capacity];
        for (long n = taken; n < appended; n++) { // both locks held (or none yet): each entry keeps its number
            final int from = (int) (n % size);
            final int k = (int) (n % capacity);
            i[k] = ids[from];
            s[k] = statuses[from];
            t[k] = types[from];
            f[k] = flags[from];
            l[k] = lengths[from];
            im[k] = immediates[from];
            inv[k] = invalidated[from];
            r[k] = reaps[from];
            e[k] = epochs[from];
            q[k] = qps[from];
            rc[k] = receive[from];
        }
        ids = i;
        statuses = s;
        types = t;
        flags = f;
        lengths = l;
        immediates = im;
        invalidated = inv;
        reaps = r;
        epochs = e;
        qps = q;
        receive = rc;
        size = capacity;
        tailAt = capacity == 0 ? 0 : (int) (appended % capacity);
        headAt = capacity == 0 ? 0 : (int) (taken % capacity);
    }

    /**
     * Takes the ring lock: a spin lock (never queues, so never allocates), held only to add or take a few entries.
     * A thread holding it takes no other lock (the engine lock, when it is held too, was taken first).
     */
    void lockRing() {
        for (int attempt = 0; !RING_LOCK.weakCompareAndSetAcquire(this, 0, 1); attempt++) {
            if (attempt < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield(); // its holder was descheduled: let it run
            }
        }
    }

    void unlockRing() {
        RING_LOCK.setRelease(this, 0);
    }

    /**
     * Appends a completion, firing the arm if it is met. Engine lock held. Without an arm it takes no lock of the
     * ring: the entry is published by a release store of {@link #appended}, and the slot it reuses was freed by a
     * release store of {@link #taken}. With an arm it takes the ring lock, so that the count it compares with the
     * threshold is exact (no poll takes meanwhile).
     *
     * @return false if the queue overflowed or is in error (the completion is lost)
     */
    boolean append(final long id, final WcStatus status, final WcType type, final int wcFlags, final int length,
                   final int immediate, final int invalidatedKey, final int reap, final QpImpl qp,
                   final boolean fromReceiveQueue) {
        final int outcome;
        if (arm == 0) {
            outcome = store(id, status, type, wcFlags, length, immediate, invalidatedKey, reap, qp, fromReceiveQueue);
        } else {
            lockRing();
            try {
                final int stored = store(id, status, type, wcFlags, length, immediate, invalidatedKey, reap, qp,
                    fromReceiveQueue);
                final boolean fire = stored == STORED && ((arm & CqArm.NEXT_SIGNALED) != 0
                    || (arm & CqArm.NEXT_SOLICITED) != 0
                        && ((wcFlags & WcFlags.SOLICITED) != 0 || status != WcStatus.SUCCESS)
                    || (arm & CqArm.THRESHOLD) != 0 && appended - taken >= threshold);
                if (fire) {
                    arm = 0;
                }
                outcome = fire ? STORED_FIRE : stored;
            } finally {
                unlockRing();
            }
        }
        // Events and observers outside the ring lock (a poller may already have taken the entry: harmless, as a
        // completion taken between an arm's event and the wait that reads it).
        switch (outcome) {
            case LOST_IN_ERROR -> {
                nic.asyncEvent(EventCode.CQ_FATAL.code(), ResourceType.CQ, this);
                return false;
            }
            case LOST_OVERRUN -> {
                nic.counters.cqOverruns++;
                nic.asyncEvent(EventCode.CQ_OVERRUN.code(), ResourceType.CQ, this);
                return false;
            }
            default -> {
                if (status != WcStatus.SUCCESS && qp != null) {
                    nic.observer.errorCompletion(qp.number, id, status, type);
                }
                if (outcome == STORED_FIRE) {
                    event.post(EventCode.CQ_COMPLETION.code(), ResourceType.CQ, this);
                }
                return true;
            }
        }
    }

    /** Stores an entry and publishes it, or says why not: {@link #STORED}, or a loss. Engine lock held. */
    private int store(final long id, final WcStatus status, final WcType type, final int wcFlags, final int length,
                      final int immediate, final int invalidatedKey, final int reap, final QpImpl qp,
                      final boolean fromReceiveQueue) {
        if (state == CqState.ERROR) {
            return LOST_IN_ERROR;
        }
        final long n = appended;
        if (n - (long) TAKEN.getAcquire(this) >= size) {
            state = CqState.ERROR;
            return LOST_OVERRUN;
        }
        final int at = tailAt;
        ids[at] = id;
        statuses[at] = status;
        types[at] = type;
        flags[at] = wcFlags;
        lengths[at] = length;
        immediates[at] = immediate;
        invalidated[at] = invalidatedKey;
        reaps[at] = reap;
        epochs[at] = qp == null ? 0 : qp.epoch;
        qps[at] = qp;
        receive[at] = fromReceiveQueue;
        tailAt = at + 1 == size ? 0 : at + 1;
        APPENDED.setRelease(this, n + 1);
        return STORED;
    }

    /**
     * Completions waiting to be taken, as seen without the ring lock (a poll's first look). Raises nothing.
     *
     * @return at least what was published before this call, less what was taken
     */
    private long waiting() {
        final long t = (long) TAKEN.getAcquire(this);
        return (long) APPENDED.getAcquire(this) - t;
    }

    /**
     * Appends the completion of a collective work request (io.jdet.internal.collective): it belongs to no queue
     * pair and frees no slot. Takes the engine lock as posts do (it is on the data path: never parks on the lock).
     *
     * @return false if the queue overflowed or is in error (the completion is lost, as for any work request)
     */
    public boolean completeCollective(final long id, final WcStatus status, final WcType type, final int length) {
        nic.lockDataPath();
        try {
            return !closed && append(id, status, type, 0, length, 0, 0, 0, null, false);
        } finally {
            nic.lock.unlock();
        }
    }

    /**
     * Raises a collective group's asynchronous event on the NIC's event queue, type {@link ResourceType#CO}.
     *
     * @param rawCode the event code
     * @param group   the group, as the record's handle
     */
    public void raiseCollectiveEvent(final int rawCode, final Object group) {
        nic.asyncEvent(rawCode, ResourceType.CO, group);
    }

    /**
     * Drops the pending events about a collective group that is being destroyed (det.md 3.13), as a queue pair's
     * destroy drops its own.
     *
     * @param group the group
     */
    public void purgeCollectiveEvents(final Object group) {
        if (nic.event != null) {
            nic.event.purge(group);
        }
    }

    /**
     * Takes the NIC's engine lock for a collective group's step ({@link #unlockEngine} lets go): the step copies into
     * and out of the members' registered memory, so a deregistration, which takes the same lock, cannot return while
     * the step still touches the region (MemoryRegion: when close returns, jdet never reads or writes the memory
     * again). Reentrant: the step's own posts and drains take it again. The step is one batch of the link: the frames
     * its posts send to one peer share datagrams (ring slots on the fabric), and those for several peers leave in
     * one system call, when {@link #unlockEngine} ends it. Raises nothing.
     */
    public void lockEngine() {
        nic.lockDataPath();
        nic.beginBatch();
    }

    /** Sends what the step's batch holds and lets go of what {@link #lockEngine} took. Raises nothing. */
    public void unlockEngine() {
        try {
            nic.endBatch();
        } finally {
            nic.unlockDataPath();
        }
    }

    /**
     * Adds work that every poll runs around its engine pass, outside the engine lock: how a collective group drives
     * its steps (which take the engine lock themselves, {@link #lockEngine}).
     *
     * @param hook the work; it must not throw
     */
    public synchronized void addPollHook(final PollHook hook) {
        final PollHook[] old = hooks;
        final PollHook[] grown = java.util.Arrays.copyOf(old, old.length + 1);
        grown[old.length] = hook;
        hooks = grown;
    }

    /** Removes every poll hook: the NIC is being closed with the device, collective groups and all. */
    synchronized void dropPollHooks() {
        hooks = new PollHook[0];
    }

    /**
     * Removes work added by {@link #addPollHook}.
     *
     * @param hook the work
     */
    public synchronized void removePollHook(final PollHook hook) {
        final PollHook[] old = hooks;
        for (int i = 0; i < old.length; i++) {
            if (old[i] == hook) {
                final PollHook[] shrunk = new PollHook[old.length - 1];
                System.arraycopy(old, 0, shrunk, 0, i);
                System.arraycopy(old, i + 1, shrunk, i, old.length - i - 1);
                hooks = shrunk;
                return;
            }
        }
    }


    @Override
    public int poll(final WorkCompletion[] completions) {
        return poll(completions, completions.length);
    }

    @Override
    public int poll(final WorkCompletion[] completions, final int max) {
        if (max < 0) {
            throw new DetException(Errno.EINVAL, "poll of " + max + " completions");
        }
        final int limit = Math.min(max, completions.length);
        final PollHook[] work = hooks;
        if (work.length == 0 && waiting() > 0) {
            // Completions are waiting (an engine pass of another thread, or of the progress thread, left them):
            // hand them out under the ring lock alone; the engine runs when the queue is found empty.
            if (closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            final int n = take(completions, limit);
            if (n > 0) {
                return n;
            }
        }
        if (work.length > 0) {
            // One engine pass for the poll: the hooks (collective groups) then drain what it received and post
            // their next steps, and their completions are handed out below without a second pass (a receive
            // system call saved per poll). A collective waiting to start sends its first messages before the pass.
            for (final PollHook hook : work) {
                hook.beforePass();
            }
            nic.lockDataPath();
            try {
                if (closed) {
                    throw new IllegalStateException("completion queue destroyed");
                }
                nic.progressQuietly(); // the engine's failure is not the caller's: counted there
            } finally {
                nic.lock.unlock();
            }
            for (final PollHook hook : work) {
                hook.afterPass();
            }
        }
        if (work.length == 0) {
            if (closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            nic.passForPoll();
            if (closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            if (waiting() <= 0) {
                // Nothing came of the pass: its appends (this thread's, or those of the pass it waited for, read
                // with acquire there) would show here. Skipping the ring lock saves an atomic per idle poll.
                return 0;
            }
        }
        if (closed) {
            throw new IllegalStateException("completion queue destroyed");
        }
        return take(completions, limit);
    }

    /**
     * Takes completions (as many as fit) without running the engine or the hooks: for a collective group's hook,
     * which the poll of its group's queue runs right after an engine pass.
     *
     * @param completions where to put them
     * @return how many were taken
     * @throws IllegalStateException if the queue was destroyed
     */
    public int drain(final WorkCompletion[] completions) {
        nic.lockDataPath();
        try {
            if (closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            return take(completions, completions.length);
        } finally {
            nic.lock.unlock();
        }
    }

    /** Hands out up to {@code limit} completions; takes the ring lock (the engine lock need not be held). */
    private int take(final WorkCompletion[] completions, final int limit) {
        lockRing();
        try {
            return takeLocked(completions, limit);
        } finally {
            unlockRing();
        }
    }

    private int takeLocked(final WorkCompletion[] completions, final int limit) {
        int n = 0;
        long next = taken;
        final long end = (long) APPENDED.getAcquire(this); // pairs with the appender's release: the entries are seen
        while (n < limit && next < end) {
            if (completions[n] == null) { // checked before the entry is taken: a null slot loses nothing
                if (n == 0) {
                    throw new NullPointerException("completions[0] is null");
                }
                break;
            }
            final int at = headAt;
            final QpImpl qp = qps[at];
            final int reap = reaps[at];
            final boolean fromReceiveQueue = receive[at];
            final boolean live = qp != null && qp.epoch == epochs[at]; // ring lock held: the epoch cannot change
            completions[n++].set(ids[at], statuses[at], types[at], flags[at], lengths[at], immediates[at],
                invalidated[at], reap, qp);
            qps[at] = null;
            headAt = at + 1 == size ? 0 : at + 1;
            next++;
            // After the reads (an appender reuses the slot only once it sees this), and before the work queue's
            // slot is freed: an engine that sees the freed slot (acquire) sees the completion gone too, so a post
            // into that slot and its completion never find this queue still counting the entry (a false overrun,
            // if this queue is exactly as deep as the work queues it serves).
            TAKEN.setRelease(this, next);
            if (live) {
                qp.retire(fromReceiveQueue, reap);
            }
        }
        return n;
    }

    @Override
    public void arm(final int flagsToArm, final int newThreshold) {
        nic.lockDataPath(); // an application waiting on events arms again after each: never parks on the lock
        try {
            if (closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            if (flagsToArm == 0 || (flagsToArm & ~(CqArm.NEXT_SIGNALED | CqArm.NEXT_SOLICITED | CqArm.THRESHOLD))
                != 0) {
                throw new DetException(Errno.EINVAL, "arm flags 0x" + Integer.toHexString(flagsToArm));
            }
            if (event == null) {
                throw new DetException(Errno.EINVAL, "the completion queue has no event queue to report to");
            }
            if ((flagsToArm & CqArm.THRESHOLD) != 0) {
                if (newThreshold < 1 || newThreshold > size) {
                    throw new DetException(Errno.EINVAL, "threshold " + newThreshold + " not in [1, " + size + "]");
                }
            }
            boolean fire = false;
            lockRing();
            try {
                if ((flagsToArm & CqArm.THRESHOLD) != 0) {
                    threshold = newThreshold;
                }
                arm |= flagsToArm;
                if ((arm & CqArm.THRESHOLD) != 0 && appended - taken >= threshold) {
                    arm = 0;
                    fire = true;
                }
            } finally {
                unlockRing();
            }
            if (fire) {
                event.post(EventCode.CQ_COMPLETION.code(), ResourceType.CQ, this);
            }
        } finally {
            nic.unlockDataPath();
        }
    }

    @Override
    public void resize(final int newSize) {
        nic.lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            if (newSize < 0 || newSize > NicImpl.MAX_CQ_SIZE) {
                throw new DetException(Errno.EINVAL, "size " + newSize + " not in [0, " + NicImpl.MAX_CQ_SIZE + "]");
            }
            if ((arm & CqArm.THRESHOLD) != 0 && newSize < threshold) {
                throw new DetException(Errno.EINVAL, "size " + newSize + " below the armed threshold " + threshold);
            }
            lockRing(); // polls take without the engine lock
            try {
                if (newSize < appended - taken) {
                    throw new DetException(Errno.EBUSY, "the queue holds " + (appended - taken) + " completions");
                }
                allocate(roundUp(newSize));
            } finally {
                unlockRing();
            }
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public CqAttributes query() {
        nic.lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            lockRing();
            try {
                return new CqAttributes(state, arm, size, threshold, (int) (appended - taken));
            } finally {
                unlockRing();
            }
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public void close() {
        nic.lock.lock();
        try {
            if (closed) {
                return;
            }
            if (users > 0) {
                throw new DetException(Errno.EBUSY, users + " queue pair(s) use the completion queue");
            }
            if (hooks.length > 0) {
                throw new DetException(Errno.EBUSY, hooks.length + " collective group(s) use the completion queue");
            }
            closed = true;
            nic.cqs.remove(this);
        } finally {
            nic.lock.unlock();
        }
        nic.releaseEventUser(event, this);
        if (nic.event != null && nic.event != event) {
            nic.event.purge(this); // its CQ_OVERRUN and CQ_FATAL went to the NIC's queue (det.md 3.13)
        }
    }

    @Override
    public String toString() {
        return "CompletionQueue@" + Integer.toHexString(System.identityHashCode(this)) + "[size=" + size + "]";
    }
}
