package io.jdet;

import io.jdet.testing.Tests;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The device and its event queues ({@code det_open}, {@code det_create_event}, {@code det_wait_on_event}). */
@Timeout(30)
class EventQueueTest {
    private Det det;

    @BeforeEach
    void open() {
        det = Det.open();
    }

    @AfterEach
    void close() {
        det.close();
    }

    @Test
    void shouldFailWithEagainWhenPollingAnEmptyQueue() {
        final EventQueue events = det.createEvent(null);
        assertErrno(Errno.EAGAIN, () -> events.waitOn(0, new EventRecord()));
    }

    @Test
    void shouldFailWithEtimeWhenNoEventArrivesInTime() {
        final EventQueue events = det.createEvent(null);
        assertErrno(Errno.ETIME, () -> events.waitOn(2_000, new EventRecord()));
    }

    @Test
    void aClosedQueueHandsOutNothingItHeld() {
        final EventQueue events = det.createEvent(null);
        events.generate("queued before the close");
        events.close();
        assertThrows(IllegalStateException.class, () -> events.waitOn(0, new EventRecord()));
        assertThrows(IllegalStateException.class, () -> events.waitOn(1_000, new EventRecord()));
    }

    @Test
    void anEventQueueOfAnotherDeviceIsRefused() {
        try (Det other = Det.open()) {
            final EventQueue theirs = other.createEvent(null);
            assertErrno(Errno.EINVAL, () -> det.openNic(io.jdet.testing.Tests.uniqueFabric("eq"), theirs));
            final Nic nic = det.openNic(io.jdet.testing.Tests.uniqueFabric("eq"), null);
            assertErrno(Errno.EINVAL, () -> nic.createCq(4, theirs));
            theirs.close(); // nobody of this device took it: no EBUSY
        }
    }

    @Test
    void shouldFailWithEinvalWhenTimeoutIsNegative() {
        final EventQueue events = det.createEvent(null);
        events.generate("queued");
        assertErrno(Errno.EINVAL, () -> events.waitOn(-1, new EventRecord()));
        assertEquals(1, events.pending(), "a refused wait takes nothing");
    }

    @Test
    void shouldReturnUserEventsInOrderWhenGenerated() {
        final EventQueue events = det.createEvent(null);
        for (int i = 0; i < 40; i++) { // more than the initial ring holds
            events.generate(i);
        }
        assertEquals(40, events.pending());
        final EventRecord record = new EventRecord();
        for (int i = 0; i < 40; i++) {
            events.waitOn(0, record);
            assertEquals(EventCode.USER_GENERATED, record.code());
            assertEquals(ResourceType.UNKNOWN, record.type());
            assertFalse(record.remote());
            assertEquals(i, record.handle());
        }
        assertEquals(0, events.pending());
    }

    @Test
    void shouldWakeBlockedWaiterWhenAnotherThreadGenerates() throws Exception {
        final EventQueue events = det.createEvent(null);
        final EventRecord record = new EventRecord();
        final Thread waiter = Thread.ofPlatform().start(() -> events.waitOn(EventQueue.NO_TIMEOUT, record));
        awaitParked(waiter);
        events.generate("wake up");
        waiter.join(Tests.TIMEOUT.toMillis());
        assertFalse(waiter.isAlive(), "the waiter was not woken");
        assertEquals(EventCode.USER_GENERATED, record.code());
        assertEquals("wake up", record.handle());
    }

    @Test
    void shouldWakeTimedWaiterWhenAnotherThreadGenerates() throws Exception {
        final EventQueue events = det.createEvent(null);
        final EventRecord record = new EventRecord();
        final Thread waiter = Thread.ofPlatform().start(
            () -> events.waitOn(TimeUnit.SECONDS.toMicros(20), record));
        awaitParked(waiter);
        events.generate(7);
        waiter.join(Tests.TIMEOUT.toMillis());
        assertFalse(waiter.isAlive(), "the waiter was not woken");
        assertEquals(7, record.handle());
    }

