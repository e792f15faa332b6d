package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failures found after a post: each completes the work request with its own status, then both queue pairs go to
 * ERROR, the detecting side raising the event locally and the other side with the remote bit.
 */
@Timeout(60)
class RemoteErrorsTest {
    private static final int BAD_KEY = 0x7fff_ff01;

    @Test
    void shouldCompleteWithProtectionErrWhenRemoteKeyIsUnknown() {
        try (Loopback pair = Loopback.open()) {
            pair.qpB.recv(9, sge(pair.mrB, 0, 8), 1);
            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), BAD_KEY, 0, 0);
            pair.qpA.send(2, sge(pair.mrA, 0, 8), 1, 0, 0);
            final List<WorkCompletion> wcs = pair.pollA(2);
            assertEquals(WcStatus.PROTECTION_ERR, wcs.get(0).status());
            assertEquals(1, wcs.get(0).id());
            assertEquals(WcType.RDMA_WRITE, wcs.get(0).type());
            assertEquals(WcStatus.FLUSHED, wcs.get(1).status(), "work after the failure is flushed");
            assertEvents(pair, EventCode.INVALID_RDMA_KEY);
            final WorkCompletion recv = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.FLUSHED, recv.status(), "the responder's receives are flushed");
        }
    }

    @Test
    void shouldReportFailureWhenRequestWasSuppressed() {
        try (Loopback pair = Loopback.open()) {
            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), WrFlags.SUPPRESSED, 0);
            pair.qpA.write(2, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), BAD_KEY, WrFlags.SUPPRESSED, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(2, wc.id(), "errors are reported even for suppressed requests");
            assertEquals(WcStatus.PROTECTION_ERR, wc.status());
            assertEquals(2, wc.reapCount());
            assertEvents(pair, EventCode.INVALID_RDMA_KEY);
        }
    }

    @Test
    void shouldCompleteWithProtectionErrWhenReadOrAtomicKeyIsUnknown() {
        try (Loopback pair = Loopback.open()) {
            pair.qpA.read(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), BAD_KEY, 0);
            assertEquals(WcStatus.PROTECTION_ERR, Tests.pollOne(pair.cqA).status());
            assertEvents(pair, EventCode.INVALID_RDMA_KEY);
        }
        try (Loopback pair = Loopback.open()) {
            pair.qpA.fetchAdd(1, 1, new DataSegment().set(pair.mrA, 0, 8), pair.mrB.address(), BAD_KEY, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.PROTECTION_ERR, wc.status());
            assertEquals(WcType.FETCH_ADD, wc.type());
            assertEvents(pair, EventCode.INVALID_ATOMIC_KEY);
        }
    }

    @Test
    void shouldCompleteWithProtectionErrWhenRegionIsInAnotherDomain() {
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion foreign = pair.nicB.allocPd().regMr(pair.arena.allocate(64), Loopback.ALL_RIGHTS);
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(foreign.address(), foreign.rKey(), 8).status());
            assertEvents(pair, EventCode.PROTECTION_VIOLATION);
        }
    }

    @Test
    void shouldCompleteWithBoundsErrWhenRangeLeavesTheRegion() {
        try (Loopback pair = Loopback.open()) {
            final long end = pair.mrB.address() + pair.mrB.length();
            assertEquals(WcStatus.BOUNDS_ERR, pair.writeAtoB(end - 4, pair.mrB.rKey(), 8).status());
            assertEvents(pair, EventCode.BOUNDS_VIOLATION);
        }
        try (Loopback pair = Loopback.open()) {
            pair.qpA.read(1, sge(pair.mrA, 0, 16), 1, pair.mrB.address() - 8, pair.mrB.rKey(), 0);
            assertEquals(WcStatus.BOUNDS_ERR, Tests.pollOne(pair.cqA).status());
            assertEvents(pair, EventCode.BOUNDS_VIOLATION);
        }
        try (Loopback pair = Loopback.open()) {
            final long end = pair.mrB.address() + pair.mrB.length();
            pair.qpA.compExch(1, 0, 1, new DataSegment().set(pair.mrA, 0, 8), end, pair.mrB.rKey(), 0);
            assertEquals(WcStatus.BOUNDS_ERR, Tests.pollOne(pair.cqA).status());
            assertEvents(pair, EventCode.BOUNDS_VIOLATION);
        }
    }

    @Test
    void shouldCompleteBothSidesWithBoundsErrWhenSendIsLongerThanTheReceive() {
        try (Loopback pair = Loopback.open()) {
            pair.qpB.recv(5, sge(pair.mrB, 0, 16), 1);
            pair.qpA.send(6, sge(pair.mrA, 0, 17), 1, 0, 0);
            final WorkCompletion atA = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.BOUNDS_ERR, atA.status());
            assertEquals(6, atA.id());
            final WorkCompletion atB = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.BOUNDS_ERR, atB.status());
            assertEquals(5, atB.id());
            assertEquals(WcType.RECV, atB.type());
            assertEvents(pair, EventCode.BOUNDS_VIOLATION);
        }
    }

    @Test
    void shouldCompleteWithAccessErrWhenRegionLacksTheRemoteRight() {
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion readable = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_READ
                | Access.REMOTE_READ | Access.LOCAL_WRITE);
            assertEquals(WcStatus.ACCESS_ERR, pair.writeAtoB(readable.address(), readable.rKey(), 8).status());
            assertEvents(pair, EventCode.ACCESS_VIOLATION);
        }
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion writable = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_READ
                | Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            pair.qpA.read(1, sge(pair.mrA, 0, 8), 1, writable.address(), writable.rKey(), 0);
            assertEquals(WcStatus.ACCESS_ERR, Tests.pollOne(pair.cqA).status());
            assertEvents(pair, EventCode.ACCESS_VIOLATION);
        }
    }

    @Test
    void shouldCompleteWithAccessErrWhenAtomicTargetLacksAtomicOrBothReadAndWrite() {
        for (final int rights : new int[] {Access.REMOTE_READ, Access.REMOTE_WRITE}) {
            try (Loopback pair = Loopback.open()) {
                final MemoryRegion target = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_READ
                    | Access.LOCAL_WRITE | rights);
                pair.qpA.fetchAdd(1, 1, new DataSegment().set(pair.mrA, 0, 8), target.address(), target.rKey(), 0);
                assertEquals(WcStatus.ACCESS_ERR, Tests.pollOne(pair.cqA).status(), "rights " + rights);
                assertEvents(pair, EventCode.ACCESS_VIOLATION);
            }
        }
    }

    @Test
    void shouldRunAtomicWhenTargetHasAtomicOrBothReadAndWrite() {
        for (final int rights : new int[] {Access.REMOTE_ATOMIC, Access.REMOTE_READ | Access.REMOTE_WRITE}) {
            try (Loopback pair = Loopback.open()) {
                final MemoryRegion target = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_READ
                    | Access.LOCAL_WRITE | rights);
                target.segment().set(ValueLayout.JAVA_LONG, 8, 40);
                pair.qpA.fetchAdd(1, 2, new DataSegment().set(pair.mrA, 0, 8), target.address() + 8, target.rKey(),
                    0);
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status(), "rights " + rights);
                assertEquals(42, target.segment().get(ValueLayout.JAVA_LONG, 8));
                assertEquals(40, pair.bufA.get(ValueLayout.JAVA_LONG, 0));
            }
        }
    }

    @Test
    void shouldCompleteWithWrapErrWhenRemoteRangeWraps() {
        try (Loopback pair = Loopback.open()) {
            assertEquals(WcStatus.WRAP_ERR, pair.writeAtoB(-8, pair.mrB.rKey(), 64).status());
            assertEvents(pair, EventCode.WRAP_ERROR);
        }
        try (Loopback pair = Loopback.open()) {
            pair.qpA.read(1, sge(pair.mrA, 0, 64), 1, -16, pair.mrB.rKey(), 0);
            assertEquals(WcStatus.WRAP_ERR, Tests.pollOne(pair.cqA).status());
            assertEvents(pair, EventCode.WRAP_ERROR);
        }
    }

    @Test
    void shouldCompleteWithRnrRetryExceededWhenNoReceiveIsEverPosted() {
        final Configuration quickRnr = new Configuration().rnrRetryCount(3).rnrDelayUs(200);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(quickRnr))) {
            pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.RNR_RETRY_EXCEEDED, wc.status());
            assertEquals(WcType.SEND, wc.type());
            pair.awaitBothInError();
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.QP_RQ_ERROR);
            Tests.awaitEvent(pair.eventsB, r -> r.code() == EventCode.QP_RQ_ERROR && r.remote());
            assertTrue(pair.nicB.counters().get("rnr.naks.sent") >= 4, pair.nicB.counters().toString());
        }
    }

    @Test
    void shouldCompleteWithRnrRetryExceededWhenWriteWithImmediateFindsNoReceive() {
        final Configuration quickRnr = new Configuration().rnrRetryCount(2).rnrDelayUs(200);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(quickRnr))) {
            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), WrFlags.IMMEDIATE, 5);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.RNR_RETRY_EXCEEDED, wc.status());
            assertEquals(WcType.RDMA_WRITE, wc.type());
            pair.awaitBothInError();
        }
    }

    @Test
    void shouldSucceedWhenReceiveIsPostedDuringRnrRetries() {
        final Configuration patient = new Configuration().rnrRetryCount(100_000).rnrDelayUs(500);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(patient))) {
            Tests.fill(pair.bufA.asSlice(0, 100), 5);
            pair.qpA.send(1, sge(pair.mrA, 0, 100), 1, WrFlags.IMMEDIATE, 77);
            Tests.await("the receiver said it was not ready",
                () -> pair.nicB.counters().get("rnr.naks.sent") > 0);
            pair.qpB.recv(2, sge(pair.mrB, 0, 100), 1);
            final WorkCompletion atB = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.SUCCESS, atB.status());
            assertEquals(100, atB.length());
            assertEquals(77, atB.immediate());
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            Tests.assertSameBytes(pair.bufA.asSlice(0, 100), pair.bufB.asSlice(0, 100));
            assertEquals(QpState.CONNECTED, pair.qpA.query().state());
        }
    }

    @Test
    void shouldDeliverLongMessageWhenReceiveIsPostedDuringRnrRetries() {
        final Configuration patient = new Configuration().rnrRetryCount(100_000).rnrDelayUs(500);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(patient).bufferBytes(1 << 20))) {
            final int length = 300_000; // several frames, the later ones sent before the first is refused
            Tests.fill(pair.bufA.asSlice(0, length), 6);
            pair.qpA.send(1, sge(pair.mrA, 0, length), 1, 0, 0);
            Tests.await("the receiver said it was not ready",
                () -> pair.nicB.counters().get("rnr.naks.sent") > 0);
            pair.qpB.recv(2, sge(pair.mrB, 0, length), 1);
            final WorkCompletion atB = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.SUCCESS, atB.status());
            assertEquals(length, atB.length());
            Tests.assertSameBytes(pair.bufA.asSlice(0, length), pair.bufB.asSlice(0, length));
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
        }
    }

    @Test
    void shouldCompleteWithRetryExceededWhenEveryFrameIsLost() {
        final Configuration lossy = new Configuration().faults(new FaultPlan(1.0, 0, 0, 0, 1)).ackTimeoutMs(50)
            .minRtoUs(500);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(lossy))) {
            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            pair.qpA.read(2, sge(pair.mrA, 8, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            final List<WorkCompletion> wcs = pair.pollA(2);
            assertEquals(WcStatus.RETRY_EXCEEDED, wcs.get(0).status());
            assertEquals(WcStatus.FLUSHED, wcs.get(1).status());
            assertEquals(QpState.ERROR, pair.qpA.query().state());
            final List<EventRecord> events = Tests.awaitEvent(pair.eventsA,
                r -> r.code() == EventCode.ACK_TIMEOUT);
            assertSame(pair.qpA, events.get(events.size() - 1).handle());
            assertTrue(pair.nicA.counters().get("frames.retransmitted") > 0);
        }
    }

    @Test
    void shouldKeepRetryingWhenRequestHasNoTimeout() {
        final Configuration lossy = new Configuration().faults(new FaultPlan(1.0, 0, 0, 0, 1)).ackTimeoutMs(20)
            .minRtoUs(500).maxRtoUs(2000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(lossy))) {
            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), WrFlags.NO_TIMEOUT, 0);
            Tests.assertNoCompletion(pair.cqA, 150); // several give-up times pass
            assertEquals(QpState.CONNECTED, pair.qpA.query().state());
            assertTrue(pair.nicA.counters().get("frames.retransmitted") > 0);
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            assertEquals(WcStatus.FLUSHED, Tests.pollOne(pair.cqA).status());
        }
    }

    @Test
    void shouldCompleteWithRetryExceededWhenPeerNicIsClosed() {
        final String fabric = Tests.uniqueFabric("gone");
        try (Det detA = Det.open(new Configuration().ackTimeoutMs(50).minRtoUs(500));
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            final Nic nicA = detA.openNic(fabric, null);
            final CompletionQueue cq = nicA.createCq(8, null);
            final ProtectionDomain pd = nicA.allocPd();
            final QueuePair qp = pd.createQp(QpCreate.of(cq, 4, 1));
            final MemoryRegion mr = pd.regMr(arena.allocate(64), Access.LOCAL_READ | Access.LOCAL_WRITE);
            try (Det detB = Det.open()) {
                final Nic nicB = detB.openNic(fabric, null);
                final CompletionQueue cqB = nicB.createCq(8, null);
                final QueuePair peer = nicB.allocPd().createQp(QpCreate.of(cqB, 4, 1));
                Loopback.connect(qp, nicB, peer);
            } // B's NIC is gone before A sends anything
            qp.send(1, sge(mr, 0, 8), 1, 0, 0);
            qp.read(2, sge(mr, 8, 8), 1, 0x1000, 1, 0);
            final List<WorkCompletion> wcs = Tests.pollUntil(cq, 2);
            assertEquals(WcStatus.RETRY_EXCEEDED, wcs.get(0).status());
            assertEquals(WcStatus.FLUSHED, wcs.get(1).status());
            assertEquals(QpState.ERROR, qp.query().state());
            Tests.assertEngineHealthy(nicA);
        }
    }

    @Test
    void shouldCompleteWithInvalidRequestWhenPeerCannotInvalidateTheKey() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow type1 = pair.pdB.createMw(1);
            for (final int key : new int[] {pair.mrB.rKey(), type1.rKey(), BAD_KEY}) {
                pair.qpB.recv(3, sge(pair.mrB, 0, 8), 1);
                pair.qpA.sendInvalidate(4, sge(pair.mrA, 0, 8), 1, 0, key);
                final WorkCompletion atA = Tests.pollOne(pair.cqA);
                assertEquals(WcStatus.INVALID_REQUEST, atA.status(), "key 0x" + Integer.toHexString(key));
                assertEquals(WcType.SEND, atA.type());
                final WorkCompletion atB = Tests.pollOne(pair.cqB);
                assertEquals(WcStatus.INVALID_REQUEST, atB.status());
                assertEquals(WcType.RECV, atB.type());
                assertEvents(pair, EventCode.INVALID_RDMA_KEY);
                recover(pair);
            }
        }
    }

    @Test
    void shouldCompleteWithRemoteOpErrWhenReceiveBufferWasDeregistered() {
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion landing = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_WRITE);
            pair.qpB.recv(3, sge(landing, 0, 64), 1);
            landing.close();
            pair.qpA.send(4, sge(pair.mrA, 0, 8), 1, 0, 0);
            final WorkCompletion atA = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.REMOTE_OP_ERR, atA.status());
            final WorkCompletion atB = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.LOCAL_PROTECTION_ERR, atB.status());
            assertEquals(3, atB.id());
            assertEvents(pair, EventCode.INVALID_L_KEY);
        }
    }

    @Test
    void shouldCompleteWithLocalProtectionErrWhenReadDestinationWasDeregistered() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB); // B is IDLE: the read waits for retransmission
            final MemoryRegion landing = pair.pdA.regMr(pair.arena.allocate(64), Access.LOCAL_WRITE);
            pair.qpA.read(1, sge(landing, 0, 64), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            landing.close();
            Loopback.connect(pair.qpB, pair.nicA, pair.qpA);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.LOCAL_PROTECTION_ERR, wc.status());
            assertEquals(WcType.RDMA_READ, wc.type());
            pair.awaitBothInError();
        }
    }

    @Test
    void shouldCompleteWithLocalOpErrWhenLocalInvalidateNamesNoBoundWindow() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow unbound = pair.pdA.createMw(2);
            pair.qpA.localInvalidate(1, unbound.rKey(), 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.LOCAL_OP_ERR, wc.status());
            assertEquals(WcType.LOCAL_INVALIDATE, wc.type());
            assertEquals(1, wc.id());
            pair.awaitBothInError();
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.QP_ERROR && !r.remote());
            Tests.awaitEvent(pair.eventsB, r -> r.code() == EventCode.QP_ERROR && r.remote());
        }
    }

    @Test
    void shouldKeepLocalOpErrWhenEarlierWorkIsFlushed() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB); // B is IDLE: the send stays outstanding
            pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0);
            pair.qpA.localInvalidate(2, 0x00ab_cd01, 0);
            final List<WorkCompletion> wcs = pair.pollA(2);
            assertEquals(WcStatus.FLUSHED, wcs.get(0).status());
            assertEquals(1, wcs.get(0).id());
            assertEquals(WcStatus.LOCAL_OP_ERR, wcs.get(1).status(), "the failed request reports why");
            assertEquals(2, wcs.get(1).id());
            assertEquals(QpState.ERROR, pair.qpA.query().state());
        }
    }

    @Test
    void shouldCompleteWithBindErrWhenType2WindowIsAlreadyBound() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdA.createMw(2);
            final int first = next(mw.rKey());
            pair.qpA.bindType2(1, mw, first, pair.mrA, pair.mrA.address(), 64, Access.REMOTE_READ, 0);
            pair.qpA.bindType2(2, mw, next(first), pair.mrA, pair.mrA.address(), 64, Access.REMOTE_READ, 0);
            final List<WorkCompletion> wcs = pair.pollA(2);
            assertEquals(WcStatus.SUCCESS, wcs.get(0).status());
            assertEquals(WcStatus.BIND_ERR, wcs.get(1).status());
            assertEquals(WcType.BIND, wcs.get(1).type());
            pair.awaitBothInError();
        }
    }

    @Test
    void shouldCompleteWithInvalidRequestWhenPeerMaxIrIsExceeded() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false).maxOr(4))) {
            pair.qpB.modify(new QpModify().maxIr(1));
            // B connects only after both reads were sent once: their retransmissions reach it back to back
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB);
            pair.qpA.read(1, sge(pair.mrA, 0, 64), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            pair.qpA.read(2, sge(pair.mrA, 64, 64), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            Loopback.connect(pair.qpB, pair.nicA, pair.qpA);
            final List<WorkCompletion> wcs = pair.pollA(2);
            assertEquals(WcStatus.SUCCESS, wcs.get(0).status());
            assertEquals(WcStatus.INVALID_REQUEST, wcs.get(1).status());
            assertEvents(pair, EventCode.MAX_IR_EXCEEDED);
        }
    }

    @Test
    void shouldCompleteWithInvalidRequestWhenAtomicTargetIsMisalignedAtThePeer() {
        try (Loopback pair = Loopback.open()) {
            // a zero-based window that starts 4 bytes into the region: offset 0 is aligned in the request only
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int key = (mw.rKey() & ~0xff) | ((mw.rKey() + 1) & 0xff);
            pair.qpB.bindType2(1, mw, key, pair.mrB, pair.mrB.address() + 4, 64,
                Access.REMOTE_ATOMIC | Access.ZERO_BASED, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            pair.qpA.fetchAdd(2, 1, new DataSegment().set(pair.mrA, 0, 8), 0, key, 0);
            assertEquals(WcStatus.INVALID_REQUEST, Tests.pollOne(pair.cqA).status());
            assertEquals(0, pair.bufB.get(ValueLayout.JAVA_LONG_UNALIGNED, 4), "nothing added");
            assertEvents(pair, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldCompleteWithBindErrWhenRegionWasDeregisteredBeforeTheBindRan() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB); // B is IDLE: the read stays outstanding
            final MemoryRegion region = pair.pdA.regMr(pair.arena.allocate(64), Loopback.ALL_RIGHTS);
            final MemoryWindow mw = pair.pdA.createMw(1);
            pair.qpA.read(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            pair.qpA.bind(2, mw, region, region.address(), 64, Access.REMOTE_READ, WrFlags.FENCED);
            region.close(); // allowed: the fenced bind has not run yet
            Loopback.connect(pair.qpB, pair.nicA, pair.qpA);
            final List<WorkCompletion> wcs = pair.pollA(2);
            assertEquals(WcStatus.SUCCESS, wcs.get(0).status());
            assertEquals(WcStatus.BIND_ERR, wcs.get(1).status());
            assertEquals(WcType.BIND, wcs.get(1).type());
            assertEquals(0, mw.query().length(), "nothing was bound");
            pair.awaitBothInError();
        }
    }

    /** The detecting side (B) raises the event locally; A gets it with the remote bit; both are in ERROR. */
    private static void assertEvents(final Loopback pair, final EventCode code) {
        pair.awaitBothInError();
        final List<EventRecord> atB = Tests.awaitEvent(pair.eventsB, r -> r.code() == code);
        final EventRecord local = atB.get(atB.size() - 1);
        assertTrue(!local.remote(), "the detecting side raises it locally: " + local);
        assertSame(pair.qpB, local.handle());
        assertEquals(ResourceType.QP, local.type());
        final List<EventRecord> atA = Tests.awaitEvent(pair.eventsA, r -> r.code() == code);
        final EventRecord remote = atA.get(atA.size() - 1);
        assertTrue(remote.remote(), "the other side gets the remote bit: " + remote);
        assertSame(pair.qpA, remote.handle());
    }

    /** Both back to IDLE, connected again, queues drained. */
    private static void recover(final Loopback pair) {
        Tests.drainEvents(pair.eventsA);
        Tests.drainEvents(pair.eventsB);
        pair.qpA.modify(new QpModify().state(QpState.IDLE));
        pair.qpB.modify(new QpModify().state(QpState.IDLE));
        pair.connect();
    }

    private static int next(final int key) {
        return (key & ~0xff) | ((key + 1) & 0xff);
    }
}
