package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Queue pair creation, resizing, flushing, disconnect and recovery; the transition table is {@link QpTransitionTest}.
 */
@Timeout(30)
class QueuePairStateTest {

    @Test
    void shouldFailWithEinvalWhenCreatedWithBadAttributes() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final CompletionQueue cq = pair.cqA;
            final ProtectionDomain pd = pair.pdA;
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(cq, cq, -1, 1, 1, 1, 1, 1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(cq, cq, 1, 65537, 1, 1, 1, 1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(cq, cq, 1, 1, 257, 1, 1, 1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(cq, cq, 1, 1, 1, -1, 1, 1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(cq, cq, 1, 1, 1, 1, 32769, 1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(cq, cq, 1, 1, 1, 1, 1, -1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(null, cq, 1, 1, 1, 1, 1, 1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(new QpCreate(cq, null, 1, 1, 1, 1, 1, 1)));
            assertErrno(Errno.EINVAL, () -> pd.createQp(QpCreate.of(pair.cqB, 1, 1)), "a CQ of another NIC");
            final CompletionQueue gone = pair.nicA.createCq(1, null);
            gone.close();
            assertThrows(IllegalStateException.class, () -> pd.createQp(QpCreate.of(gone, 1, 1)), "a destroyed CQ");
            pd.createQp(new QpCreate(null, cq, 0, 1, 1, 1, 0, 0)).close(); // a zero-size queue needs no CQ
        }
    }

    @Test
    void shouldReportAttributesWhenQueried() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final QueuePair qp = pair.pdA.createQp(new QpCreate(pair.cqA, pair.cqA, 7, 9, 3, 2, 5, 6));
            final QpAttributes a = qp.query();
            assertSame(pair.pdA, a.pd());
            assertSame(pair.cqA, a.sqCq());
            assertSame(pair.cqA, a.rqCq());
            assertEquals(QpState.IDLE, a.state());
            assertTrue(a.sqSize() >= 7 && a.rqSize() >= 9);
            assertEquals(3, a.sqSges());
            assertEquals(2, a.rqSges());
            assertEquals(5, a.maxOr());
            assertTrue(a.maxIr() >= 6);
            assertEquals(qp.number(), a.localQpNum());
            assertEquals(pair.nicA.address(), a.localAddress());
            assertEquals(pair.nicA.query().mtu(), a.mtu());
            Loopback.connect(qp, pair.nicB, pair.qpB);
            assertEquals(pair.qpB.number(), qp.query().remoteQpNum());
            assertEquals(pair.nicB.address(), qp.query().remoteAddress());
            assertEquals(QpState.CONNECTED, qp.query().state());
        }
    }

    @Test
    void shouldFailWithEinvalWhenStateFlagHasNoStateOrConnectHasNoPeer() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().state(null)));
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().state(QpState.CONNECTED)));
            assertEquals(QpState.IDLE, pair.qpA.query().state());
        }
    }

    @Test
    void shouldResizeWhenIdleOrConnecting() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            pair.qpA.modify(new QpModify().sqSize(8).rqSize(9).maxOr(2).maxIr(3));
            QpAttributes a = pair.qpA.query();
            assertEquals(8, a.sqSize());
            assertEquals(9, a.rqSize());
            assertEquals(2, a.maxOr());
            assertEquals(3, a.maxIr());
            Loopback.connect(pair.qpB, pair.nicA, pair.qpA);
            pair.qpA.modify(new QpModify().connect(pair.nicB.address(), pair.qpB.number(), pair.qpB.query().localPsn()).sqSize(2));
            a = pair.qpA.query();
            assertEquals(QpState.CONNECTED, a.state());
            assertEquals(2, a.sqSize());
            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            pair.qpA.write(2, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            assertErrno(Errno.ENOSPC, () -> pair.qpA.write(3, sge(pair.mrA, 0, 8), 1, pair.mrB.address(),
                pair.mrB.rKey(), 0, 0), "the new depth holds");
            for (final WorkCompletion wc : Tests.expectSuccess(pair.cqA, 2)) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
        }
    }

    @Test
    void shouldFailWithEinvalWhenResizedOutsideIdle() {
        try (Loopback pair = Loopback.open()) {
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().sqSize(8)));
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().state(QpState.ERROR).rqSize(8)));
            assertEquals(QpState.CONNECTED, pair.qpA.query().state(), "a refused modify changes nothing");
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().state(QpState.IDLE).maxOr(1)));
            assertEquals(QpState.ERROR, pair.qpA.query().state());
        }
    }

    @Test
    void shouldFailWithEinvalWhenResizedBeyondLimits() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().sqSize(65537)));
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().rqSize(-1)));
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().maxOr(32769)));
            assertErrno(Errno.EINVAL, () -> pair.qpA.modify(new QpModify().maxIr(-1)));
            final QueuePair noSq = pair.pdA.createQp(new QpCreate(null, pair.cqA, 0, 4, 1, 1, 0, 0));
            assertErrno(Errno.EINVAL, () -> noSq.modify(new QpModify().sqSize(4)), "no completion queue for it");
        }
    }

    @Test
    void shouldFailWithEbusyWhenResizedBelowDepth() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            for (int i = 0; i < 3; i++) {
                pair.qpA.recv(i, sge(pair.mrA, 64L * i, 64), 1);
            }
            assertErrno(Errno.EBUSY, () -> pair.qpA.modify(new QpModify().rqSize(2)));
            pair.qpA.modify(new QpModify().rqSize(3));
            assertEquals(3, pair.qpA.query().rqSize());
            assertErrno(Errno.ENOSPC, () -> pair.qpA.recv(9, sge(pair.mrA, 0, 8), 1));
            // the receives survive the resize and still work
            pair.connect();
            pair.bufB.set(ValueLayout.JAVA_LONG, 0, 42);
            pair.qpB.send(5, sge(pair.mrB, 0, 8), 1, 0, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(0, wc.id());
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(42, pair.bufA.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    @Test
    void shouldFlushEveryOutstandingRequestWhenEnteringError() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            // B stays IDLE and drops A's frames, so nothing A posts can complete.
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB);
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            final long b = pair.mrB.address();
            final int rKey = pair.mrB.rKey();
            pair.qpA.recv(100, sge(pair.mrA, 64, 64), 1);
            pair.qpA.send(1, eight, 1, 0, 0);
            pair.qpA.write(2, eight, 1, b, rKey, WrFlags.SUPPRESSED, 0);
            pair.qpA.write(3, eight, 1, b, rKey, 0, 0);
            pair.qpA.read(4, sge(pair.mrA, 128, 8), 1, b, rKey, 0);
            pair.qpA.fetchAdd(5, 1, new DataSegment().set(pair.mrA, 256, 8), b, rKey, WrFlags.SUPPRESSED);
            pair.qpA.send(6, eight, 1, WrFlags.SUPPRESSED | WrFlags.FENCED, 0);
            pair.qpA.recv(101, sge(pair.mrA, 512, 64), 1);
            pair.qpA.modify(new QpModify().state(QpState.ERROR));

            final List<WorkCompletion> wcs = pair.pollA(8);
            final WcType[] sendTypes = {WcType.SEND, WcType.RDMA_WRITE, WcType.RDMA_WRITE, WcType.RDMA_READ,
                WcType.FETCH_ADD, WcType.SEND};
            int send = 0;
            int recv = 0;
            for (final WorkCompletion wc : wcs) {
                assertEquals(WcStatus.FLUSHED, wc.status(), wc.toString());
                assertSame(pair.qpA, wc.queuePair());
                assertEquals(0, wc.length());
                if (wc.type() == WcType.RECV) {
                    assertEquals(100 + recv++, wc.id(), "receives flush in post order");
                } else {
                    assertEquals(sendTypes[send], wc.type());
                    assertEquals(++send, wc.id(), "sends flush in post order, suppressed ones too");
                }
            }
            assertEquals(6, send);
            assertEquals(2, recv);
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.send(7, eight, 1, 0, 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.recv(7, eight, 1));
        }
    }

    @Test
    void shouldMovePeerToErrorWhenOneSideEntersError() {
        try (Loopback pair = Loopback.open()) {
            pair.qpB.recv(1, sge(pair.mrB, 0, 64), 1);
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            final List<EventRecord> events = Tests.awaitEvent(pair.eventsB, r -> r.code() == EventCode.QP_ERROR);
            final EventRecord event = events.get(events.size() - 1);
            assertTrue(event.remote(), "the peer caused it: " + event);
            assertEquals(ResourceType.QP, event.type());
            assertSame(pair.qpB, event.handle());
            assertEquals(QpState.ERROR, pair.qpB.query().state());
            final WorkCompletion wc = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.FLUSHED, wc.status());
            assertEquals(WcType.RECV, wc.type());
        }
    }

    @Test
    void shouldDisconnectBothSidesGracefullyWhenNothingIsOutstanding() {
        try (Loopback pair = Loopback.open()) {
            pair.qpB.recv(1, sge(pair.mrB, 0, 64), 1);
            pair.qpB.recv(2, sge(pair.mrB, 64, 64), 1);
            pair.qpA.modify(new QpModify().state(QpState.DISCONNECT));
            assertEquals(QpState.IDLE, pair.qpA.query().state());
            final List<EventRecord> local = Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.DISCONNECT);
            assertTrue(!local.get(local.size() - 1).remote());
            final List<EventRecord> remote = Tests.awaitEvent(pair.eventsB,
                r -> r.code() == EventCode.DISCONNECT);
            assertTrue(remote.get(remote.size() - 1).remote(), "the peer asked: the remote bit is set");
            assertEquals(EventCode.DISCONNECT.code() | EventCode.REMOTE_BIT, remote.get(remote.size() - 1).rawCode());
            assertEquals(QpState.IDLE, pair.qpB.query().state());
            final List<WorkCompletion> flushed = pair.pollB(2);
            assertEquals(WcStatus.FLUSHED, flushed.get(0).status());
            assertEquals(WcStatus.FLUSHED, flushed.get(1).status());
            // IDLE again: both may connect anew
            pair.connect();
            exchange(pair, 7);
        }
    }

    @Test
    void shouldEndInErrorWhenDisconnectFlushesSendWork() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB); // B stays IDLE: A's send never completes
            pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0);
            pair.qpA.modify(new QpModify().state(QpState.DISCONNECT));
            assertEquals(QpState.ERROR, pair.qpA.query().state(), "work that never ran makes it an error");
            assertEquals(WcStatus.FLUSHED, Tests.pollOne(pair.cqA).status());
        }
    }

    @Test
    void shouldWorkAgainWhenRecoveredThroughIdle() {
        try (Loopback pair = Loopback.open()) {
            exchange(pair, 1);
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            Loopback.awaitState(pair.qpB, QpState.ERROR);
            pair.qpA.modify(new QpModify().state(QpState.IDLE));
            pair.qpB.modify(new QpModify().state(QpState.IDLE));
            assertEquals(QpState.IDLE, pair.qpA.query().state());
            pair.connect();
            for (int i = 2; i < 6; i++) {
                exchange(pair, i);
            }
        }
    }

    @Test
    void shouldDiscardQueuedWorkWithoutCompletionsWhenReset() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            pair.qpA.recv(1, sge(pair.mrA, 0, 8), 1);
            pair.qpA.recv(2, sge(pair.mrA, 8, 8), 1);
            pair.qpA.modify(new QpModify().state(QpState.IDLE));
            Tests.assertNoCompletion(pair.cqA, 20);
            pair.qpA.modify(new QpModify().rqSize(1)); // the receive queue is empty again
        }
    }

    @Test
    void shouldFlushAndTellPeerWhenDestroyed() {
        try (Loopback pair = Loopback.open()) {
            pair.qpA.recv(1, sge(pair.mrA, 0, 8), 1);
            pair.qpB.recv(2, sge(pair.mrB, 0, 8), 1);
            pair.qpA.close();
            pair.qpA.close(); // twice does nothing
            assertThrows(IllegalStateException.class, pair.qpA::query);
            final WorkCompletion flushed = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.FLUSHED, flushed.status());
            assertEquals(1, flushed.id());
            final List<EventRecord> events = Tests.awaitEvent(pair.eventsB,
                r -> r.code() == EventCode.QP_DESTROYED);
            assertTrue(events.get(events.size() - 1).remote());
            assertEquals(QpState.ERROR, pair.qpB.query().state());
            assertEquals(WcStatus.FLUSHED, Tests.pollOne(pair.cqB).status());
            pair.cqA.close(); // no queue pair uses it any more
        }
    }

    @Test
    void aDestroyTellsThePeerAtOnceThoughItsUnsignaledSendsAreNotAcknowledgedYet() {
        // The peer holds its ack for a second: A's requests are all unacknowledged when A goes, and its DISCONNECT
        // must still be exact (the peer expects the request after the last one sent, not after the last acked).
        final Configuration slowAcks = new Configuration().ackDelayUs(1_000_000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(slowAcks))) {
            pair.qpB.recv(1, sge(pair.mrB, 0, 8), 1);
            pair.qpB.recv(2, sge(pair.mrB, 8, 8), 1);
            pair.qpA.send(3, sge(pair.mrA, 0, 8), 1, WrFlags.SUPPRESSED, 0);
            pair.qpA.send(4, sge(pair.mrA, 8, 8), 1, WrFlags.SUPPRESSED, 0);
            Tests.expectSuccess(pair.cqB, 2);
            pair.qpA.close();
            final List<EventRecord> events = Tests.awaitEvent(pair.eventsB, r -> r.code() == EventCode.QP_DESTROYED);
            assertTrue(events.get(events.size() - 1).remote());
            assertEquals(QpState.ERROR, pair.qpB.query().state());
            assertEquals(0, pair.nicB.counters().get("rx.control_inexact"));
        }
    }

    @Test
    void shouldNotFreeNewSlotsWhenCompletionsFromBeforeResetArePolled() {
        try (Loopback pair = Loopback.open(new Loopback.Options().depth(4, 2))) {
            pair.qpB.recv(1, sge(pair.mrB, 0, 8), 1);
            pair.qpB.recv(2, sge(pair.mrB, 8, 8), 1);
            pair.qpA.send(3, sge(pair.mrA, 0, 8), 1, 0, 0);
            pair.qpA.send(4, sge(pair.mrA, 0, 8), 1, 0, 0);
            Tests.await("both receives completed", () -> pair.cqB.query().depth() == 2);
            pair.qpB.modify(new QpModify().state(QpState.ERROR));
            pair.qpB.modify(new QpModify().state(QpState.IDLE)); // the receive queue is empty again
            pair.qpB.recv(5, sge(pair.mrB, 0, 8), 1);
            pair.qpB.recv(6, sge(pair.mrB, 8, 8), 1);
            final List<WorkCompletion> old = Tests.expectSuccess(pair.cqB, 2);
            assertEquals(1, old.get(0).id());
            assertEquals(2, old.get(1).id());
            assertErrno(Errno.ENOSPC, () -> pair.qpB.recv(7, sge(pair.mrB, 0, 8), 1),
                "completions from before the reset free none of the new receives' slots");
        }
    }

    @Test
    void shouldDeliverWhenPeerConnectsAfterSenderStarted() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB);
            pair.qpB.recv(1, sge(pair.mrB, 0, 8), 1);
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, 4711);
            pair.qpA.send(2, sge(pair.mrA, 0, 8), 1, 0, 0);
            Tests.await("B dropped a frame while IDLE", () -> pair.nicB.counters().get("rx.not_connected") > 0);
            Loopback.connect(pair.qpB, pair.nicA, pair.qpA);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status(), "retransmitted once B connected");
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            assertEquals(4711, pair.bufB.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    @Test
    void shouldFailWhenPeerQueuePairDoesNotExist() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            pair.qpA.modify(new QpModify().connect(pair.nicB.address(), pair.qpB.number() + 0x100_000, pair.qpB.query().localPsn()));
            pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.FLUSHED, wc.status());
            final List<EventRecord> events = Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.INVALID_QP);
            assertTrue(events.get(events.size() - 1).remote());
            assertEquals(QpState.ERROR, pair.qpA.query().state());
        }
    }

    @Test
    void shouldDropQueuedEventsOfQueuePairWhenDestroyed() {
        try (Loopback pair = Loopback.open()) {
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            Tests.await("B's error event queued", () -> pair.eventsB.pending() > 0);
            pair.qpB.close();
            assertEquals(0, pair.eventsB.pending(), "events about a destroyed queue pair are dropped");
            pair.eventsB.generate("kept");
            pair.qpA.close();
            assertEquals(1, pair.eventsB.pending(), "user events are kept");
        }
    }

    /** One send from A to B and one back, checked byte for byte. */
    static void exchange(final Loopback pair, final long value) {
        pair.qpB.recv(value, sge(pair.mrB, 1024, 8), 1);
        pair.bufA.set(ValueLayout.JAVA_LONG, 0, value * 31);
        pair.qpA.send(value, sge(pair.mrA, 0, 8), 1, 0, 0);
        final WorkCompletion atB = Tests.pollOne(pair.cqB);
        assertEquals(WcStatus.SUCCESS, atB.status(), atB.toString());
        assertEquals(value, atB.id());
        assertEquals(8, atB.length());
        assertEquals(value * 31, pair.bufB.get(ValueLayout.JAVA_LONG, 1024));
        final WorkCompletion atA = Tests.pollOne(pair.cqA);
        assertEquals(WcStatus.SUCCESS, atA.status(), atA.toString());
        assertEquals(value, atA.id());
        assertEquals(WcType.SEND, atA.type());
    }
}
