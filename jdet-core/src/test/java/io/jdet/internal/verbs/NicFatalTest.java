package io.jdet.internal.verbs;

import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.MemoryRegion;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.QueuePair;
import io.jdet.ResourceType;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.internal.link.FabricLink;
import io.jdet.internal.link.ForwardingLink;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12 item 5: the progress thread used to catch only a RuntimeException inside the engine lock, so an Error, or
 * an exception from the link's await, ended it silently with work outstanding and no event. Now its failure makes
 * the NIC fatal: a NIC_FATAL event, every queue pair in ERROR with its work requests FLUSHED, the peer told, and
 * EIO for new posts, modifies and connection manager calls (blocked ones included).
 */
@Timeout(60)
class NicFatalTest {

    /** A fabric link whose await throws, once, what the test arms it with. */
    private static final class FailingLink extends ForwardingLink {
        private volatile Throwable armed;

        FailingLink(final String fabric) {
            super(new FabricLink(fabric, 65_000, 256));
        }

        void arm(final Throwable failure) {
            armed = failure;
            inner.wakeup();
        }

        @Override
        public void await(final long timeoutNs) {
            final Throwable failure = armed;
            if (failure != null) {
                armed = null;
                if (failure instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) failure;
            }
            inner.await(timeoutNs);
        }
    }

    /** A NIC of the device on a failing link, opened as {@link DeviceImpl#openNic} opens one. */
    private static NicImpl openNic(final Det det, final FailingLink link, final EventQueue events) {
        final DeviceImpl device = (DeviceImpl) det;
        final EventQueueImpl eq = (EventQueueImpl) events;
        final NicImpl nic;
        synchronized (device) {
            nic = new NicImpl(device, "failing", link, eq);
            eq.users++;
            device.nics.add(nic);
        }
        nic.start();
        return nic;
    }

    /** A victim NIC on a failing link, a queue pair on it connected to a hostile peer that never answers. */
    private static final class Victim implements AutoCloseable {
        final Det det = Det.open(new Configuration());
        final Arena arena = Arena.ofShared();
        final FailingLink link;
        final EventQueue events;
        final NicImpl nic;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion mr;
        final HostilePeer peer;

        Victim() {
            final String fabric = Tests.uniqueFabric("fatal");
            link = new FailingLink(fabric.substring("loop:".length()));
            events = det.createEvent(null);
            nic = openNic(det, link, events);
            pd = nic.allocPd();
            cq = nic.createCq(16, null);
            qp = pd.createQp(QpCreate.of(cq, 8, 4));
            mr = pd.regMr(arena.allocate(64, 8), Loopback.ALL_RIGHTS);
            peer = HostilePeer.on(nic);
        }

        @Override
        public void close() {
            try {
                peer.close();
                det.close();
            } finally {
                arena.close();
            }
        }
    }

    private static void assertEio(final String what, final Runnable call) {
        Tests.assertErrno(Errno.EIO, call::run, what);
    }

    private static void expectFatal(final Throwable failure) {
        try (Victim v = new Victim()) {
            v.peer.connect(v.qp);
            v.qp.recv(1, Loopback.sge(v.mr, 0, 8), 1);
            v.qp.send(2, Loopback.sge(v.mr, 0, 8), 1, 0, 0);
            v.peer.expect(Frame.OP_SEND); // in flight: the peer never acknowledges it
            v.link.arm(failure);

            final List<EventRecord> events = Tests.awaitEvent(v.events, e -> e.code() == EventCode.NIC_FATAL);
            final EventRecord fatal = events.getLast();
            assertEquals(ResourceType.NIC, fatal.type());
            assertSame(v.nic, fatal.handle());
            assertEquals(1, events.size(), "one event for the NIC, none per queue pair: " + events);
            Tests.await("the progress thread ended", () -> !v.nic.progressThread().isAlive());

            final List<WorkCompletion> flushed = Tests.pollUntil(v.cq, 2);
            for (final WorkCompletion wc : flushed) {
                assertEquals(WcStatus.FLUSHED, wc.status(), wc.toString());
            }
            assertEquals(QpState.ERROR, v.qp.query().state());
            assertEquals(EventCode.QP_FATAL.code(), v.peer.expect(Frame.OP_DISCONNECT).key());
            assertEquals(1, v.nic.counters().get("engine.errors"));

            final DetException e = Tests.assertErrno(Errno.EIO,
                () -> v.qp.send(3, Loopback.sge(v.mr, 0, 8), 1, 0, 0), "send");
            assertTrue(e.getMessage().contains(failure.getMessage()), e.getMessage());
            assertEio("recv", () -> v.qp.recv(4, Loopback.sge(v.mr, 0, 8), 1));
            assertEio("modify", () -> v.qp.modify(new QpModify().state(QpState.IDLE)));
            final QueuePair late = v.pd.createQp(QpCreate.of(v.cq, 8, 4));
            assertEio("recv on a new queue pair", () -> late.recv(5, Loopback.sge(v.mr, 0, 8), 1));
            assertEio("connect", () -> v.nic.connectionManager().connect(v.peer.address(), 1, late, null, 1000));
            assertEquals(0, v.cq.poll(new WorkCompletion[] {new WorkCompletion()}), "nothing more completes");
        }
    }

    @Test
    void shouldFailNicFatallyWhenProgressThreadMeetsError() {
        expectFatal(new OutOfMemoryError("injected: no memory for the progress thread"));
    }

    @Test
    void shouldFailNicFatallyWhenLinkAwaitThrows() {
        expectFatal(new IllegalStateException("injected: the link's poller broke"));
    }

    @Test
    void shouldWakeBlockedConnectWithEioWhenNicFails() throws InterruptedException {
        try (Victim v = new Victim()) {
            final Supplier<byte[]> connect = () -> v.nic.connectionManager().connect(v.peer.address(), 1, v.qp, null,
                TimeUnit.MINUTES.toMillis(1));
            final CompletableFuture<byte[]> blocked = CompletableFuture.supplyAsync(connect);
            v.peer.expect(Frame.OP_CM_REQUEST); // the peer never answers: connect waits for up to a minute
            v.link.arm(new StackOverflowError("injected"));
            final ExecutionException e = assertThrows(ExecutionException.class,
                () -> blocked.get(Tests.TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(Errno.EIO, assertInstanceOf(DetException.class, e.getCause()).errno());
            Tests.awaitEvent(v.events, r -> r.code() == EventCode.NIC_FATAL);
        }
    }
}
