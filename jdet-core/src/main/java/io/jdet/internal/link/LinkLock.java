package io.jdet.internal.link;

import java.util.concurrent.locks.ReentrantLock;

/**
 * A NIC's engine lock: a {@link ReentrantLock} that calls {@link Link#flush} as its outermost holder lets go, so a
 * link that batches frames (the raw Ethernet link) hands everything the holder sent to the kernel in one call, and
 * nothing waits in a batch once the lock is free.
 */
public final class LinkLock extends ReentrantLock {
    private static final long serialVersionUID = 1L;

    /** The link whose batches this lock flushes. */
    private final transient Link link;

    /**
     * Creates the lock of a NIC.
     *
     * @param link the NIC's link
     */
    public LinkLock(final Link link) {
        this.link = link;
    }

    /**
     * Flushes the link's batch if this is the outermost hold, then releases the lock.
     *
     * @throws IllegalMonitorStateException if the current thread does not hold this lock
     */
    @Override
    public void unlock() {
        if (getHoldCount() == 1) {
            try {
                link.flush();
            } finally {
                super.unlock();
            }
        } else {
            super.unlock();
        }
    }
}
