package io.jdet.internal.verbs;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.EventHandler;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.ResourceType;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An event queue: a growable ring of records guarded by its own lock, with a condition that blocked waiters park
 * on (no spinning). The handler runs on the waiting thread after the record was taken, outside the lock.
 */
public final class EventQueueImpl implements EventQueue {
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

    EventQueueImpl(final DeviceImpl device, final EventHandler handler) {
        this.device = device;
        this.handler = handler;
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
        long remainingNs = timeoutUs == NO_TIMEOUT ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(timeoutUs);
        lock.lock();
        try {
            while (count == 0) {
                if (closed) {
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
            record.set(codes[head], types[head], handles[head]);
            handles[head] = null;
            types[head] = null;
            head = (head + 1) % codes.length;
            count--;
        } finally {
            lock.unlock();
        }
        if (handler != null) {
            handler.onEvent(this, record);
        }
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
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "EventQueue@" + Integer.toHexString(System.identityHashCode(this));
    }
}