    @Test
    void shouldRunHandlerOnWaitingThreadWhenEventTaken() throws Exception {
        final AtomicReference<Thread> ranOn = new AtomicReference<>();
        final AtomicReference<Object> handled = new AtomicReference<>();
        final AtomicReference<EventQueue> queueSeen = new AtomicReference<>();
        final EventQueue events = det.createEvent((queue, record) -> {
            ranOn.set(Thread.currentThread());
            handled.set(record.handle());
            queueSeen.set(queue);
        });
        final CompletableFuture<Thread> waiting = new CompletableFuture<>();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            waiting.complete(Thread.currentThread());
            events.waitOn(EventQueue.NO_TIMEOUT, new EventRecord());
        });
        awaitParked(waiter);
        events.generate("handled");
        waiter.join(Tests.TIMEOUT.toMillis());
        assertFalse(waiter.isAlive());
        assertSame(waiter, ranOn.get(), "the handler must run on the waiting thread");
        assertEquals("handled", handled.get());
        assertSame(events, queueSeen.get());
    }

    @Test
    void shouldFailWithEintrWhenWaiterIsInterrupted() throws Exception {
        final EventQueue events = det.createEvent(null);
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        final AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                events.waitOn(EventQueue.NO_TIMEOUT, new EventRecord());
            } catch (final RuntimeException e) {
                thrown.set(e);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        awaitParked(waiter);
        waiter.interrupt();
        waiter.join(Tests.TIMEOUT.toMillis());
        assertFalse(waiter.isAlive());
        final DetException e = assertInstanceOfDet(thrown.get());
        assertEquals(Errno.EINTR, e.errno());
        assertTrue(stillInterrupted.get(), "the interrupt status is kept");
    }

    @Test
    void shouldWakeWaitersWithClosedErrorWhenQueueIsClosed() throws Exception {
        final EventQueue events = det.createEvent(null);
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                events.waitOn(EventQueue.NO_TIMEOUT, new EventRecord());
            } catch (final RuntimeException e) {
                thrown.set(e);
            }
        });
        awaitParked(waiter);
        events.close();
        waiter.join(Tests.TIMEOUT.toMillis());
        assertFalse(waiter.isAlive());
        assertInstanceOf(IllegalStateException.class, thrown.get(), "a closed queue is no empty one (EAGAIN)");
        assertEquals("event queue closed", thrown.get().getMessage());
        assertThrows(IllegalStateException.class, () -> events.generate("late"));
    }

    @Test
    void shouldRefuseCloseWithEbusyWhenNicReportsToIt() {
        final EventQueue events = det.createEvent(null);
        final Nic nic = det.openNic(Tests.uniqueFabric("eq"), events);
        assertErrno(Errno.EBUSY, events::close);
        nic.close();
        events.close();
        assertEquals("event queue closed", assertThrows(IllegalStateException.class,
            () -> events.waitOn(0, new EventRecord())).getMessage());
    }

    @Test
    void shouldRefuseCloseWithEbusyWhenCqReportsToIt() {
        final EventQueue events = det.createEvent(null);
        final Nic nic = det.openNic(Tests.uniqueFabric("eq"), null);
        final CompletionQueue cq = nic.createCq(1, events);
        assertErrno(Errno.EBUSY, events::close);
        cq.close();
        events.close();
        nic.close();
    }

    @Test
    void shouldRefuseClosedEventQueueWhenOpeningNicOrCq() {
        final EventQueue events = det.createEvent(null);
        events.close();
        assertThrows(IllegalStateException.class, () -> det.openNic(Tests.uniqueFabric("eq"), events));
        final Nic nic = det.openNic(Tests.uniqueFabric("eq"), null);
        assertThrows(IllegalStateException.class, () -> nic.createCq(1, events));
        nic.close();
    }

    @Test
    void shouldCloseEverythingWhenDeviceCloses() {
        final EventQueue events = det.createEvent(null);
        final Nic nic = det.openNic(Tests.uniqueFabric("eq"), events);
        final ProtectionDomain pd = nic.allocPd();
        final CompletionQueue cq = nic.createCq(1, events);
        final QueuePair qp = pd.createQp(QpCreate.of(cq, 4, 1));
        det.close();
        det.close(); // twice does nothing
        assertThrows(IllegalStateException.class, qp::query);
        assertThrows(IllegalStateException.class, () -> cq.poll(new WorkCompletion[1]));
        assertThrows(IllegalStateException.class, () -> det.createEvent(null));
        assertThrows(IllegalStateException.class, () -> det.openNic("loop", null));
        assertThrows(IllegalStateException.class, () -> events.waitOn(0, new EventRecord()));
    }

    @Test
    void shouldFailWithEinvalWhenConfigurationIsOutOfRange() {
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().windowFrames(2)));
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().ackTimeoutMs(1)));
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().loopRingFrames(100)));
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().minRtoUs(500).maxRtoUs(100)));
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().maxRegisteredBytes(0)));
        assertErrno(Errno.EINVAL, () -> new FaultPlan(1.5, 0, 0, 0, 1));
        assertErrno(Errno.EINVAL, () -> new FaultPlan(0, Double.NaN, 0, 0, 1));
    }

    @Test
    void shouldReportConfigurationWhenQueried() {
        try (Det tuned = Det.open(new Configuration().ackTimeoutMs(1234).windowFrames(16)
            .maxRegisteredBytes(1 << 20))) {
            final DeviceAttributes attributes = tuned.query();
            assertEquals(1234, attributes.ackTimeoutMs());
            assertEquals(16, attributes.maxWindow());
            assertEquals(1 << 20, attributes.maxMemoryBytes());
            assertEquals(0, attributes.registeredBytes());
            assertEquals(16, tuned.configuration().windowFrames());
        }
    }

    /** Waits until a thread is parked: a waiter that spun would stay RUNNABLE and fail this. */
    private static void awaitParked(final Thread thread) {
        Tests.await(thread.getName() + " blocks without spinning", () -> {
            final Thread.State state = thread.getState();
            return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
        });
    }

    private static DetException assertInstanceOfDet(final Throwable thrown) {
        assertTrue(thrown instanceof DetException, "expected a DetException, got " + thrown);
        return (DetException) thrown;
    }
}
