package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The requester's ordering and give-up rules: after the work request that failed, every later one completes
 * FLUSHED, a bind that already ran included, and is undone (ibverbs.md 3.4); a read's wait for its response starts
 * at the last progress, not at its admission, and {@link WrFlags#NO_TIMEOUT} holds for it too (ibverbs.md 7.7,
 * det.md 2.2); a fence waits for an earlier read; max_or holds the request beyond it and everything behind; every
 * verb works across the 32-bit sequence wrap under loss.
 */
@Timeout(60)
class RequesterOrderingTest {
    private static final int RW = Access.REMOTE_READ | Access.REMOTE_WRITE;
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static void sleep(final long ms) {
        try {
            Thread.sleep(ms);
        } catch (final InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    // ------------------------------------------------------------------ F1: success after an error completion

    /** ibverbs 3.4: after the WR that failed, every later WR completes FLUSHED, a bind included (and is undone). */
    @Test
    void shouldFlushAndUndoABindBehindASendTheReceiverNaks() {
        try (HostileSetup s = new HostileSetup()) {
            final MemoryWindow mw = s.lo.pdA.createMw(1);
            final int seq = s.postSend(1, 0);
            s.qp().bind(2, mw, s.lo.mrA, s.lo.mrA.address(), 64, RW, 0);
            s.peer.nak(seq, WcStatus.ACCESS_ERR.code(), EventCode.ACCESS_VIOLATION.code());
            s.expectCompletion(1, WcStatus.ACCESS_ERR);
            final WorkCompletion bind = Tests.pollOne(s.lo.cqA);
            assertEquals(WcStatus.FLUSHED, bind.status(), "a WR behind the failed one: " + bind);
            assertEquals(0, mw.query().length(), "a flushed bind must not leave the window bound");
        }
    }

    @Test
    void shouldFlushABindBehindAnUnsignaledSendThatTimesOut() {
        try (HostileSetup s = new HostileSetup(new Configuration().ackTimeoutMs(50).minRtoUs(5000)
            .maxRtoUs(5000))) {
            final MemoryWindow mw = s.lo.pdA.createMw(1);
            s.postSend(1, WrFlags.SUPPRESSED); // unsignaled: its error must still be reported
            s.qp().bind(2, mw, s.lo.mrA, s.lo.mrA.address(), 64, RW, 0);
            s.expectCompletion(1, WcStatus.RETRY_EXCEEDED); // the peer never acknowledges
            final WorkCompletion bind = Tests.pollOne(s.lo.cqA);
            assertEquals(WcStatus.FLUSHED, bind.status(), "a WR behind the failed one: " + bind);
        }
    }

    // ------------------------------------------------------------------ F2: stale response clock

    /**
     * A read posted right behind a send that the peer answers receiver-not-ready for longer than ackTimeoutMs
     * (each RNR NAK is exact, so it is progress). Then the peer acknowledges both; the read's response comes 30 ms
     * later (its first copy was lost; the responder resends it after its RTO). The read must succeed.
     */
    @Test
    void shouldWaitForAResponseFromTheReadsAcknowledgementNotItsAdmission() {
        final Configuration c = new Configuration().ackTimeoutMs(300).rnrRetryCount(1000).rnrDelayUs(10_000)
            .minRtoUs(100_000).maxRtoUs(100_000);
        try (HostileSetup s = new HostileSetup(c)) {
            s.qp().send(1, sge(s.lo.mrA, 0, 8), 1, 0, 0);
            s.qp().read(100, sge(s.lo.mrA, 64, 8), 1, 0x1000, 0x77, 0);
            final int send = s.expectRequest(Frame.OP_SEND).seq();
            final HostilePeer.Received read = s.expectRequest(Frame.OP_READ);
            final long until = System.nanoTime() + 450_000_000L; // longer than ackTimeoutMs
            while (System.nanoTime() - until < 0) {
                s.peer.control(Frame.OP_NAK).seq(send).reqAck(send - 1).key(Frame.NAK_RNR).length(0).send();
                s.peer.expect("the send again", r -> r.opcode() == Frame.OP_SEND && r.seq() == send);
            }
            s.peer.control(Frame.OP_ACK).reqAck(read.seq()).send(); // both arrived; the response was lost
            sleep(30); // the responder's retransmission timeout
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8)
                .payload(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).send();
            s.expectCompletion(1, WcStatus.SUCCESS);
            final WorkCompletion wc = Tests.pollOne(s.lo.cqA);
            assertEquals(100, wc.id());
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        }
    }

    /** WrFlags.NO_TIMEOUT ("never give up on protocol retries") covers a read's wait for its response too. */
    @Test
    void shouldNeverGiveUpOnTheResponseOfANoTimeoutRead() {
        try (HostileSetup s = new HostileSetup(new Configuration().ackTimeoutMs(10).minRtoUs(1000).maxRtoUs(1000)
            .timerPeriodUs(200))) {
            s.qp().read(1, sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, WrFlags.NO_TIMEOUT);
            final HostilePeer.Received read = s.peer.expect(Frame.OP_READ);
            s.peer.ack(); // the request arrived; the response is slow
            sleep(100);
            final WorkCompletion[] wc = {new WorkCompletion()};
            final int n = s.lo.cqA.poll(wc, 1);
            assertEquals(0, n, n == 0 ? "" : wc[0].toString());
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8)
                .payload(new byte[8]).send();
            s.expectCompletion(1, WcStatus.SUCCESS);
        }
    }

