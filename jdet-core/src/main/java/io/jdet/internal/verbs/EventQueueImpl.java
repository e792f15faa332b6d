package io.jdet.internal.verbs;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.EventHandler;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.ResourceType;
import io.jdet.internal.link.Link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An event queue: a growable ring of records guarded by its own lock. The handler runs on the waiting thread after
 * the record was taken, outside the lock.
 *
 * <p>A blocked waiter sleeps on the link of a NIC that reports here (its events, or a completion queue on it), as
 * that NIC's link waiter ({@link NicImpl#claimLink}): it runs the NIC's engine itself whenever the link wakes it, so
 * the frame that completes its work wakes it once, and the event it raises is taken on the same thread. One waiter
 * at a time does so; an event posted by another thread wakes it through the link ({@link Link#wakeup(int)}). Other
 * waiters, and waiters on a queue no NIC reports to, park on a condition (no spinning) and rely on the NICs'
 * progress threads.
 */
public final class EventQueueImpl implements EventQueue {
    private static final VarHandle LINK_THREAD;

    static {
        try {
            LINK_THREAD = MethodHandles.lookup().findVarHandle(EventQueueImpl.class, "linkThread", Thread.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final DeviceImpl device;
    private final EventHandler handler;
    /** Guards the records; package-private so that tests can hold it to stop a close half-way. */
    final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private int[] codes = new int[16];
    private ResourceType[] types = new ResourceType[16];
    private Object[] handles = new Object[16];
    private int head;
    private int count;
    /**
     * Set once, under the device lock (where NICs and completion queues check it before they start reporting
     * here), read anywhere: volatile, so no reader depends on holding the lock it was written under.
     */
    private volatile boolean closed;
    /** NICs and completion queues reporting here; guarded by the device lock. */
    int users;
    /**
     * The NIC of each user (a NIC once per completion queue on it, and once for its own events); written under the
     * device lock, replaced, never mutated, so that waiters read it without that lock.
     */
    private volatile NicImpl[] sources = new NicImpl[0];
    /** The waiter that sleeps on a source's link, or null; one at a time. */
    private volatile Thread linkThread;
    /** The NIC whose link {@link #linkThread} sleeps on: set before it looks at the queue, so posts wake it. */
    private volatile NicImpl linkNic;

    EventQueueImpl(final DeviceImpl device, final EventHandler handler) {
        this.device = device;
        this.handler = handler;
    }

    /** @return the device that made this queue */
    DeviceImpl device() {
        return device;
    }

    /**
     * Queues an event. Called by the engine, possibly under an engine lock.
     *
     * @param rawCode the code, with the remote bit if the peer caused it
     * @param type    the resource type
     * @param handle  the resource
     */
    void post(final int rawCode, final ResourceType type, final Object handle) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            if (count == codes.length) {
                grow();
            }
            final int at = (head + count) % codes.length;
            codes[at] = rawCode;
            types[at] = type;
            handles[at] = handle;
            count++;
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
        wakeLinkWaiter();
    }

    /**
     * Wakes the waiter that sleeps on a link, unless it is the caller (it posted from its own turn of the engine,
     * and looks at the queue next). Read after the record was queued: a waiter sets {@link #linkNic} before it
     * looks, so either it sees the record or this sees it.
     */
    private void wakeLinkWaiter() {
        final NicImpl nic = linkNic;
        if (nic != null && linkThread != Thread.currentThread()) {
            nic.link.wakeup(Link.APPLICATION);
        }
    }

    /**
     * Records that a NIC reports here (itself, or a completion queue on it). Device lock held.
     *
     * @param nic the NIC
     */
    void addSource(final NicImpl nic) {
        final NicImpl[] old = sources;
        final NicImpl[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = nic;
        sources = grown;
    }

    /**
     * Undoes one {@link #addSource} of the NIC, if any. Device lock held.
     *
     * @param nic the NIC
     */
    void removeSource(final NicImpl nic) {
        final NicImpl[] old = sources;
        for (int i = 0; i < old.length; i++) {
            if (old[i] == nic) {
                final NicImpl[] shrunk = new NicImpl[old.length - 1];
                System.arraycopy(old, 0, shrunk, 0, i);
                System.arraycopy(old, i + 1, shrunk, i, old.length - i - 1);
                sources = shrunk;
                return;
            }
        }
    }

    /** Forgets every source (the device closes). Device lock held. */
    void clearSources() {
        sources = new NicImpl[0];
    }

    private void grow() {
        final int n = codes.length * 2;
        final int[] c = new int[n];
        final ResourceType[] t = new ResourceType[n];
        final Object[] h = new Object[n];
        for (int i = 0; i < count; i++) {
            final int from = (head + i) % codes.length;
            c[i] = codes[from];
            t[i] = types[from];
            h[i] = handles[from];
        }
        codes = c;
        types = t;
        handles = h;
        head = 0;
    }

    @Override
    public void waitOn(final long timeoutUs, final EventRecord record) {
        if (timeoutUs < 0) {
            throw new DetException(Errno.EINVAL, "negative timeout");
        }
        if (record == null) {
            throw new IllegalArgumentException("record is null");
        }
        final long deadlineNs = System.nanoTime() + (timeoutUs == NO_TIMEOUT ? 0
            : TimeUnit.MICROSECONDS.toNanos(timeoutUs));
        final NicImpl nic = timeoutUs == 0 ? null : claimLink();
        if (nic == null || !waitOnLink(nic, timeoutUs, deadlineNs, record)) {
            waitOnCondition(timeoutUs, deadlineNs, record);
        }
        if (handler != null) {
            handler.onEvent(this, record);
        }
    }

    /** @return a source NIC whose link waiter the caller became, or null if it cannot sleep on a link now */
    private NicImpl claimLink() {
        final NicImpl[] nics = sources;
        if (nics.length == 0 || closed || !LINK_THREAD.compareAndSet(this, null, Thread.currentThread())) {
            return null;
        }
        for (final NicImpl nic : nics) {
            if (nic.claimLink()) {
                linkNic = nic;
                return nic;
            }
        }
        linkThread = null;
        return null;
    }

    /**
     * Waits as the link waiter of a NIC: runs its engine, looks at the queue, sleeps on its link until a frame, a
     * post by another thread, the engine's next deadline or the caller's. Leaves the link in every case.
     *
     * @return true if a record was taken; false if the NIC closed or died first (the caller waits on the condition
     *         for the rest of its time)
     * @throws DetException ETIME, EINTR as {@link #waitOn} says; IllegalStateException if the queue closed
     */
    private boolean waitOnLink(final NicImpl nic, final long timeoutUs, final long deadlineNs,
                               final EventRecord record) {
        // Other NICs report here too: their progress threads must serve this waiter promptly.
        final boolean counted = sources.length > 1;
        if (counted) {
            device.blockedWaiters.incrementAndGet();
        }
        boolean taken = false;
        try {
            while (true) {
                final long engineNs = nic.runForLinkWaiter(); // may post here, from this thread: no wakeup then
                if (engineNs < 0) {
                    return false;
                }
                lock.lock();
                try {
                    if (closed) { // first: a closed queue hands out nothing, queued records included
                        throw new IllegalStateException("event queue closed");
                    }
                    if (count > 0) {
                        take(record);
                        taken = true;
                        return true;
                    }
                } finally {
                    lock.unlock();
                }
                final long leftNs = timeoutUs == NO_TIMEOUT ? Long.MAX_VALUE : deadlineNs - System.nanoTime();
                if (leftNs <= 0) {
                    throw new DetException(Errno.ETIME, "no event within " + timeoutUs + " us");
                }
                if (Thread.currentThread().isInterrupted()) {
                    // The link's sleep does not end on an interrupt: seen here, within a timer period of the NIC.
                    throw new DetException(Errno.EINTR, "interrupted while waiting for an event");
                }
                try {
                    nic.link.await(Link.APPLICATION, Math.min(engineNs, leftNs));
                } catch (final RuntimeException linkFailed) {
                    // The link failed outside the engine, under this thread rather than the progress thread: the
                    // NIC becomes fatal all the same (its NIC_FATAL event is posted here), and this waiter waits on.
                    nic.linkWaiterFailed(linkFailed);
                    return false;
                }
            }
        } finally {
            if (counted) {
                device.blockedWaiters.decrementAndGet();
            }
            linkNic = null;
            linkThread = null;
            nic.releaseLink(!taken || device.blockedWaiters.get() > 0);
        }
    }

    /** The wait on the condition, which progress threads' posts signal. */
    private void waitOnCondition(final long timeoutUs, final long deadlineNs, final EventRecord record) {
        long remainingNs = timeoutUs == NO_TIMEOUT ? Long.MAX_VALUE : deadlineNs - System.nanoTime();
        lock.lock();
        try {
            while (count == 0 || closed) {
                if (closed) { // first: a closed queue hands out nothing, queued records included
                    throw new IllegalStateException("event queue closed");
                }
                if (timeoutUs == 0) {
                    throw new DetException(Errno.EAGAIN, "no event queued");
                }
                if (remainingNs <= 0) {
                    throw new DetException(Errno.ETIME, "no event within " + timeoutUs + " us");
                }
                device.blockedWaiters.incrementAndGet();
                try {
                    if (timeoutUs == NO_TIMEOUT) {
                        notEmpty.await();
                    } else {
                        remainingNs = notEmpty.awaitNanos(remainingNs);
                    }
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new DetException(Errno.EINTR, "interrupted while waiting for an event");
                } finally {
                    device.blockedWaiters.decrementAndGet();
                }
            }
            take(record);
        } finally {
            lock.unlock();
        }
    }

    /** Takes the oldest record into {@code record}. Lock held, queue not empty. */
    private void take(final EventRecord record) {
        record.set(codes[head], types[head], handles[head]);
        handles[head] = null;
        types[head] = null;
        head = (head + 1) % codes.length;
        count--;
    }

    @Override
    public void generate(final Object handle) {
        if (closed) {
            throw new IllegalStateException("event queue closed");
        }
        post(EventCode.USER_GENERATED.code(), ResourceType.UNKNOWN, handle);
    }

    @Override
    public int pending() {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("event queue destroyed");
            }
            return count;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drops the queued events about a resource that is being destroyed.
     *
     * @param handle the resource
     */
    void purge(final Object handle) {
        lock.lock();
        try {
            int kept = 0;
            final int n = codes.length;
            for (int i = 0; i < count; i++) {
                final int from = (head + i) % n;
                if (handles[from] != handle || types[from] == ResourceType.UNKNOWN) {
                    final int to = (head + kept) % n;
                    codes[to] = codes[from];
                    types[to] = types[from];
                    handles[to] = handles[from];
                    kept++;
                }
            }
            for (int i = kept; i < count; i++) {
                handles[(head + i) % n] = null;
            }
            count = kept;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        synchronized (device) {
            if (closed) {
                return;
            }
            if (users > 0) {
                throw new DetException(Errno.EBUSY, users + " NIC(s) or completion queue(s) still use this queue");
            }
            device.events.remove(this);
            closed = true;
        }
        lock.lock();
        try {
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
        wakeLinkWaiter();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "EventQueue@" + Integer.toHexString(System.identityHashCode(this));
    }
}
