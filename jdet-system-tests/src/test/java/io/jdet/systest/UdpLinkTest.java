package io.jdet.systest;

import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.QpModify;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two UDP NICs in one JVM over 127.0.0.1: names, addresses, frame sizes and the verbs, connected by hand. */
@Timeout(60)
class UdpLinkTest {

    @Test
    void shouldReportAnAddressAPeerCanConnectTo() {
        try (Det det = Det.open()) {
            final var nic = det.openNic("udp:127.0.0.1", null);
            assertTrue(nic.address().matches("udp:127\\.0\\.0\\.1:\\d+"), nic.address());
            assertTrue(!nic.address().endsWith(":0"), nic.address());
            assertEquals(65_507, nic.query().mtu(), "loopback frames follow lo's 64 KiB MTU");
            final var byInterface = det.openNic("lo", null);
            assertTrue(byInterface.address().startsWith("udp:127.0.0.1:"), byInterface.address());
        }
    }

    @Test
    void shouldRefuseNamesThatNameNoUsableAddress() {
        try (Det det = Det.open()) {
            for (final String name : new String[] {"udp:", "udp:0.0.0.0", "udp:127.0.0.1:99999", "udp:[::1]:1",
                "no-such-interface0", "udp:192.0.2.255:1"}) {
                final DetException e = assertThrows(DetException.class, () -> det.openNic(name, null), name);
                assertEquals(Errno.ENODEV, e.errno(), name);
            }
        }
    }

    @Test
    void shouldRefuseToBindAPortInUse() {
        try (Det det = Det.open()) {
            final var nic = det.openNic("udp:127.0.0.1", null);
            final DetException e = assertThrows(DetException.class, () -> det.openNic(nic.address(), null));
            assertEquals(Errno.EADDRINUSE, e.errno(), e.getMessage());
            assertTrue(e.getMessage().contains("address in use"), e.getMessage());
        }
    }

