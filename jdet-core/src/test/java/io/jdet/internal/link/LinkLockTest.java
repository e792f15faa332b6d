package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine lock: excludes, is reentrant, flushes the link's batch exactly when its outermost holder lets go (even
 * if the flush fails), and its condition releases every hold while it waits and restores them.
 */
@Timeout(30)
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

    @Test
    void shouldExcludeOtherThreadsUntilTheLastHoldIsReleased() throws Exception {
        final LinkLock lock = new LinkLock(new Counting());
        lock.lock();
        assertTrue(lock.tryLock(), "reentrant");
        assertEquals(2, lock.getHoldCount());
        assertFalse(CompletableFuture.supplyAsync(lock::tryLock).get(10, TimeUnit.SECONDS));
        final CountDownLatch started = new CountDownLatch(1);
        final AtomicBoolean acquired = new AtomicBoolean();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            started.countDown();
            lock.lock(); // spins, yields, then parks until the holder lets go
            acquired.set(true);
            lock.unlock();
        });
        started.await();
        Thread.sleep(20); // long enough for the waiter to be parking between tries
        lock.unlock();
        assertFalse(acquired.get(), "one hold is left");
        assertEquals(1, lock.getHoldCount());
        lock.unlock();
        waiter.join(10_000);
        assertTrue(acquired.get(), "the waiter takes the lock once it is free");
        assertEquals(0, lock.getHoldCount());
        assertFalse(lock.isLocked());
    }

    @Test
    void shouldRefuseAnUnlockByAThreadThatDoesNotHoldIt() throws Exception {
        final Counting link = new Counting();
        final LinkLock lock = new LinkLock(link);
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
        lock.lock();
        final Throwable thrown = CompletableFuture.runAsync(lock::unlock).handle((v, e) -> e).get(10, TimeUnit.SECONDS);
        assertTrue(thrown != null && thrown.getCause() instanceof IllegalMonitorStateException, String.valueOf(thrown));
        assertTrue(lock.isHeldByCurrentThread(), "still held by its owner");
        assertEquals(0, link.flushes, "a refused unlock flushes nothing");
        lock.unlock();
    }

    @Test
    void shouldKeepTheInterruptStatusOfAThreadWaitingToLock() throws Exception {
        final LinkLock lock = new LinkLock(new Counting());
        lock.lock();
        final AtomicBoolean interruptedAfter = new AtomicBoolean();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            lock.lock();
            interruptedAfter.set(Thread.currentThread().isInterrupted());
            lock.unlock();
        });
        Thread.sleep(20);
        waiter.interrupt();
        Thread.sleep(20);
        assertTrue(waiter.isAlive(), "an interrupt does not end the wait for the lock");
        lock.unlock();
        waiter.join(10_000);
        assertTrue(interruptedAfter.get(), "the interrupt status is kept");
    }

    @Test
    void shouldReleaseEveryHoldWhileAwaitingAndRestoreThem() throws Exception {
        final Counting link = new Counting();
        final LinkLock lock = new LinkLock(link);
        final AtomicInteger stage = new AtomicInteger();
        final CountDownLatch waiting = new CountDownLatch(1);
        final CompletableFuture<Integer> holds = new CompletableFuture<>();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            lock.lock();
            lock.lock();
            try {
                waiting.countDown();
                while (stage.get() == 0) {
                    lock.awaitNanos(TimeUnit.SECONDS.toNanos(10));
                }
                holds.complete(lock.getHoldCount());
            } catch (final InterruptedException e) {
                holds.completeExceptionally(e);
            } finally {
                lock.unlock();
                lock.unlock();
            }
        });
        waiting.await();
        lock.lock(); // free while the waiter waits, though it held it twice
        assertTrue(link.flushes >= 1, "the wait flushed what the waiter staged");
        stage.set(1);
        lock.signalAll();
        lock.unlock();
        assertEquals(2, holds.get(10, TimeUnit.SECONDS), "the waiter holds it twice again");
        waiter.join(10_000);
        assertFalse(lock.isLocked());
    }

    @Test
    void shouldEndAnAwaitOnTimeoutOrInterruptWithTheLockHeld() throws Exception {
        final LinkLock lock = new LinkLock(new Counting());
        lock.lock();
        final long left = lock.awaitNanos(TimeUnit.MILLISECONDS.toNanos(5));
        assertTrue(left <= 0 || left < TimeUnit.MILLISECONDS.toNanos(5), "time passed: " + left);
        assertTrue(lock.isHeldByCurrentThread());
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> lock.awaitNanos(TimeUnit.SECONDS.toNanos(10)));
        assertTrue(lock.isHeldByCurrentThread(), "held again when the interrupt is thrown");
        assertEquals(1, lock.getHoldCount());
        lock.unlock();
        assertThrows(IllegalMonitorStateException.class, () -> lock.awaitNanos(1), "await without the lock");
        assertThrows(IllegalMonitorStateException.class, lock::signalAll, "signal without the lock");
    }

    @Test
    void shouldThrowInterruptedFromAWaitInterruptedWhileParked() throws Exception {
        final LinkLock lock = new LinkLock(new Counting());
        final CountDownLatch waiting = new CountDownLatch(1);
        final CompletableFuture<Boolean> heldWhenThrown = new CompletableFuture<>();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            lock.lock();
            try {
                waiting.countDown();
                lock.awaitNanos(TimeUnit.SECONDS.toNanos(30));
                heldWhenThrown.completeExceptionally(new AssertionError("the wait ended without the interrupt"));
            } catch (final InterruptedException e) {
                heldWhenThrown.complete(lock.isHeldByCurrentThread() && lock.getHoldCount() == 1);
            } finally {
                lock.unlock();
            }
        });
        waiting.await();
        lock.lock(); // the waiter let go: it is parked, or about to park
        lock.unlock();
        waiter.interrupt();
        assertTrue(heldWhenThrown.get(10, TimeUnit.SECONDS));
        waiter.join(10_000);
    }

    @Test
    void shouldStillHoldTheLockWhenTheFlushOfAWaitFails() throws Exception {
        // As Condition.awaitNanos: the caller holds the lock whenever the wait returns or throws, so its finally
        // (nic.lock.unlock()) neither raises IllegalMonitorStateException over the flush's failure nor lets go of a
        // lock another thread holds; and no signal goes to a thread that is not waiting.
        final Counting link = new Counting();
        final LinkLock lock = new LinkLock(link);
        lock.lock();
        lock.lock();
        link.fail = true;
        assertThrows(IllegalStateException.class, () -> lock.awaitNanos(TimeUnit.MILLISECONDS.toNanos(1)));
        assertTrue(lock.isHeldByCurrentThread(), "held when the flush's failure is thrown");
        assertEquals(2, lock.getHoldCount(), "with every hold it had");
        link.fail = false;
        lock.unlock();
        lock.unlock();
        assertFalse(lock.isLocked());
    }

    @Test
    void shouldLetALockerInSoonWhileOthersTryTheLockInALoop() throws Exception {
        // lock() parks in slices, and the threads of the data path try the lock in a loop (lockDataPath,
        // passForPoll) with free moments of nanoseconds: a control call (reg_mr, connect, a CM wait taking the lock
        // back) must get in while a busy-polling application keeps trying it. Without the starving waiter's turn,
        // a lock() here took 23 to 136 ms in the median on a loaded 2-CPU machine, and up to 0.7 s: 41 of them
        // could take half a minute.
        final LinkLock lock = new LinkLock(new Counting());
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread[] pollers = new Thread[2];
        for (int t = 0; t < pollers.length; t++) {
            pollers[t] = Thread.ofPlatform().daemon().start(() -> {
                while (!stop.get()) {
                    for (int attempt = 0; !lock.tryLock(); attempt++) {
                        if (attempt < 64) {
                            Thread.onSpinWait();
                        } else {
                            Thread.yield();
                        }
                    }
                    try {
                        for (int k = 0; k < 50; k++) {
                            Thread.onSpinWait(); // a short critical section (an idle engine pass)
                        }
                    } finally {
                        lock.unlock();
                    }
                }
            });
        }
        try {
            final int wanted = 41;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int rounds = 0;
            while (rounds < wanted && System.nanoTime() - deadline < 0) {
                lock.lock();
                rounds++;
                lock.unlock();
                Thread.sleep(1);
            }
            assertEquals(wanted, rounds, "locks taken in 10 s while two threads try the lock in a loop");
        } finally {
            stop.set(true);
            for (final Thread p : pollers) {
                p.join(10_000);
            }
        }
    }
}