    /** A later read without the flag waits too: responses come in order, so failing it would flush the first. */
    @Test
    void shouldNotGiveUpALaterReadWhileANoTimeoutReadAheadOfItWaits() {
        try (HostileSetup s = new HostileSetup(new Configuration().ackTimeoutMs(100).minRtoUs(10_000)
            .maxRtoUs(10_000).timerPeriodUs(200))) {
            s.qp().read(1, sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, WrFlags.NO_TIMEOUT);
            final HostilePeer.Received first = s.expectRequest(Frame.OP_READ);
            s.qp().read(2, sge(s.lo.mrA, 8, 8), 1, 0x2000, 0x77, 0);
            final HostilePeer.Received second = s.expectRequest(Frame.OP_READ); // not a resend of the first
            s.peer.ack(); // both arrived; the responses are slow
            sleep(400); // four ack timeouts
            final WorkCompletion[] wc = {new WorkCompletion()};
            final int n = s.lo.cqA.poll(wc, 1);
            assertEquals(0, n, n == 0 ? "" : "gave up behind a NO_TIMEOUT read: " + wc[0]);
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(first.msgId()).length(8)
                .payload(new byte[8]).send();
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(second.msgId()).length(8)
                .payload(new byte[8]).send();
            s.expectCompletion(1, WcStatus.SUCCESS);
            s.expectCompletion(2, WcStatus.SUCCESS);
        }
    }

