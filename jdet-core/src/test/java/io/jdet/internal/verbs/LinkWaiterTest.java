package io.jdet.internal.verbs;

import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.CqArm;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.internal.link.ForwardingLink;
import io.jdet.internal.link.FrameHandler;
import io.jdet.internal.link.Links;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 7, "a blocking wait costs one wake-up": a thread blocked on an event queue sleeps on the link of the NIC
 * that reports there and runs its engine itself, so the frame that completes its work wakes it, not the progress
 * thread; posts from other threads wake it through the link; leaving (timeout, interrupt, the NIC closing) hands
 * the link back to the progress thread. Over each link kind: the in-process fabric (a parked thread), UDP (ppoll on
 * the socket and an eventfd) and shared memory (a futex).
 */
@Timeout(60)
class LinkWaiterTest {
    private static final long WAIT_US = Tests.TIMEOUT.toNanos() / 1000;

    /** Counts the frames B's progress thread takes off the link. */
    private static final class RecordingLink extends ForwardingLink {
        volatile Thread progress;
        final AtomicLong byProgress = new AtomicLong();

        RecordingLink(final String name, final Configuration configuration) {
            super(Links.open(name, configuration));
        }

        @Override
        public int receive(final FrameHandler handler, final int max) {
            final int n = inner.receive(handler, max);
            if (n > 0 && Thread.currentThread() == progress) {
                byProgress.addAndGet(n);
            }
            return n;
        }
    }

    /** A connected pair, A opened as usual, B on a {@link RecordingLink}. */
    private static final class Ends implements AutoCloseable {
        final Det det = Det.open(new Configuration());
        final Arena arena = Arena.ofShared();
        final EventQueue eventsA;
        final EventQueue eventsB;
        final Nic nicA;
        final NicImpl nicB;
        final RecordingLink link;
        final CompletionQueue cqA;
        final CompletionQueue cqB;
        final QueuePair qpA;
        final QueuePair qpB;
        final MemoryRegion mrA;
        final MemoryRegion mrB;

        Ends(final String kind) {
            final String name = switch (kind) {
                case "loop" -> Tests.uniqueFabric("waiter");
                case "shm" -> Tests.uniqueShmGroup("waiter");
                default -> "udp:127.0.0.1";
            };
            eventsA = det.createEvent(null);
            eventsB = det.createEvent(null);
            nicA = det.openNic(name, eventsA);
            final DeviceImpl device = (DeviceImpl) det;
            link = new RecordingLink(name, device.configuration);
            synchronized (device) {
                nicB = device.attach("b", link, (EventQueueImpl) eventsB);
            }
            link.progress = nicB.progressThread();
            cqA = nicA.createCq(64, eventsA);
            cqB = nicB.createCq(64, eventsB);
            qpA = nicA.allocPd().createQp(new QpCreate(cqA, cqA, 64, 64, 1, 1, 1, 1));
            qpB = nicB.allocPd().createQp(new QpCreate(cqB, cqB, 64, 64, 1, 1, 1, 1));
            mrA = qpA.query().pd().regMr(arena.allocate(64, 64), Loopback.ALL_RIGHTS);
            mrB = qpB.query().pd().regMr(arena.allocate(64, 64), Loopback.ALL_RIGHTS);
            qpA.modify(new QpModify().connect(nicB.address(), qpB.number(), qpB.query().localPsn()));
            qpB.modify(new QpModify().connect(nicA.address(), qpA.number(), qpA.query().localPsn()));
        }

        DataSegment[] sgeA() {
            return new DataSegment[] {new DataSegment().set(mrA, 0, 8)};
        }

        DataSegment[] sgeB() {
            return new DataSegment[] {new DataSegment().set(mrB, 0, 8)};
        }

        /** Waits until a thread sleeps on B's link and B's progress thread has stepped off it for that thread. */
        void awaitSleepingOnLink(final Thread waiter) {
            Tests.await(waiter.getName() + " sleeps on B's link, the progress thread off it",
                () -> nicB.linkWaiter() == waiter && LockSupport.getBlocker(nicB.progressThread()) == waiter);
        }

        @Override
        public void close() {
            try {
                Tests.assertEngineHealthy(nicA, nicB);
            } finally {
                det.close();
                arena.close();
            }
        }
    }

