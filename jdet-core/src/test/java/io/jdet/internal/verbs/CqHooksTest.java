package io.jdet.internal.verbs;

import io.jdet.CompletionQueue;
import io.jdet.CqArm;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.Nic;
import io.jdet.ResourceType;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a completion queue offers the collective layer: poll hooks run by every poll, in the order added, until
 * removed; completions of collective work requests (no queue pair), handed out by the poll that ran the hook
 * that made them; {@code drain}, which takes completions without running hooks; and group events on the NIC's
 * event queue.
 */
@Timeout(30)
class CqHooksTest {

    private static WorkCompletion[] holders(final int n) {
        final WorkCompletion[] wc = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            wc[i] = new WorkCompletion();
        }
        return wc;
    }

    /** Another thread must be able to use the NIC (take its engine lock) right after a call returned. */
    private static void assertUsableFromAnotherThread(final Nic nic) throws Exception {
        CompletableFuture.supplyAsync(nic::allocPd).get(Tests.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).close();
    }

    @Test
    void shouldRunEveryHookOnEveryPollInOrderUntilRemoved() throws Exception {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CqImpl cq = (CqImpl) nic.createCq(8, null);
            final List<String> runs = new ArrayList<>();
            final PollHook a = after(() -> runs.add("a"));
            final PollHook b = after(() -> runs.add("b"));
            final PollHook c = after(() -> runs.add("c"));
            final WorkCompletion[] wc = holders(1);
            assertEquals(0, cq.poll(wc));
            assertEquals(List.of(), runs, "no hook, nothing run");
            cq.addPollHook(a);
            cq.addPollHook(b);
            cq.addPollHook(c);
            assertEquals(0, cq.poll(wc));
            assertEquals(List.of("a", "b", "c"), runs);
            assertUsableFromAnotherThread(nic);
            runs.clear();
            cq.removePollHook(after(() -> runs.add("x"))); // not added: nothing changes
            cq.poll(wc);
            assertEquals(List.of("a", "b", "c"), runs);
            runs.clear();
            cq.removePollHook(b);
            cq.poll(wc);
            assertEquals(List.of("a", "c"), runs, "removing the middle hook keeps the others, in order");
            runs.clear();
            cq.removePollHook(a);
            cq.poll(wc);
            assertEquals(List.of("c"), runs, "removing the first hook keeps the last");
            runs.clear();
            cq.addPollHook(a);
            cq.removePollHook(a);
            cq.poll(wc);
            assertEquals(List.of("c"), runs, "removing the last hook keeps the first");
            runs.clear();
            cq.removePollHook(c);
            cq.poll(wc);
            assertEquals(List.of(), runs);
        }
    }

    /** A hook that runs after the poll's engine pass only. */
    private static PollHook after(final Runnable work) {
        return new PollHook() {
            @Override
            public void beforePass() {
            }

            @Override
            public void afterPass() {
                work.run();
            }
        };
    }

    @Test
    void shouldRunEveryHookBeforeThePassThenEveryHookAfterIt() {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CqImpl cq = (CqImpl) nic.createCq(8, null);
            final List<String> runs = new ArrayList<>();
            for (final String name : List.of("a", "b")) {
                cq.addPollHook(new PollHook() {
                    @Override
                    public void beforePass() {
                        runs.add(name + " before");
                    }

                    @Override
                    public void afterPass() {
                        runs.add(name + " after");
                    }
                });
            }
            cq.poll(holders(1));
            assertEquals(List.of("a before", "b before", "a after", "b after"), runs);
        }
    }

    @Test
    void shouldHandOutACollectiveCompletionInThePollWhoseHookMadeIt() throws Exception {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CqImpl cq = (CqImpl) nic.createCq(8, null);
            final boolean[] accepted = new boolean[1];
            final PollHook step = after(() -> accepted[0] = cq.completeCollective(42, WcStatus.SUCCESS, WcType.BARRIER, 7));
            cq.addPollHook(step);
            final WorkCompletion[] wc = holders(2);
            assertEquals(1, cq.poll(wc), "the poll takes what its hooks completed");
            assertTrue(accepted[0]);
            assertEquals(42, wc[0].id());
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            assertEquals(WcType.BARRIER, wc[0].type());
            assertEquals(7, wc[0].length());
            assertEquals(0, wc[0].flags());
            assertUsableFromAnotherThread(nic);
            cq.removePollHook(step);
            assertEquals(0, cq.poll(wc));
        }
    }

    @Test
    void shouldDrainWithoutRunningHooksAndRefuseOnceDestroyed() throws Exception {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CqImpl cq = (CqImpl) nic.createCq(8, null);
            final int[] runs = new int[1];
            final PollHook hook = after(() -> runs[0]++);
            cq.addPollHook(hook);
            assertTrue(cq.completeCollective(1, WcStatus.SUCCESS, WcType.BCAST, 16));
            assertTrue(cq.completeCollective(2, WcStatus.REMOTE_OP_ERR, WcType.BCAST, 0));
            assertTrue(cq.completeCollective(3, WcStatus.SUCCESS, WcType.BCAST, 32));
            final WorkCompletion[] two = holders(2);
            assertEquals(2, cq.drain(two), "as many as the array holds");
            assertEquals(0, runs[0], "drain runs no hook");
            assertEquals(1, two[0].id());
            assertEquals(2, two[1].id());
            assertEquals(WcStatus.REMOTE_OP_ERR, two[1].status());
            assertEquals(1, cq.drain(two));
            assertEquals(3, two[0].id());
            assertEquals(32, two[0].length());
            assertEquals(0, cq.drain(two));
            assertUsableFromAnotherThread(nic);
            assertEquals(Errno.EBUSY, assertThrows(DetException.class, cq::close).errno(),
                "a group's queue cannot be destroyed under it");
            cq.removePollHook(hook);
            cq.close();
            assertThrows(IllegalStateException.class, () -> cq.drain(two));
            assertThrows(IllegalStateException.class, () -> cq.poll(two));
            assertEquals(0, runs[0], "a destroyed queue's poll runs no hook");
            assertUsableFromAnotherThread(nic); // the refusals released the lock too
            assertFalse(cq.completeCollective(4, WcStatus.SUCCESS, WcType.BCAST, 0),
                "a destroyed queue takes no completion");
        }
    }

    @Test
    void shouldLoseACollectiveCompletionOnceTheQueueOverflowed() {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CqImpl cq = (CqImpl) nic.createCq(1, null);
            final int size = cq.query().size();
            for (int i = 0; i < size; i++) {
                assertTrue(cq.completeCollective(i, WcStatus.SUCCESS, WcType.BARRIER, 0));
            }
            assertFalse(cq.completeCollective(size, WcStatus.SUCCESS, WcType.BARRIER, 0), "overrun");
            assertEquals(1L, nic.counters().get("cq.overruns"));
            assertEquals(io.jdet.CqState.ERROR, cq.query().state());
            assertFalse(cq.completeCollective(size + 1, WcStatus.SUCCESS, WcType.BARRIER, 0), "in error");
            assertEquals(1L, nic.counters().get("cq.overruns"), "an overrun is counted once");
        }
    }

    @Test
    void shouldRaiseAGroupEventOnTheNicsEventQueue() {
        try (Det det = Det.open()) {
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), events);
            final CqImpl cq = (CqImpl) nic.createCq(8, null);
            final Object group = new Object();
            cq.raiseCollectiveEvent(EventCode.CO_ERROR.code(), group);
            final List<EventRecord> seen = Tests.awaitEvent(events, r -> r.handle() == group);
            final EventRecord last = seen.get(seen.size() - 1);
            assertEquals(ResourceType.CO, last.type());
            assertSame(group, last.handle());
            assertEquals(EventCode.CO_ERROR, last.code());
        }
    }

    @Test
    void shouldTakeEveryCompletionInOrderAcrossTheEndOfTheRing() {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CompletionQueue cq = nic.createCq(1, null);
            final CqImpl impl = (CqImpl) cq;
            final int size = cq.query().size();
            final WorkCompletion[] wc = holders(size);
            long next = 0;
            long expected = 0;
            // Three laps of the ring in uneven bites, so that the head and the tail wrap at different times.
            for (int round = 0; round < 3 * size / 37 + 1; round++) {
                for (int i = 0; i < 37; i++) {
                    assertTrue(impl.completeCollective(next++, WcStatus.SUCCESS, WcType.BARRIER, 0));
                }
                int taken = 0;
                while (taken < 37) {
                    final int n = cq.poll(wc, 23);
                    assertTrue(n > 0, "completions missing at round " + round);
                    for (int k = 0; k < n; k++) {
                        assertEquals(expected++, wc[k].id());
                    }
                    taken += n;
                }
            }
            assertEquals(next, expected);
            assertEquals(0, cq.query().depth());
        }
    }

    @Test
    void shouldFireOnlyAnArmThatIsMet() {
        try (Det det = Det.open()) {
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), events);
            final CqImpl cq = (CqImpl) nic.createCq(8, events);
            cq.arm(CqArm.THRESHOLD, 3);
            assertTrue(cq.completeCollective(1, WcStatus.REMOTE_OP_ERR, WcType.BARRIER, 0));
            assertEquals(0, events.pending(), "an error completion does not meet a threshold of 3");
            cq.arm(CqArm.NEXT_SOLICITED, 0);
            assertTrue(cq.completeCollective(2, WcStatus.SUCCESS, WcType.BARRIER, 0));
            assertEquals(0, events.pending(), "an unsolicited success meets neither arm");
            assertEquals(CqArm.THRESHOLD | CqArm.NEXT_SOLICITED, cq.query().arm());
            assertTrue(cq.completeCollective(3, WcStatus.REMOTE_OP_ERR, WcType.BARRIER, 0));
            assertEquals(1, events.pending(), "an error completion meets NEXT_SOLICITED: one event");
            assertEquals(0, cq.query().arm(), "firing disarms");
        }
    }

    @Test
    void shouldHandEveryCompletionOnceAndInOrderToAPollerOfAnotherThreadWhileResized() throws Exception {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CompletionQueue cq = nic.createCq(1, null);
            final CqImpl impl = (CqImpl) cq;
            final long total = 200_000;
            final java.util.concurrent.atomic.AtomicLong polled = new java.util.concurrent.atomic.AtomicLong();
            // The poller checks order; it takes without the engine lock while the appender (this thread) stores
            // without the ring lock, into slots the poller freed.
            final CompletableFuture<Long> poller = CompletableFuture.supplyAsync(() -> {
                final WorkCompletion[] wc = holders(7);
                long expected = 0;
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(25);
                while (expected < total && System.nanoTime() < deadline) {
                    final int n = cq.poll(wc);
                    for (int k = 0; k < n; k++) {
                        if (wc[k].id() != expected) {
                            throw new AssertionError("completion " + wc[k].id() + " where " + expected + " was due");
                        }
                        expected++;
                    }
                    polled.set(expected);
                }
                return expected;
            });
            long next = 0;
            long resizedAt = -1;
            int resizes = 0;
            int size = cq.query().size();
            while (next < total && !poller.isDone()) { // a poller that failed ends the test with its failure
                if (next % 5000 == 0 && resizedAt != next) {
                    // Move what waits into a ring of another size (each entry keeps its number) while polled.
                    resizedAt = next;
                    try {
                        cq.resize(size == 102 ? 204 : 102);
                        size = cq.query().size();
                        resizes++;
                    } catch (final DetException busy) {
                        assertEquals(Errno.EBUSY, busy.errno(), "only a ring too small for what waits refuses");
                    }
                }
                if (next - polled.get() < size) {
                    assertTrue(impl.completeCollective(next++, WcStatus.SUCCESS, WcType.BARRIER, 0), "lost " + next);
                } else {
                    Thread.onSpinWait();
                }
            }
            assertEquals(total, poller.get(30, TimeUnit.SECONDS));
            assertEquals(0L, nic.counters().get("cq.overruns"));
            assertTrue(resizes > 0, "the ring was never resized");
            assertEquals(0, cq.query().depth());
        }
    }

    /**
     * A work queue's slot is free to the engine only once the completion that held it left the completion queue: a
     * completion queue as deep as its one work queue never overruns, however the poller's batch and the engine's
     * appends interleave. (A poll that freed the slot before it published what it took let the engine post into it
     * and append while the ring still counted the completion: an overrun, and the queue in ERROR.)
     */
    @Test
    void shouldNotOverrunAQueueAsDeepAsItsWorkQueueWhileAPollerTakesABatch() throws Exception {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("hooks"), null);
            final CompletionQueue cq = nic.createCq(CqImpl.ENTRIES_PER_PAGE, null);
            final CqImpl impl = (CqImpl) cq;
            final NicImpl nicImpl = impl.nic;
            final QpImpl qp = (QpImpl) nic.allocPd().createQp(
                new io.jdet.QpCreate(cq, cq, CqImpl.ENTRIES_PER_PAGE, 0, 1, 1, 0, 0));
            final io.jdet.internal.protocol.WorkRing<?> sq = qp.requester.queue;
            final long total = 300_000;
            final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            final CompletableFuture<Long> poller = CompletableFuture.supplyAsync(() -> {
                final WorkCompletion[] wc = holders(CqImpl.ENTRIES_PER_PAGE);
                long taken = 0;
                while (!stop.get()) {
                    taken += cq.poll(wc);
                }
                return taken;
            });
            long appended = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            try {
                while (appended < total && System.nanoTime() < deadline) {
                    nicImpl.lock.lock();
                    try {
                        if (!sq.full()) { // as a post: a free slot of the send queue, then its completion
                            sq.tail++;
                            assertTrue(impl.append(appended, WcStatus.SUCCESS, WcType.SEND, 0, 0, 0, 0, 1, qp, false),
                                "completion " + appended + " lost: the queue overran with " + sq.depth()
                                    + " send work requests outstanding");
                            appended++;
                        }
                    } finally {
                        nicImpl.lock.unlock();
                    }
                }
            } finally {
                stop.set(true);
                poller.get(10, TimeUnit.SECONDS);
                nicImpl.lock.lock();
                try {
                    sq.clear(); // the slots were never posted: nothing for the queue pair's destroy to flush
                } finally {
                    nicImpl.lock.unlock();
                }
            }
            assertEquals(total, appended);
            assertEquals(0L, nic.counters().get("cq.overruns"));
        }
    }
}