    /**
     * Whether a thread is blocked in an event wait: parked (on the event queue), or inside the UDP link's
     * {@code ppoll} (a native call, so the thread reads as RUNNABLE; seen by its stack).
     */
    private static boolean blockedInWait(final Thread thread) {
        final Thread.State state = thread.getState();
        if (state == Thread.State.TIMED_WAITING || state == Thread.State.WAITING) {
            return true;
        }
        for (final StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getClassName().equals("io.jdet.internal.link.SocketWait")
                && frame.getMethodName().equals("poll")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void shouldWakeABlockedEventWaiterWhenADatagramArrives() {
        try (Det det = Det.open()) {
            final io.jdet.EventQueue events = det.createEvent(null);
            final var nicA = det.openNic("udp:127.0.0.1", null);
            final var nicB = det.openNic("udp:127.0.0.1", null);
            final var pdA = nicA.allocPd();
            final var pdB = nicB.allocPd();
            final var cqA = nicA.createCq(8, null);
            final var cqB = nicB.createCq(8, events);
            final var qpA = pdA.createQp(io.jdet.QpCreate.of(cqA, 4, 1));
            final var qpB = pdB.createQp(io.jdet.QpCreate.of(cqB, 4, 1));
            qpA.modify(new QpModify().connect(nicB.address(), qpB.number(), qpB.query().localPsn()));
            qpB.modify(new QpModify().connect(nicA.address(), qpA.number(), qpA.query().localPsn()));
            qpB.recv(1, new io.jdet.DataSegment[0], 0);
            cqB.arm(io.jdet.CqArm.NEXT_SIGNALED, 0);
            // Nobody polls B: this thread, blocked in waitOn, sleeps in ppoll on B's socket itself (B's link
            // waiter), and must take the frame and fire the event when it arrives. The send waits until this thread
            // is blocked there, so the frame arrives while it is.
            final Thread waiter = Thread.currentThread();
            final CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!blockedInWait(waiter)) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("the event waiter never blocked");
                    }
                    LockSupport.parkNanos(100_000);
                }
                qpA.send(2, new io.jdet.DataSegment[0], 0, 0, 0);
            }, r -> Thread.ofPlatform().start(r));
            final io.jdet.EventRecord record = new io.jdet.EventRecord();
            events.waitOn(10_000_000, record);
            sent.join();
            assertEquals(io.jdet.EventCode.CQ_COMPLETION, record.code());
            final WorkCompletion[] wc = {new WorkCompletion()};
            assertEquals(1, cqB.poll(wc));
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            assertEquals(WcType.RECV, wc[0].type());
            assertEquals(0L, nicA.counters().get("engine.errors"));
            assertEquals(0L, nicB.counters().get("engine.errors"));
        }
    }

    @Test
    void shouldRunEveryVerbBetweenTwoUdpNics() {
        try (Det det = Det.open(); Endpoint a = new Endpoint(det, "udp:127.0.0.1", 1 << 20, 32);
             Endpoint b = new Endpoint(det, "udp:127.0.0.1:0", 1 << 20, 32)) {
            a.qp.modify(new QpModify().connect(b.nic.address(), b.qp.number(), b.qp.query().localPsn()));
            b.qp.modify(new QpModify().connect(a.nic.address(), a.qp.number(), a.qp.query().localPsn()));
            final int big = 300_000;
            for (int i = 0; i < big; i++) {
                a.buffer.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
            }
            b.qp.recv(1, b.at(0, big), 1);
            a.qp.send(2, a.at(0, big), 1, 0, 0);
            final List<WorkCompletion> rx = b.received(1, 10_000);
            assertEquals(WcStatus.SUCCESS, rx.get(0).status());
            assertEquals(big, rx.get(0).length());
            assertEquals(-1, a.buffer.asSlice(0, big).mismatch(b.buffer.asSlice(0, big)));
            assertEquals(WcStatus.SUCCESS, a.sent(1, 10_000).get(0).status());

            a.qp.write(3, a.at(0, big), 1, b.region.address() + 400_000, b.region.rKey(), 0, 0);
            assertEquals(WcStatus.SUCCESS, a.sent(1, 10_000).get(0).status());
            assertEquals(-1, a.buffer.asSlice(0, big).mismatch(b.buffer.asSlice(400_000, big)));

            b.qp.read(4, b.at(700_000, big), 1, a.region.address(), a.region.rKey(), 0);
            final WorkCompletion read = b.sent(1, 10_000).get(0);
            assertEquals(WcType.RDMA_READ, read.type());
            assertEquals(WcStatus.SUCCESS, read.status());
            assertEquals(-1, a.buffer.asSlice(0, big).mismatch(b.buffer.asSlice(700_000, big)));

            b.buffer.set(ValueLayout.JAVA_LONG, 1000_000, 40);
            a.qp.fetchAdd(5, 2, a.at(1_000_000, 8)[0], b.region.address() + 1_000_000, b.region.rKey(), 0);
            assertEquals(WcStatus.SUCCESS, a.sent(1, 10_000).get(0).status());
            assertEquals(40, a.buffer.get(ValueLayout.JAVA_LONG, 1_000_000));
            assertEquals(42, b.buffer.get(ValueLayout.JAVA_LONG, 1_000_000));
            a.qp.compExch(6, 42, 7, a.at(1_000_008, 8)[0], b.region.address() + 1_000_000, b.region.rKey(), 0);
            assertEquals(WcStatus.SUCCESS, a.sent(1, 10_000).get(0).status());
            assertEquals(42, a.buffer.get(ValueLayout.JAVA_LONG, 1_000_008));
            assertEquals(7, b.buffer.get(ValueLayout.JAVA_LONG, 1_000_000));
            assertEquals(0L, a.nic.counters().get("engine.errors"));
            assertEquals(0L, b.nic.counters().get("engine.errors"));
        }
    }
}
