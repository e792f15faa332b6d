package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Bad input to the public verbs, from an audit of every method of io.jdet: each case fails with the exception or
 * errno its javadoc, the package rules (package-info) or DET's man page name, and leaves the objects usable.
 */
@Timeout(30)
class BadInputTest {

    /** package-info: a null argument raises IllegalArgumentException (not a NullPointerException). */
    @Test
    void nullArgumentsRaiseIllegalArgument() {
        assertThrows(IllegalArgumentException.class, () -> Det.open(null), "Det.open(null)");
        assertThrows(IllegalArgumentException.class, () -> RemoteRegion.of(null), "RemoteRegion.of(null)");
        assertThrows(IllegalArgumentException.class, () -> new DataSegment().set(null, 0, 8),
            "DataSegment.set(null region, ...)");
    }

    /** package-info: a closed device raises IllegalStateException, as a closed NIC's query does. */
    @Test
    void aClosedDeviceRefusesQuery() {
        final Det det = Det.open();
        det.close();
        assertEquals("device closed", assertThrows(IllegalStateException.class, det::query).getMessage());
    }

    /** package-info: a destroyed window's key names nothing any more, as a deregistered region's does. */
    @Test
    void aDestroyedWindowRefusesItsKey() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdA.createMw(1);
            mw.close();
            assertEquals("window destroyed", assertThrows(IllegalStateException.class, mw::rKey).getMessage());
        }
    }

    /**
     * det_bind(3): "EPERM The queue pair, memory window, and memory region do not belong to the same protection
     * domain"; QueuePair.bind's javadoc says the same. A window or region of another NIC is in another domain.
     */
    @Test
    void aWindowOrRegionOfAnotherNicIsEperm() {
        final int all = Loopback.ALL_RIGHTS | Access.MW_BIND;
        try (Loopback pair = Loopback.open(new Loopback.Options().access(all))) {
            final MemoryWindow foreignWindow = pair.pdB.createMw(1);
            final MemoryWindow foreignWindow2 = pair.pdB.createMw(2);
            final MemoryWindow window = pair.pdA.createMw(1);
            final MemoryWindow window2 = pair.pdA.createMw(2);
            final long at = pair.mrA.address();
            assertErrno(Errno.EPERM, () -> pair.qpA.bind(1, foreignWindow, pair.mrA, at, 8, Access.REMOTE_READ, 0),
                "a window of another NIC");
            assertErrno(Errno.EPERM, () -> pair.qpA.bind(1, window, pair.mrB, pair.mrB.address(), 8,
                Access.REMOTE_READ, 0), "a region of another NIC");
            assertErrno(Errno.EPERM, () -> pair.qpA.bindType2(1, foreignWindow2, foreignWindow2.rKey() + 1,
                pair.mrA, at, 8, Access.REMOTE_READ, 0), "a type 2 window of another NIC");
            assertErrno(Errno.EPERM, () -> pair.qpA.bindType2(1, window2, window2.rKey() + 1, pair.mrB,
                pair.mrB.address(), 8, Access.REMOTE_READ, 0), "a region of another NIC, type 2");
            // nothing was posted: a send still runs
            pair.qpB.recv(2, Loopback.sge(pair.mrB, 0, 8), 1);
            pair.qpA.send(3, Loopback.sge(pair.mrA, 0, 8), 1, 0, 0);
            assertEquals(3, Tests.pollOne(pair.cqA).id());
        }
    }

    /**
     * QueuePair's class javadoc: "Errors of every local data segment: ... ERANGE if the segment lies outside the
     * region"; det.md 3.3: every local SGE is validated against its region at post. An atomic's result segment
     * that runs past its region was accepted (only its first 8 bytes were checked).
     */
    @Test
    void anAtomicResultSegmentLeavingItsRegionIsErange() {
        try (Loopback pair = Loopback.open()) {
            final DataSegment past = new DataSegment(pair.mrA.address(), Integer.MAX_VALUE, pair.mrA.lKey());
            final long b = pair.mrB.address();
            final int rKey = pair.mrB.rKey();
            assertErrno(Errno.ERANGE, () -> pair.qpA.compExch(1, 0, 1, past, b, rKey, 0), "compExch");
            assertErrno(Errno.ERANGE, () -> pair.qpA.fetchAdd(1, 1, past, b, rKey, 0), "fetchAdd");
            final DataSegment end = new DataSegment(pair.mrA.address() + pair.mrA.length() - 8, 16, pair.mrA.lKey());
            assertErrno(Errno.ERANGE, () -> pair.qpA.fetchAdd(1, 1, end, b, rKey, 0), "8 bytes in, 8 past");
            // a longer segment inside the region is fine: the original value lands in its first 8 bytes
            pair.qpA.fetchAdd(4, 1, new DataSegment(pair.mrA.address(), 16, pair.mrA.lKey()), b, rKey, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(4, wc.id(), "no refused post left a work request behind");
            assertEquals(WcStatus.SUCCESS, wc.status());
        }
    }

    /**
     * package-info and QueuePair: a destroyed queue pair handed to a verb raises IllegalStateException; the
     * connection manager's disconnect does, its connect and accept answered EINVAL.
     */
    @Test
    void aDestroyedQueuePairHandedToTheConnectionManagerIsAnIllegalState() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false));
             ConnectionListener listener = pair.nicB.connectionManager().listen(7)) {
            final QueuePair goneA = pair.pdA.createQp(QpCreate.of(pair.cqA, 4, 1));
            goneA.close();
            assertThrows(IllegalStateException.class, () -> pair.nicA.connectionManager().connect(pair.nicB.address(),
                7, goneA, null, 1000), "connect");
            final CompletableFuture<byte[]> connect = CompletableFuture.supplyAsync(
                () -> pair.nicA.connectionManager().connect(pair.nicB.address(), 7, pair.qpA, null, 10_000));
            final ConnectionRequest request = listener.take(10_000);
            final QueuePair goneB = pair.pdB.createQp(QpCreate.of(pair.cqB, 4, 1));
            goneB.close();
            assertThrows(IllegalStateException.class, () -> request.accept(goneB, null, 1000), "accept");
            request.accept(pair.qpB, null, 10_000); // the request is still pending
            connect.join();
            assertEquals(QpState.CONNECTED, pair.qpA.query().state());
        }
    }
}