    /** Runs a body on a new thread, keeping what it throws. */
    private static Thread start(final String name, final AtomicReference<Throwable> failure, final Runnable body) {
        return Thread.ofPlatform().name(name).start(() -> {
            try {
                body.run();
            } catch (final Throwable t) {
                failure.set(t);
            }
        });
    }

    private static void join(final Thread thread, final AtomicReference<Throwable> failure) throws Throwable {
        thread.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(thread.isAlive(), thread.getName() + " did not finish");
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loop", "udp", "shm"})
    void shouldWakeTheWaiterItselfWhenEachFrameArrives(final String kind) throws Throwable {
        final int rounds = 60;
        try (Ends e = new Ends(kind)) {
            final AtomicInteger started = new AtomicInteger();
            final AtomicInteger done = new AtomicInteger();
            final long[] progressFramesAtEvent = new long[rounds];
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread waiter = start("waiter-" + kind, failure, () -> {
                final WorkCompletion[] wcs = {new WorkCompletion()};
                final EventRecord record = new EventRecord();
                for (int i = 0; i < rounds; i++) {
                    e.qpB.recv(i, e.sgeB(), 1);
                    e.cqB.arm(CqArm.NEXT_SIGNALED, 0);
                    started.set(i + 1);
                    int n = e.cqB.poll(wcs);
                    while (n == 0) {
                        e.eventsB.waitOn(WAIT_US, record); // ETIME fails the test: a lost wake-up
                        progressFramesAtEvent[i] = e.link.byProgress.get();
                        assertEquals(EventCode.CQ_COMPLETION, record.code());
                        n = e.cqB.poll(wcs);
                        if (n == 0) {
                            e.cqB.arm(CqArm.NEXT_SIGNALED, 0);
                            n = e.cqB.poll(wcs);
                        }
                    }
                    assertEquals(WcStatus.SUCCESS, wcs[0].status());
                    assertEquals(i, wcs[0].id());
                    assertEquals(i, e.mrB.segment().get(ValueLayout.JAVA_LONG, 0));
                    done.set(i + 1);
                }
            });
            final MemorySegment out = e.mrA.segment();
            for (int i = 0; i < rounds && failure.get() == null; i++) {
                final int round = i;
                Tests.await("the waiter started round " + i, () -> started.get() == round + 1 || failure.get() != null);
                e.awaitSleepingOnLink(waiter);
                final long before = e.link.byProgress.get();
                out.set(ValueLayout.JAVA_LONG, 0, i);
                e.qpA.send(i, e.sgeA(), 1, 0, 0);
                Tests.expectSuccess(e.cqA, 1);
                Tests.await("the waiter finished round " + i, () -> done.get() == round + 1 || failure.get() != null);
                assertEquals(before, progressFramesAtEvent[i],
                    "round " + i + ": B's progress thread took a frame while the waiter slept on the link");
            }
            join(waiter, failure);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loop", "udp", "shm"})
    void shouldWakeTheLinkWaiterWhenAnotherThreadPosts(final String kind) throws Throwable {
        final int rounds = 200;
        try (Ends e = new Ends(kind)) {
            final AtomicInteger taken = new AtomicInteger();
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread waiter = start("waiter-" + kind, failure, () -> {
                final EventRecord record = new EventRecord();
                for (int i = 0; i < rounds; i++) {
                    e.eventsB.waitOn(WAIT_US, record); // ETIME fails the test: a lost wake-up
                    assertEquals(EventCode.USER_GENERATED, record.code());
                    assertEquals(i, record.handle());
                    taken.set(i + 1);
                }
            });
            for (int i = 0; i < rounds && failure.get() == null; i++) {
                final int round = i;
                if (i % 2 == 0) {
                    e.awaitSleepingOnLink(waiter); // asleep for sure; odd rounds race the waiter's way in
                }
                e.eventsB.generate(i);
                Tests.await("event " + i + " taken", () -> taken.get() == round + 1 || failure.get() != null);
            }
            join(waiter, failure);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loop", "udp", "shm"})
    void shouldHandTheLinkBackToTheProgressThreadWhenTheWaiterLeaves(final String kind) throws Throwable {
        try (Ends e = new Ends(kind)) {
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final AtomicReference<Errno> errno = new AtomicReference<>();
            final Thread waiter = start("waiter-" + kind, failure, () -> {
                try {
                    e.eventsB.waitOn(TimeUnit.MILLISECONDS.toMicros(300), new EventRecord());
                } catch (final DetException timedOut) {
                    errno.set(timedOut.errno());
                }
            });
            e.awaitSleepingOnLink(waiter);
            join(waiter, failure);
            assertEquals(Errno.ETIME, errno.get());
            assertNull(e.nicB.linkWaiter(), "the waiter left the link");
            // Nobody waits on B or polls it now: its progress thread must take the frame and raise the event.
            e.qpB.recv(1, e.sgeB(), 1);
            e.cqB.arm(CqArm.NEXT_SIGNALED, 0);
            final long before = e.link.byProgress.get();
            e.qpA.send(1, e.sgeA(), 1, 0, 0);
            Tests.expectSuccess(e.cqA, 1);
            Tests.await("B's progress thread raised the completion event", () -> e.eventsB.pending() == 1);
            assertTrue(e.link.byProgress.get() > before, "B's progress thread took the frame");
            assertEquals(1, Tests.expectSuccess(e.cqB, 1).get(0).id());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loop", "udp", "shm"})
    void shouldLeaveTheLinkAndWaitOnWhenTheNicCloses(final String kind) throws Throwable {
        try (Ends e = new Ends(kind)) {
            final EventQueue events = e.det.createEvent(null);
            final String name = "loop".equals(kind) ? Tests.uniqueFabric("closing") : e.nicA.address().startsWith(
                "udp") ? "udp:127.0.0.1" : Tests.uniqueShmGroup("closing");
            final NicImpl nic = (NicImpl) e.det.openNic(name, events);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final EventRecord record = new EventRecord();
            final Thread waiter = start("waiter-" + kind, failure, () -> events.waitOn(EventQueue.NO_TIMEOUT, record));
            Tests.await("the waiter sleeps on the NIC's link", () -> nic.linkWaiter() == waiter);
            nic.close(); // waits for the waiter to leave the link before it closes it
            assertNull(nic.linkWaiter());
            assertTrue(waiter.isAlive(), "the waiter still waits, now on the queue itself");
            events.generate("after");
            join(waiter, failure);
            assertEquals("after", record.handle());
            events.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loop", "udp", "shm"})
    void shouldFailWithEintrWhenTheLinkWaiterIsInterrupted(final String kind) throws Throwable {
        try (Ends e = new Ends(kind)) {
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final AtomicReference<Errno> errno = new AtomicReference<>();
            final AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
            final Thread waiter = start("waiter-" + kind, failure, () -> {
                try {
                    e.eventsB.waitOn(EventQueue.NO_TIMEOUT, new EventRecord());
                } catch (final DetException interrupted) {
                    errno.set(interrupted.errno());
                    stillInterrupted.set(Thread.currentThread().isInterrupted());
                }
            });
            e.awaitSleepingOnLink(waiter);
            waiter.interrupt();
            join(waiter, failure);
            assertEquals(Errno.EINTR, errno.get());
            assertTrue(stillInterrupted.get(), "the interrupt status is kept");
            assertNull(e.nicB.linkWaiter());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loop", "udp"})
    void shouldServeASecondWaiterOfTheQueueThroughTheProgressThread(final String kind) throws Throwable {
        try (Ends e = new Ends(kind)) {
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final EventRecord first = new EventRecord();
            final EventRecord second = new EventRecord();
            final Thread one = start("one-" + kind, failure, () -> e.eventsB.waitOn(WAIT_US, first));
            e.awaitSleepingOnLink(one);
            final Thread two = start("two-" + kind, failure, () -> e.eventsB.waitOn(WAIT_US, second));
            Tests.await("the second waiter parks on the queue", () -> two.getState() == Thread.State.TIMED_WAITING);
            assertSame(one, e.nicB.linkWaiter(), "one waiter at a time sleeps on the link");
            e.eventsB.generate("x");
            e.eventsB.generate("y");
            join(one, failure);
            join(two, failure);
            assertEquals(java.util.Set.of("x", "y"), java.util.Set.of(first.handle(), second.handle()));
        }
    }
}
