package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The engine lock flushes the link's batch exactly when its outermost holder lets go, even if the flush fails. */
class LinkLockTest {
    /** A link that counts flushes, and can fail one. */
    private static final class Counting extends ForwardingLink {
        int flushes;
        boolean fail;

        Counting() {
            super(null);
        }

        @Override
        public void flush() {
            flushes++;
            if (fail) {
                throw new IllegalStateException("flush failed");
            }
        }

        @Override
        public boolean send(final long peer, final MemorySegment header, final int headerLength,
                            final FrameGather payload) {
            return true;
        }

        @Override
        public void addCounters(final Map<String, Long> counters) {
        }
    }

    @Test
    void shouldFlushOnceWhenTheOutermostHolderUnlocks() {
        final Counting link = new Counting();
        final LinkLock lock = new LinkLock(link);
        lock.lock();
        lock.lock();
        lock.unlock();
        assertEquals(0, link.flushes, "still held");
        lock.unlock();
        assertEquals(1, link.flushes);
        assertFalse(lock.isLocked());
        if (lock.tryLock()) {
            lock.unlock();
        }
        assertEquals(2, link.flushes);
    }

    @Test
    void shouldReleaseTheLockWhenTheFlushFails() {
        final Counting link = new Counting();
        link.fail = true;
        final LinkLock lock = new LinkLock(link);
        lock.lock();
        assertThrows(IllegalStateException.class, lock::unlock);
        assertFalse(lock.isLocked(), "a failed flush must not leave the engine locked");
    }
}
