package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Completion queues ({@code det_create_cq}, {@code det_resize_cq}, {@code det_arm_cq}, {@code det_poll_cq}). */
@Timeout(30)
class CompletionQueueTest {

    @Test
    void shouldRoundSizeUpToWholePagesWhenCreated() {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("cq"), null);
            assertEquals(0, nic.createCq(0, null).query().size());
            assertEquals(102, nic.createCq(1, null).query().size());
            assertEquals(102, nic.createCq(102, null).query().size());
            assertEquals(204, nic.createCq(103, null).query().size());
            final CqAttributes a = nic.createCq(5, null).query();
            assertEquals(CqState.READY, a.state());
            assertEquals(0, a.arm());
            assertEquals(0, a.depth());
        }
    }

    @Test
    void shouldFailWithEinvalWhenSizeIsOutOfRange() {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("cq"), null);
            assertErrno(Errno.EINVAL, () -> nic.createCq(-1, null));
            assertErrno(Errno.EINVAL, () -> nic.createCq(nic.query().maxCqSize() + 1, null));
            final CompletionQueue cq = nic.createCq(1, null);
            assertErrno(Errno.EINVAL, () -> cq.resize(-1));
            assertErrno(Errno.EINVAL, () -> cq.resize(nic.query().maxCqSize() + 1));
            cq.resize(300);
            assertEquals(306, cq.query().size());
            cq.resize(0);
            assertEquals(0, cq.query().size());
        }
    }

    @Test
    void shouldFailWithEbusyWhenResizedBelowDepth() {
        try (Loopback pair = Loopback.open()) {
            writes(pair, 3, 0);
            Tests.await("three completions queued", () -> pair.cqA.query().depth() == 3);
            assertErrno(Errno.EBUSY, () -> pair.cqA.resize(2));
            pair.cqA.resize(3);
            assertEquals(102, pair.cqA.query().size());
            pair.cqA.resize(500);
            assertEquals(510, pair.cqA.query().size());
            final List<WorkCompletion> wcs = Tests.expectSuccess(pair.cqA, 3);
            for (int i = 0; i < 3; i++) {
                assertEquals(i, wcs.get(i).id(), "resizing keeps the completions in order");
            }
        }
    }

    @Test
    void shouldFailWithEinvalWhenResizedBelowArmedThreshold() {
        try (Loopback pair = Loopback.open()) {
            pair.cqA.arm(CqArm.THRESHOLD, 50);
            assertErrno(Errno.EINVAL, () -> pair.cqA.resize(49));
            pair.cqA.resize(50);
        }
    }

    @Test
    void shouldFailWithEinvalWhenArmedWrongly() {
        try (Loopback pair = Loopback.open()) {
            assertErrno(Errno.EINVAL, () -> pair.cqA.arm(0, 0));
            assertErrno(Errno.EINVAL, () -> pair.cqA.arm(8, 0));
            assertErrno(Errno.EINVAL, () -> pair.cqA.arm(CqArm.THRESHOLD, 0));
            assertErrno(Errno.EINVAL, () -> pair.cqA.arm(CqArm.THRESHOLD, pair.cqA.query().size() + 1));
            assertEquals(0, pair.cqA.query().arm(), "a refused arm arms nothing");
            final CompletionQueue silent = pair.nicA.createCq(1, null);
            assertErrno(Errno.EINVAL, () -> silent.arm(CqArm.NEXT_SIGNALED, 0));
        }
    }

    @Test
    void shouldFireOnceWhenArmedForNextSignaled() {
        try (Loopback pair = Loopback.open()) {
            pair.cqA.arm(CqArm.NEXT_SIGNALED, 0);
            assertEquals(CqArm.NEXT_SIGNALED, pair.cqA.query().arm());
            assertEquals(0, pair.eventsA.pending(), "nothing fires before a completion");
            writes(pair, 1, 0);
            final EventRecord fired = last(Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.CQ_COMPLETION));
            assertEquals(ResourceType.CQ, fired.type());
            assertSame(pair.cqA, fired.handle());
            assertEquals(0, pair.cqA.query().arm(), "firing disarms");
            writes(pair, 1, 1);
            Tests.await("second completion queued", () -> pair.cqA.query().depth() == 2);
            assertEquals(0, pair.eventsA.pending(), "one-shot: the second completion fires nothing");
        }
    }

    @Test
    void shouldNotFireForQueuedCompletionsWhenArmedForNextSignaled() {
        try (Loopback pair = Loopback.open()) {
            writes(pair, 1, 0);
            Tests.await("completion queued", () -> pair.cqA.query().depth() == 1);
            pair.cqA.arm(CqArm.NEXT_SIGNALED, 0);
            assertEquals(0, pair.eventsA.pending(), "completions queued before arming fire nothing");
            writes(pair, 1, 1);
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.CQ_COMPLETION);
        }
    }

    @Test
    void shouldFireOnlyOnSolicitedCompletionWhenArmedForNextSolicited() {
        try (Loopback pair = Loopback.open()) {
            pair.cqB.arm(CqArm.NEXT_SOLICITED, 0);
            pair.qpB.recv(1, sge(pair.mrB, 0, 64), 1);
            pair.qpB.recv(2, sge(pair.mrB, 64, 64), 1);
            pair.qpA.send(10, sge(pair.mrA, 0, 8), 1, 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            Tests.await("unsolicited receive queued", () -> pair.cqB.query().depth() == 1);
            assertEquals(0, pair.eventsB.pending(), "an unsolicited receive does not fire NEXT_SOLICITED");
            pair.qpA.send(11, sge(pair.mrA, 0, 8), 1, WrFlags.SOLICITED, 0);
            Tests.awaitEvent(pair.eventsB, r -> r.code() == EventCode.CQ_COMPLETION);
            final List<WorkCompletion> wcs = Tests.expectSuccess(pair.cqB, 2);
            assertEquals(0, wcs.get(0).flags() & WcFlags.SOLICITED);
            assertEquals(WcFlags.SOLICITED, wcs.get(1).flags() & WcFlags.SOLICITED);
        }
    }

    @Test
    void shouldFireOnErrorCompletionWhenArmedForNextSolicited() {
        try (Loopback pair = Loopback.open()) {
            pair.cqA.arm(CqArm.NEXT_SOLICITED, 0);
            pair.qpA.write(5, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), 0x7fff_ff01, 0, 0);
            final List<EventRecord> events = Tests.awaitEvent(pair.eventsA,
                r -> r.code() == EventCode.CQ_COMPLETION);
            assertSame(pair.cqA, last(events).handle());
            assertEquals(WcStatus.PROTECTION_ERR, Tests.pollOne(pair.cqA).status());
        }
    }

    @Test
    void shouldFireWhenThresholdIsReached() {
        try (Loopback pair = Loopback.open()) {
            pair.cqA.arm(CqArm.THRESHOLD, 3);
            assertEquals(3, pair.cqA.query().threshold());
            writes(pair, 2, 0);
            Tests.await("two completions queued", () -> pair.cqA.query().depth() == 2);
            assertEquals(0, pair.eventsA.pending(), "below the threshold nothing fires");
            writes(pair, 1, 2);
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.CQ_COMPLETION);
            assertEquals(0, pair.cqA.query().arm());
        }
    }

    @Test
    void shouldFireAtOnceWhenThresholdIsAlreadyMet() {
        try (Loopback pair = Loopback.open()) {
            writes(pair, 2, 0);
            Tests.await("two completions queued", () -> pair.cqA.query().depth() == 2);
            pair.cqA.arm(CqArm.THRESHOLD, 2);
            assertEquals(1, pair.eventsA.pending(), "a threshold already met fires during the arm");
            assertEquals(0, pair.cqA.query().arm());
        }
    }

    @Test
    void shouldCombineFlagsAndKeepLastThresholdWhenArmedTwice() {
        try (Loopback pair = Loopback.open()) {
            pair.cqA.arm(CqArm.THRESHOLD, 5);
            pair.cqA.arm(CqArm.NEXT_SOLICITED | CqArm.THRESHOLD, 2);
            final CqAttributes a = pair.cqA.query();
            assertEquals(CqArm.NEXT_SOLICITED | CqArm.THRESHOLD, a.arm());
            assertEquals(2, a.threshold());
            writes(pair, 2, 0);
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.CQ_COMPLETION);
        }
    }

    @Test
    void shouldRefuseDestroyWithEbusyWhenQueuePairsUseIt() {
        try (Loopback pair = Loopback.open()) {
            assertErrno(Errno.EBUSY, pair.cqA::close);
            pair.qpA.close();
            pair.cqA.close();
            pair.cqA.close(); // twice does nothing
            assertThrows(IllegalStateException.class, () -> pair.cqA.poll(new WorkCompletion[1]));
            assertThrows(IllegalStateException.class, () -> pair.cqA.arm(CqArm.NEXT_SIGNALED, 0));
        }
    }

    @Test
    void shouldDropQueuedCompletionEventWhenDestroyed() {
        try (Loopback pair = Loopback.open()) {
            final CompletionQueue cq = pair.nicA.createCq(1, pair.eventsA);
            cq.arm(CqArm.THRESHOLD, 1);
            final QueuePair qp = pair.pdA.createQp(QpCreate.of(cq, 1, 1));
            qp.recv(2, sge(pair.mrA, 0, 8), 1);
            qp.modify(new QpModify().state(QpState.ERROR)); // flushes the receive: the threshold fires
            assertEquals(1, pair.eventsA.pending());
            qp.close();
            cq.close();
            assertEquals(0, pair.eventsA.pending(), "events about a destroyed completion queue are dropped");
        }
    }

    @Test
    void shouldTakeAtMostMaxWhenPolled() {
        try (Loopback pair = Loopback.open()) {
            writes(pair, 4, 0);
            Tests.await("four completions queued", () -> pair.cqA.query().depth() == 4);
            final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            assertEquals(0, pair.cqA.poll(wc, 0));
            assertEquals(1, pair.cqA.poll(wc, 1));
            assertEquals(0, wc[0].id());
            assertEquals(3, pair.cqA.poll(wc, 10), "never more than the array holds");
            assertEquals(3, wc[2].id());
            assertEquals(0, pair.cqA.poll(wc));
            assertEquals(0, pair.cqA.query().depth());
        }
    }

    @Test
    void shouldEnterErrorAndFailQueuePairWhenOverrun() {
        try (Loopback pair = Loopback.open(new Loopback.Options().cqSize(1).depth(200, 8))) {
            final int size = pair.cqA.query().size();
            assertEquals(102, size);
            writes(pair, size + 1, 0);
            Tests.await("the completion queue in ERROR", () -> pair.cqA.query().state() == CqState.ERROR);
            final List<EventRecord> events = Tests.awaitEvent(pair.eventsA,
                r -> r.code() == EventCode.CQ_OVERRUN);
            assertSame(pair.cqA, last(events).handle());
            assertEquals(ResourceType.CQ, last(events).type());
            Loopback.awaitState(pair.qpA, QpState.ERROR);
            Loopback.awaitState(pair.qpB, QpState.ERROR);
            final List<WorkCompletion> kept = pair.pollA(size);
            for (int i = 0; i < size; i++) {
                assertEquals(i, kept.get(i).id());
                assertEquals(WcStatus.SUCCESS, kept.get(i).status());
            }
            assertErrno(Errno.ENOTCONN, () -> writes(pair, 1, 0));
        }
    }

    @Test
    void aSendRefusedByAReceiverWhoseQueueOverrunsNeverCompletesSuccessfully() {
        // B refuses A's 32-byte send into its 16-byte receive (BOUNDS_ERR), but that receive completion overruns
        // B's full queue, which fails B's queue pair with a DISCONNECT: its acks must not count the refused send.
        try (Loopback pair = Loopback.open(new Loopback.Options().cqSize(1).depth(200, 8))) {
            fillBsQueue(pair);
            pair.qpB.recv(500, sge(pair.mrB, 0, 16), 1);
            pair.qpA.send(1, sge(pair.mrA, 0, 32), 1, 0, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(1, wc.id());
            assertEquals(WcStatus.BOUNDS_ERR, wc.status(), "B's NAK, sent before its DISCONNECT: " + wc);
            Tests.awaitEvent(pair.eventsB, r -> r.code() == EventCode.CQ_OVERRUN);
        }
    }

    @Test
    void aMessageAcceptedByAReceiverWhoseQueueOverrunsNeverCompletesSuccessfully() {
        // B takes A's send and its write with immediate (each fits its receive), but neither receive completion fits
        // B's full queue: B's application never learns of the message, so A's request must not complete SUCCESS
        // (ibverbs.md 4.3: a responder CQ overflow gives the requester no success). Before, the DISCONNECT B sent
        // as it failed acknowledged the message and A completed it SUCCESS.
        for (final boolean write : new boolean[] {false, true}) {
            try (Loopback pair = Loopback.open(new Loopback.Options().cqSize(1).depth(200, 8))) {
                fillBsQueue(pair);
                pair.qpB.recv(500, sge(pair.mrB, 0, 64), 1);
                if (write) {
                    pair.qpA.write(1, sge(pair.mrA, 0, 32), 1, pair.mrB.address() + 256, pair.mrB.rKey(),
                        WrFlags.IMMEDIATE, 7);
                } else {
                    pair.qpA.send(1, sge(pair.mrA, 0, 32), 1, 0, 0);
                }
                final WorkCompletion wc = Tests.pollOne(pair.cqA);
                assertEquals(1, wc.id());
                assertEquals(WcStatus.REMOTE_OP_ERR, wc.status(), "the receiver never saw it: " + wc);
                Tests.awaitEvent(pair.eventsB, r -> r.code() == EventCode.CQ_OVERRUN && r.handle() == pair.cqB);
                Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.QP_RQ_ERROR && r.remote());
                pair.awaitBothInError();
            }
        }
    }

    @Test
    void aReceiverWhoseQueueOverrunsSaysQpRqErrorOnce() {
        // As above, with a second receive posted: the failure raises QP_RQ_ERROR (the lost receive completion), and
        // the flush of the second receive, whose completion the queue in ERROR cannot take either, must not raise
        // it again (det.md 3.5: the queue whose completion was lost says so once). It did: two QP_RQ_ERROR at B.
        try (Loopback pair = Loopback.open(new Loopback.Options().cqSize(1).depth(200, 8))) {
            fillBsQueue(pair);
            pair.qpB.recv(500, sge(pair.mrB, 0, 64), 1);
            pair.qpB.recv(501, sge(pair.mrB, 0, 64), 1);
            pair.qpA.send(1, sge(pair.mrA, 0, 32), 1, 0, 0);
            assertEquals(WcStatus.REMOTE_OP_ERR, Tests.pollOne(pair.cqA).status());
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.QP_RQ_ERROR && r.remote());
            pair.awaitBothInError();
            final long raised = Tests.drainEvents(pair.eventsB).stream()
                .filter(r -> r.code() == EventCode.QP_RQ_ERROR && r.handle() == pair.qpB).count();
            assertEquals(1, raised, "QP_RQ_ERROR raised at B");
        }
    }

    @Test
    void aNullSlotEndsThePollWithoutLosingACompletion() {
        try (Loopback pair = Loopback.open()) {
            writes(pair, 2, 0);
            Tests.await("two completions", () -> pair.cqA.query().depth() == 2);
            final WorkCompletion[] oneThenNull = {new WorkCompletion(), null};
            assertEquals(1, pair.cqA.poll(oneThenNull), "the poll stops at the null slot");
            assertEquals(0, oneThenNull[0].id());
            assertEquals(1, pair.cqA.query().depth(), "the second completion is still queued");
            assertThrows(NullPointerException.class, () -> pair.cqA.poll(new WorkCompletion[1]));
            assertEquals(1, pair.cqA.query().depth(), "a refused poll takes nothing");
            assertErrno(Errno.EINVAL, () -> pair.cqA.poll(new WorkCompletion[] {new WorkCompletion()}, -1));
            assertEquals(1, Tests.pollOne(pair.cqA).id());
        }
    }

    @Test
    void aDestroyedQueuesOverrunEventsDoNotOutliveIt() {
        try (Loopback pair = Loopback.open(new Loopback.Options().cqSize(1).depth(200, 8))) {
            final CompletionQueue own = pair.nicA.createCq(1, null); // its events go to the NIC's queue
            final QueuePair qp = pair.pdA.createQp(QpCreate.of(own, 200, 1));
            final QueuePair peer = pair.pdB.createQp(QpCreate.of(pair.cqB, 4, 1));
            Loopback.connect(qp, pair.nicB, peer);
            Loopback.connect(peer, pair.nicA, qp);
            final int size = own.query().size();
            for (int i = 0; i <= size; i++) {
                qp.write(i, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            }
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.CQ_OVERRUN && r.handle() == own);
            qp.close();
            own.close();
            final EventRecord rec = new EventRecord();
            while (pair.eventsA.pending() > 0) {
                pair.eventsA.waitOn(0, rec);
                assertNotSame(own, rec.handle(), "an event about the destroyed queue: " + rec);
            }
        }
    }

    /** 110 receives posted on a queue pair whose queue holds 102: a flush overruns it. */
    private static QueuePair overfullOfReceives(final Loopback pair, final boolean connect) {
        final CompletionQueue small = pair.nicA.createCq(1, null);
        final QueuePair qp = pair.pdA.createQp(QpCreate.of(small, 200, 1));
        if (connect) {
            final QueuePair peer = pair.pdB.createQp(QpCreate.of(pair.cqB, 4, 1));
            Loopback.connect(qp, pair.nicB, peer);
            Loopback.connect(peer, pair.nicA, qp);
        }
        for (int i = 0; i < 110; i++) {
            qp.recv(i, sge(pair.mrA, 0, 8), 1);
        }
        return qp;
    }

    @Test
    void aFlushThatOverrunsItsQueueRaisesQpRqError() {
        // det.md 3.5: completions lost while flushing put the queue pair in ERROR and say which queue.
        try (Loopback pair = Loopback.open()) {
            final QueuePair qp = overfullOfReceives(pair, false);
            qp.modify(new QpModify().state(QpState.ERROR));
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.QP_RQ_ERROR && r.handle() == qp);
        }
    }

    @Test
    void aFlushOfSendsThatOverrunsItsQueueRaisesQpSqError() {
        // Sends held behind an RNR wait (A's peer posted no receive), their queue too small for their flush.
        final Configuration slow = new Configuration().rnrRetryCount(1_000).rnrDelayUs(100_000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(slow))) {
            final CompletionQueue small = pair.nicA.createCq(1, null);
            final QueuePair qp = pair.pdA.createQp(QpCreate.of(small, 200, 1));
            final QueuePair peer = pair.pdB.createQp(QpCreate.of(pair.cqB, 4, 1));
            Loopback.connect(qp, pair.nicB, peer);
            Loopback.connect(peer, pair.nicA, qp);
            for (int i = 0; i < 110; i++) {
                qp.send(i, sge(pair.mrA, 0, 8), 1, 0, 0);
            }
            qp.modify(new QpModify().state(QpState.ERROR));
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.QP_SQ_ERROR && r.handle() == qp);
        }
    }

    @Test
    void aDisconnectWhoseFlushOverrunsItsQueueEndsInErrorNotIdle() {
        // Receives lost in the flush: the queue pair must not look closed cleanly and reusable.
        try (Loopback pair = Loopback.open()) {
            final QueuePair qp = overfullOfReceives(pair, true);
            qp.modify(new QpModify().state(QpState.DISCONNECT));
            assertEquals(QpState.ERROR, qp.query().state());
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.QP_RQ_ERROR && r.handle() == qp);
        }
    }

    @Test
    void shouldKeepOrderWhenResizedAfterTheRingWrapped() {
        try (Loopback pair = Loopback.open(new Loopback.Options().cqSize(102).depth(128, 4))) {
            writes(pair, 80, 0);
            Tests.expectSuccess(pair.cqA, 80);
            writes(pair, 50, 100); // entries 80..101, then 0..27 of the ring
            Tests.await("fifty completions queued", () -> pair.cqA.query().depth() == 50);
            pair.cqA.resize(300);
            final List<WorkCompletion> wcs = Tests.expectSuccess(pair.cqA, 50);
            for (int i = 0; i < 50; i++) {
                assertEquals(100 + i, wcs.get(i).id());
            }
        }
    }

    @Test
    void shouldFailOtherQueuePairWhenItCompletesIntoOverrunQueue() {
        try (Loopback pair = Loopback.open(new Loopback.Options().cqSize(1).depth(200, 8))) {
            final QueuePair other = pair.pdA.createQp(QpCreate.of(pair.cqA, 4, 1));
            final QueuePair otherPeer = pair.pdB.createQp(QpCreate.of(pair.cqB, 4, 1));
            Loopback.connect(other, pair.nicB, otherPeer);
            Loopback.connect(otherPeer, pair.nicA, other);
            writes(pair, 103, 0);
            Tests.await("the completion queue in ERROR", () -> pair.cqA.query().state() == CqState.ERROR);
            Loopback.awaitState(pair.qpA, QpState.ERROR);
            // the other queue pair fails when its own completion finds the queue in error
            other.write(7, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            Loopback.awaitState(other, QpState.ERROR);
            Tests.awaitEvent(pair.eventsA, r -> r.code() == EventCode.CQ_FATAL);
        }
    }

    /** Posts {@code n} signaled 8-byte writes from A to B with ids from {@code firstId}. */
    private static void writes(final Loopback pair, final int n, final long firstId) {
        final DataSegment[] from = sge(pair.mrA, 0, 8);
        for (int i = 0; i < n; i++) {
            pair.qpA.write(firstId + i, from, 1, pair.mrB.address() + 8L * (i % 64), pair.mrB.rKey(), 0, 0);
        }
    }

    private static EventRecord last(final List<EventRecord> events) {
        assertTrue(!events.isEmpty());
        return events.get(events.size() - 1);
    }

    /** Fills B's completion queue with completions of B's own writes (B polls none), and waits until it is full. */
    private static void fillBsQueue(final Loopback pair) {
        final int size = pair.cqB.query().size();
        for (int i = 0; i < size; i++) {
            pair.qpB.write(1000 + i, sge(pair.mrB, 0, 8), 1, pair.mrA.address(), pair.mrA.rKey(), 0, 0);
        }
        Tests.await("B's queue full", () -> pair.cqB.query().depth() == size);
    }
}