    /** Control: the same late response for a read posted on an idle queue pair succeeds. */
    @Test
    void shouldSurviveOneLateResponseOnAnIdleQueuePair() {
        final Configuration c = new Configuration().windowFrames(4).ackTimeoutMs(200).minRtoUs(100_000)
            .maxRtoUs(100_000);
        try (HostileSetup s = new HostileSetup(c)) {
            final HostilePeer.Received read = s.postRead(100, 8);
            s.peer.control(Frame.OP_ACK).reqAck(read.seq()).send();
            sleep(30);
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8)
                .payload(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).send();
            s.expectCompletion(100, WcStatus.SUCCESS);
        }
    }

    // ------------------------------------------------------------------ checks expected to pass

    @Test
    void shouldHoldAFencedSendUntilTheEarlierReadCompletes() {
        try (HostileSetup s = new HostileSetup()) {
            final HostilePeer.Received read = s.postRead(1, 8);
            s.qp().send(2, sge(s.lo.mrA, 0, 8), 1, WrFlags.FENCED, 0);
            s.peer.control(Frame.OP_ACK).reqAck(read.seq()).send();
            sleep(100);
            assertTrue(s.peer.received().stream().noneMatch(r -> r.opcode() == Frame.OP_SEND), "fence broken");
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8)
                .payload(new byte[8]).send();
            s.peer.expect(Frame.OP_SEND);
            s.expectCompletion(1, WcStatus.SUCCESS);
        }
    }

    @Test
    void shouldHoldTheReadBeyondMaxOrAndEverythingBehindIt() {
        try (HostileSetup s = new HostileSetup(new Loopback.Options().maxOr(2).connect(false))) {
            final HostilePeer.Received r1 = s.postRead(1, 8);
            s.postRead(2, 8);
            s.qp().read(3, sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            s.qp().send(4, sge(s.lo.mrA, 0, 8), 1, 0, 0);
            sleep(100);
            final List<HostilePeer.Received> got = s.peer.received();
            assertEquals(2, got.stream().filter(r -> r.opcode() == Frame.OP_READ).mapToInt(r -> r.seq()).distinct()
                .count(), "distinct reads sent");
            assertTrue(got.stream().noneMatch(r -> r.opcode() == Frame.OP_SEND));
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(r1.msgId()).length(8)
                .payload(new byte[8]).send();
            s.peer.expect("third read", r -> r.opcode() == Frame.OP_READ && r.msgId() != r1.msgId());
            s.expectCompletion(1, WcStatus.SUCCESS);
        }
    }

    /** Both streams start just before the 32-bit wrap and the signed boundary; lossy, duplicating fabric. */
    @Test
    void shouldRunEveryVerbAcrossTheSequenceWrapUnderLoss() {
        final Configuration faulty = new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0, 7))
            .minRtoUs(300).maxRtoUs(10_000).loopMtu(1200);
        try (Loopback p = Loopback.open(new Loopback.Options().configuration(faulty).connect(false)
            .depth(64, 64).maxOr(4).maxIr(4))) {
            final long psnA = (0xFFFF_FFF0L) | (long) 0x7FFF_FFF0 << 32;
            final long psnB = (0x7FFF_FFF8L) | (long) 0xFFFF_FFF8 << 32;
            p.qpA.modify(new QpModify().connect(p.nicB.address(), p.qpB.number(), psnB).localPsn(psnA));
            p.qpB.modify(new QpModify().connect(p.nicA.address(), p.qpA.number(), psnA).localPsn(psnB));
            Tests.fill(p.bufB.asSlice(8192, 8192), 3);
            Tests.fill(p.bufA.asSlice(32768, 4096), 4);
            final int n = 150;
            for (int i = 0; i < n; i++) {
                p.qpA.fetchAdd(3L * i, 1, new DataSegment().set(p.mrA, 8L * (i % 64), 8), p.mrB.address(),
                    p.mrB.rKey(), 0);
                p.qpA.read(3L * i + 1, sge(p.mrA, 16384, 4096), 1, p.mrB.address() + 8192 + (i % 8) * 512L,
                    p.mrB.rKey(), 0);
                p.qpA.write(3L * i + 2, sge(p.mrA, 32768, 4096), 1, p.mrB.address() + 16384, p.mrB.rKey(), 0, 0);
                final List<WorkCompletion> wcs = Tests.pollUntil(p.cqA, 3);
                for (int k = 0; k < 3; k++) {
                    assertEquals(3L * i + k, wcs.get(k).id(), wcs.get(k).toString());
                    assertEquals(WcStatus.SUCCESS, wcs.get(k).status(), wcs.get(k).toString());
                }
                assertEquals(i, p.bufA.get(LE_LONG, 8L * (i % 64)), "fetch-add original of #" + i);
                Tests.assertSameBytes(p.bufB.asSlice(8192 + (i % 8) * 512L, 4096), p.bufA.asSlice(16384, 4096));
            }
            assertEquals(n, p.bufB.get(LE_LONG, 0));
            Tests.assertSameBytes(p.bufA.asSlice(32768, 4096), p.bufB.asSlice(16384, 4096));
                    }
    }
}
