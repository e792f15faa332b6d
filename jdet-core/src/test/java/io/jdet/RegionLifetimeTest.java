package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rule for registered memory: it must stay alive until its region is deregistered, deregistration is final,
 * and whatever still refers to memory that is gone (deregistered, or its arena closed) fails with an error status;
 * nothing completes SUCCESS without its bytes, and the engine never touches the memory.
 */
@Timeout(60)
class RegionLifetimeTest {
    private static final long PATTERN = 0x1122_3344_5566_7788L;

    @Test
    void shouldFailWithEinvalWhenModifyGrantsWriteOnReadOnlyMemory() {
        try (Loopback pair = Loopback.open()) {
            final MemorySegment readOnly = pair.arena.allocate(64).asReadOnly();
            final MemoryRegion mr = pair.pdB.regMr(readOnly, Access.LOCAL_READ | Access.REMOTE_READ);
            final int rKey = mr.rKey();
            for (final int rights : new int[] {Access.LOCAL_WRITE, Access.LOCAL_READ | Access.LOCAL_WRITE
                | Access.REMOTE_WRITE, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC}) {
                assertErrno(Errno.EINVAL, () -> mr.modify(null, rights), "rights 0x" + Integer.toHexString(rights));
            }
            assertEquals(rKey, mr.rKey(), "a refused modify keeps the keys");
            assertEquals(Access.LOCAL_READ | Access.REMOTE_READ, mr.query().access());
            assertErrno(Errno.EINVAL, () -> mr.regShared(pair.pdB, Access.LOCAL_WRITE | Access.REMOTE_WRITE));
            // The peer still has no way to write it.
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, PATTERN);
            assertEquals(WcStatus.ACCESS_ERR, pair.writeAtoB(mr.address(), rKey, 8).status());
            LargeMessageTest.assertNoEngineErrors(pair);
        }
    }

    @Test
    void shouldFailWithEfaultWhenArenaIsClosed() {
        try (Loopback pair = Loopback.open()) {
            final Arena arena = Arena.ofShared();
            final MemorySegment segment = arena.allocate(64);
            final MemoryRegion mr = pair.pdB.regMr(segment, Loopback.ALL_RIGHTS);
            arena.close();
            assertErrno(Errno.EFAULT, () -> pair.pdB.regMr(segment, Access.LOCAL_READ));
            assertErrno(Errno.EFAULT, () -> mr.regShared(pair.pdB, Access.LOCAL_READ));
            mr.close();
        }
    }

    @Test
    void shouldFailPeerWriteWhenArenaWasClosedUnderTheRegion() {
        try (Loopback pair = Loopback.open()) {
            final Arena arena = Arena.ofShared();
            final MemoryRegion mr = pair.pdB.regMr(arena.allocate(64), Loopback.ALL_RIGHTS);
            arena.close(); // a use after free by the application: the region counts as deregistered

            pair.bufA.set(ValueLayout.JAVA_LONG, 0, PATTERN);
            final WorkCompletion wc = pair.writeAtoB(mr.address(), mr.rKey(), 8);

            assertEquals(WcStatus.PROTECTION_ERR, wc.status(), "never SUCCESS: " + wc);
            assertEvents(pair, EventCode.INVALID_RDMA_KEY);
            LargeMessageTest.assertNoEngineErrors(pair);
            mr.close();
        }
    }

    @Test
    void shouldFailLocalPostWhenArenaWasClosedUnderTheRegion() {
        try (Loopback pair = Loopback.open()) {
            final Arena arena = Arena.ofShared();
            final MemoryRegion mr = pair.pdA.regMr(arena.allocate(64), Loopback.ALL_RIGHTS);
            arena.close();
            assertErrno(Errno.ENXIO, () -> pair.qpA.send(1, sge(mr, 0, 8), 1, 0, 0));
            assertErrno(Errno.ENXIO, () -> pair.qpA.recv(2, sge(mr, 0, 8), 1));
            mr.close();
        }
    }

    /**
     * A send whose first attempt is refused (receiver not ready) and whose source is deregistered before the
     * retry: the retry may not read the memory, so the send fails; the peer never sees the bytes.
     */
    @Test
    void shouldFailSendWhenSourceIsDeregisteredBeforeItIsResent() {
        // The retry waits a second after the NAK, so no resend (read from the region while it was still registered,
        // and rightly delivered) can be on its way when the region is deregistered, even on a loaded machine.
        final Configuration slowRetries = new Configuration().rnrRetryCount(1000).rnrDelayUs(1_000_000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(slowRetries))) {
            final MemorySegment source = pair.arena.allocate(64);
            source.set(ValueLayout.JAVA_LONG, 0, PATTERN);
            final MemoryRegion mr = pair.pdA.regMr(source, Access.LOCAL_READ);
            pair.qpA.send(1, sge(mr, 0, 8), 1, 0, 0);
            Tests.await("a receiver-not-ready NAK at A", () -> pair.nicA.counters().get("rnr.naks.received") > 0);

            mr.close();
            pair.qpB.recv(2, sge(pair.mrB, 0, 8), 1);

            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.LOCAL_PROTECTION_ERR, wc.status(), "never SUCCESS: " + wc);
            pair.awaitBothInError();
            final List<EventRecord> atA = Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.INVALID_L_KEY);
            assertFalse(atA.get(atA.size() - 1).remote());
            final WorkCompletion recv = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.FLUSHED, recv.status(), recv.toString());
            assertEquals(0L, pair.bufB.get(ValueLayout.JAVA_LONG, 0), "nothing arrived");
            LargeMessageTest.assertNoEngineErrors(pair);
        }
    }

    private static void assertEvents(final Loopback pair, final EventCode code) {
        pair.awaitBothInError();
        final List<EventRecord> atB = Tests.awaitEvent(pair.eventsB, r -> r.code() == code);
        final EventRecord local = atB.get(atB.size() - 1);
        assertFalse(local.remote(), "the responder raises it locally: " + local);
        assertSame(pair.qpB, local.handle());
        final List<EventRecord> atA = Tests.awaitEvent(pair.eventsA, r -> r.code() == code);
        assertTrue(atA.get(atA.size() - 1).remote(), "the requester gets the remote bit");
    }
}
