package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The requester's side of the protocol, frame by frame against a {@link HostilePeer} that plays a correct but
 * demanding responder: what a cumulative and a selective acknowledgement complete and resend, going back after a
 * retransmission timeout, the window, max_or, fences, the receiver-not-ready hold, and responses that arrive
 * beyond a gap or acknowledge the requests before them. Each test observes the frames the victim puts on the
 * fabric and the completions it reports.
 */
@Timeout(60)
class RequesterRecoveryTest {
    /** An RTO far beyond any test, so that only acknowledgements make the victim resend. */
    private static Configuration noTimer() {
        return new Configuration().minRtoUs(3_000_000).maxRtoUs(3_000_000);
    }

    /** Posts {@code n} sends of 8 bytes (ids 0..n-1) and returns the sequence number of the first. */
    private static int postSends(final HostileSetup s, final int n, final int flags) {
        for (int i = 0; i < n; i++) {
            s.qp().send(i, Loopback.sge(s.lo.mrA, 8L * i, 8), 1, flags, 0);
        }
        final int first = s.peer.expect(Frame.OP_SEND).seq();
        for (int i = 1; i < n; i++) {
            final int seq = first + i;
            s.peer.expect("send " + seq, r -> r.opcode() == Frame.OP_SEND && r.seq() == seq);
        }
        return first;
    }

    private static void ackUpTo(final HostileSetup s, final int seq, final int sack) {
        final long acks = s.counter("acks.received");
        s.peer.control(Frame.OP_ACK).reqAck(seq).sack(sack).send();
        Tests.await("the ACK taken", () -> s.counter("acks.received") > acks);
    }

    private static void expectSuccesses(final HostileSetup s, final long firstId, final int n) {
        final List<WorkCompletion> wcs = Tests.pollUntil(s.lo.cqA, n);
        for (int i = 0; i < n; i++) {
            assertEquals(firstId + i, wcs.get(i).id(), wcs.toString());
            assertEquals(WcStatus.SUCCESS, wcs.get(i).status(), wcs.toString());
        }
    }

    /** The sequence numbers of the sends the victim put on the fabric from frame {@code from} on. */
    private static List<Integer> sendsFrom(final HostileSetup s, final int from) {
        final List<HostilePeer.Received> all = s.peer.received();
        final List<Integer> seqs = new ArrayList<>();
        for (int i = from; i < all.size(); i++) {
            if (all.get(i).opcode() == Frame.OP_SEND) {
                seqs.add(all.get(i).seq());
            }
        }
        return seqs;
    }

    private static int framesSoFar(final HostileSetup s) {
        return s.peer.received().size();
    }

    @Test
    void shouldResendOnlyTheGapsBelowSelectivelyAcknowledgedFramesAndEachOnce() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            final int first = postSends(s, 5, 0);
            final int mark = framesSoFar(s);
            // Nothing acknowledged; the peer holds first+2 and first+4 (bit i: ack + 2 + i).
            ackUpTo(s, first - 1, 1 << 1 | 1 << 3);
            Tests.await("three gaps resent", () -> s.counter("frames.sack_retransmitted") == 3);
            s.peer.expect("the last gap", r -> r.opcode() == Frame.OP_SEND && r.seq() == first + 3);
            assertEquals(List.of(first, first + 1, first + 3), sendsFrom(s, mark));
            for (final HostilePeer.Received r : s.peer.received().subList(mark, framesSoFar(s))) {
                assertTrue((r.flags() & Frame.FLAG_FORCE_ACK) != 0, "a resent frame asks for an ACK: " + r);
            }
            assertEquals(3, s.counter("frames.retransmitted"));
            Tests.assertNoCompletion(s.lo.cqA, 10);
            // The same news again: each gap is resent once per recovery.
            ackUpTo(s, first - 1, 1 << 1 | 1 << 3);
            // Progress up to first+1, the peer still holding first+4 (now bit 1): first+3 was resent already.
            ackUpTo(s, first + 1, 1 << 1);
            expectSuccesses(s, 0, 2);
            assertEquals(3, s.counter("frames.sack_retransmitted"));
            ackUpTo(s, first + 4, 0);
            expectSuccesses(s, 2, 3);
            assertEquals(List.of(first, first + 1, first + 3), sendsFrom(s, mark));
            s.assertConnected();
        }
    }

    @Test
    void shouldResendGapsAtOnceWhenAnAdvancingAcknowledgementAlsoNamesHeldFrames() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            final int first = postSends(s, 5, 0);
            final int mark = framesSoFar(s);
            // first acknowledged; the peer holds first+3 (bit 1: ack + 2 + 1).
            ackUpTo(s, first, 1 << 1);
            Tests.await("two gaps resent", () -> s.counter("frames.sack_retransmitted") == 2);
            s.peer.expect("the last gap", r -> r.opcode() == Frame.OP_SEND && r.seq() == first + 2);
            assertEquals(List.of(first + 1, first + 2), sendsFrom(s, mark));
            expectSuccesses(s, 0, 1);
            ackUpTo(s, first + 4, 0);
            expectSuccesses(s, 1, 4);
            s.assertConnected();
        }
    }

    @Test
    void shouldFailTheRequestANakNamesAndFlushTheRest() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            final int first = postSends(s, 3, 0);
            // A NAK of the first, acknowledging nothing.
            s.peer.control(Frame.OP_NAK).seq(first).reqAck(first - 1).key(WcStatus.REMOTE_OP_ERR.code())
                .length(EventCode.QP_FATAL.code()).send();
            final List<WorkCompletion> wcs = Tests.pollUntil(s.lo.cqA, 3);
            assertEquals(WcStatus.REMOTE_OP_ERR, wcs.get(0).status(), wcs.toString());
            assertEquals(WcStatus.FLUSHED, wcs.get(1).status(), wcs.toString());
            assertEquals(WcStatus.FLUSHED, wcs.get(2).status(), wcs.toString());
            assertEquals(1, s.counter("wr.completed"));
            assertEquals(2, s.counter("wr.flushed"));
            assertEquals(3, s.counter("wr.posted"));
            assertEquals(1, s.counter("naks.received"));
            s.awaitQpEvent(EventCode.QP_FATAL, true);
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldFailTheConnectionWhenReceiverNotReadyNakNamesAWriteWithoutImmediate() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            s.qp().write(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0, 0);
            final int seq = s.peer.expect(Frame.OP_WRITE).seq();
            s.peer.nak(seq, Frame.NAK_RNR, 0);
            final WorkCompletion wc = Tests.pollOne(s.lo.cqA);
            assertEquals(WcStatus.BAD_RESPONSE, wc.status(), wc.toString());
            s.awaitProtocolError(EventCode.QP_ERROR);
        }
    }

    @Test
    void shouldCompleteOnlyWhatTheCumulativeAcknowledgementCovers() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            final int first = postSends(s, 3, 0);
            final long unsent = s.counter("rx.ack_unsent");
            s.peer.control(Frame.OP_ACK).reqAck(first + 5).send(); // beyond anything sent: dropped whole, counted
            Tests.await("the ACK of unsent data dropped", () -> s.counter("rx.ack_unsent") > unsent);
            Tests.assertNoCompletion(s.lo.cqA, 10);
            ackUpTo(s, first, 0);
            expectSuccesses(s, 0, 1);
            Tests.assertNoCompletion(s.lo.cqA, 10);
            ackUpTo(s, first - 1, 0); // an old ACK changes nothing
            ackUpTo(s, first + 2, 0);
            expectSuccesses(s, 1, 2);
            assertEquals(0, s.counter("frames.retransmitted"));
            s.assertConnected();
        }
    }

    @Test
    void shouldGoBackToTheFirstUnacknowledgedFrameAfterTimeout() {
        try (HostileSetup s = new HostileSetup(new Configuration().minRtoUs(20_000).maxRtoUs(20_000))) {
            final int first = postSends(s, 3, 0);
            ackUpTo(s, first, 0);
            expectSuccesses(s, 0, 1);
            // Every frame sent before the ACK was taken is in the ring by now: what comes later is resent after it.
            final int mark = framesSoFar(s);
            Tests.await("a round of resends after the ACK", () -> sendsFrom(s, mark).contains(first + 2));
            final List<Integer> resent = sendsFrom(s, mark);
            assertEquals(first + 1, resent.get(0), resent.toString());
            assertTrue(resent.stream().allMatch(q -> q == first + 1 || q == first + 2), resent.toString());
            assertTrue(s.counter("retransmit.timeouts") >= 1);
            ackUpTo(s, first + 2, 0);
            expectSuccesses(s, 1, 2);
            s.assertConnected();
        }
    }

    @Test
    void shouldSendNoMoreThanTheWindowBeyondTheAcknowledgement() {
        try (HostileSetup s = new HostileSetup(noTimer().windowFrames(4))) {
            // frames of more than 2 KiB: small ones may be four windows (SmallFrameWindowTest)
            for (int i = 0; i < 6; i++) {
                s.qp().send(i, Loopback.sge(s.lo.mrA, 4096L * i, 4096), 1, 0, 0);
            }
            final int first = s.peer.expect(Frame.OP_SEND).seq();
            s.peer.expect("the window's last", r -> r.opcode() == Frame.OP_SEND && r.seq() == first + 3);
            Tests.assertNoCompletion(s.lo.cqA, 10);
            assertEquals(List.of(first, first + 1, first + 2, first + 3), sendsFrom(s, 0));
            ackUpTo(s, first + 1, 0);
            s.peer.expect("the rest", r -> r.opcode() == Frame.OP_SEND && r.seq() == first + 5);
            expectSuccesses(s, 0, 2);
            ackUpTo(s, first + 5, 0);
            expectSuccesses(s, 2, 4);
            assertEquals(6, sendsFrom(s, 0).size());
            s.assertConnected();
        }
    }

    @Test
    void shouldAskForAnAcknowledgementOnlyAtTheEndOfAMessageUnlessSuppressed() {
        try (HostileSetup s = new HostileSetup(noTimer().loopMtu(1000))) {
            s.qp().send(0, Loopback.sge(s.lo.mrA, 0, 2000), 1, 0, 0);
            final HostilePeer.Received a = s.peer.expect(Frame.OP_SEND);
            final HostilePeer.Received b = s.peer.expect(Frame.OP_SEND);
            final HostilePeer.Received c = s.peer.expect(Frame.OP_SEND);
            assertEquals(0, a.flags() & (Frame.FLAG_FORCE_ACK | Frame.FLAG_LAST), a.toString());
            assertEquals(0, b.flags() & (Frame.FLAG_FORCE_ACK | Frame.FLAG_LAST), b.toString());
            assertEquals(Frame.FLAG_FORCE_ACK | Frame.FLAG_LAST, c.flags() & (Frame.FLAG_FORCE_ACK | Frame.FLAG_LAST),
                c.toString());
            s.qp().send(1, Loopback.sge(s.lo.mrA, 0, 8), 1, WrFlags.SUPPRESSED, 0);
            final HostilePeer.Received d = s.peer.expect(Frame.OP_SEND);
            assertEquals(Frame.FLAG_LAST, d.flags() & (Frame.FLAG_FORCE_ACK | Frame.FLAG_LAST), d.toString());
            // A message of exactly one frame's payload is one frame.
            s.qp().send(2, Loopback.sge(s.lo.mrA, 0, a.payloadLength()), 1, 0, 0);
            final HostilePeer.Received e = s.peer.expect(Frame.OP_SEND);
            assertEquals(a.payloadLength(), e.payloadLength());
            assertTrue((e.flags() & Frame.FLAG_LAST) != 0, e.toString());
            assertEquals(d.seq() + 1, e.seq());
            ackUpTo(s, e.seq(), 0);
            // The suppressed success is not reported; the next completion reaps it with its own.
            expectSuccesses(s, 0, 1);
            final WorkCompletion last = Tests.pollOne(s.lo.cqA);
            assertEquals(2, last.id(), last.toString());
            Tests.assertNoCompletion(s.lo.cqA, 10);
            assertEquals(5, sendsFrom(s, 0).size(), "no frame after the one-frame message");
            s.assertConnected();
        }
    }

    @Test
    void shouldHoldEveryFrameDuringTheReceiverNotReadyDelay() {
        try (HostileSetup s = new HostileSetup(noTimer().rnrDelayUs(3_000_000))) {
            final int first = postSends(s, 1, 0);
            s.peer.nak(first, Frame.NAK_RNR, 0);
            Tests.await("the NAK taken", () -> s.counter("rnr.naks.received") == 1);
            s.qp().send(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0, 0);
            Tests.assertNoCompletion(s.lo.cqA, 50);
            assertEquals(List.of(first), sendsFrom(s, 0), "nothing goes out during the hold");
            assertEquals(0, s.counter("frames.retransmitted"));
            s.assertConnected();
        }
    }

    @Test
    void shouldIgnoreRepeatedReceiverNotReadyNakDuringTheHold() {
        try (HostileSetup s = new HostileSetup(noTimer().rnrDelayUs(3_000_000).rnrRetryCount(1))) {
            final int first = postSends(s, 1, 0);
            s.peer.nak(first, Frame.NAK_RNR, 0);
            s.peer.nak(first, Frame.NAK_RNR, 0);
            s.peer.nak(first, Frame.NAK_RNR, 0);
            Tests.await("three NAKs taken", () -> s.counter("rnr.naks.received") == 3);
            // Only the first counts as a retry: one more would exceed rnrRetryCount 1.
            Tests.assertNoCompletion(s.lo.cqA, 10);
            s.assertConnected();
        }
    }

    @Test
    void shouldTakeAResponseAsTheAcknowledgementOfEveryRequestBeforeIt() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            final int send = postSends(s, 1, 0);
            s.qp().read(1, Loopback.sge(s.lo.mrA, 64, 8), 1, 0x1000, 0x77, 0);
            final HostilePeer.Received read = s.peer.expect(Frame.OP_READ);
            assertEquals(send + 1, read.seq());
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8)
                .reqAck(send - 1).payload(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).send();
            expectSuccesses(s, 0, 2);
            assertEquals(0x0807_0605_0403_0201L, s.lo.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 64));
            assertEquals(0, s.counter("frames.retransmitted"));
            s.assertConnected();
        }
    }

    @Test
    void shouldHoldAResponseBeyondAGapAndSelectivelyAcknowledgeIt() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            s.qp().read(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            s.qp().read(2, Loopback.sge(s.lo.mrA, 8, 8), 1, 0x2000, 0x77, 0);
            final HostilePeer.Received r1 = s.peer.expect(Frame.OP_READ);
            final HostilePeer.Received r2 = s.peer.expect(Frame.OP_READ);
            s.peer.response(Frame.OP_READ_RESP).seq(2).flags(Frame.FLAG_LAST).msgId(r2.msgId()).length(8)
                .payload(new byte[] {2, 2, 2, 2, 2, 2, 2, 2}).send();
            final HostilePeer.Received sack = s.peer.expect("a response SACK",
                r -> r.opcode() == Frame.OP_ACK && (r.flags() & Frame.FLAG_RESPONSE_SACK) != 0);
            assertEquals(1, Frame.sack(sack.frame()), sack.toString());
            Tests.assertNoCompletion(s.lo.cqA, 10);
            s.peer.response(Frame.OP_READ_RESP).seq(1).flags(Frame.FLAG_LAST).msgId(r1.msgId()).length(8)
                .payload(new byte[] {1, 1, 1, 1, 1, 1, 1, 1}).send();
            expectSuccesses(s, 1, 2);
            assertEquals(0x0101_0101_0101_0101L, s.lo.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            assertEquals(0x0202_0202_0202_0202L, s.lo.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 8));
            assertEquals(1, s.counter("rx.stashed"));
            s.assertConnected();
        }
    }

    @Test
    void shouldStartNoReadBeyondMaxOrUntilAResponseComes() {
        final Loopback.Options options = new Loopback.Options().configuration(noTimer()).connect(false).maxOr(1);
        try (HostileSetup s = new HostileSetup(options)) {
            s.qp().read(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            s.qp().read(2, Loopback.sge(s.lo.mrA, 8, 8), 1, 0x2000, 0x77, 0);
            final HostilePeer.Received r1 = s.peer.expect(Frame.OP_READ);
            s.peer.ack();
            Tests.assertNoCompletion(s.lo.cqA, 10);
            assertEquals(1, s.peer.received().stream().filter(r -> r.opcode() == Frame.OP_READ).count());
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(r1.msgId()).length(8)
                .payload(new byte[8]).send();
            final HostilePeer.Received r2 = s.peer.expect(Frame.OP_READ);
            assertEquals(0x2000, r2.address());
            expectSuccesses(s, 1, 1);
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(r2.msgId()).length(8)
                .payload(new byte[8]).send();
            expectSuccesses(s, 2, 1);
            s.assertConnected();
        }
    }

    @Test
    void shouldHoldAFencedRequestUntilEveryReadBeforeItCompletes() {
        try (HostileSetup s = new HostileSetup(noTimer())) {
            s.qp().read(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            s.qp().send(2, Loopback.sge(s.lo.mrA, 8, 8), 1, WrFlags.FENCED, 0);
            final HostilePeer.Received read = s.peer.expect(Frame.OP_READ);
            s.peer.ack();
            Tests.assertNoCompletion(s.lo.cqA, 10);
            assertEquals(0, sendsFrom(s, 0).size(), "the fenced send waits for the read");
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8)
                .payload(new byte[8]).send();
            final HostilePeer.Received send = s.peer.expect(Frame.OP_SEND);
            assertEquals(read.seq() + 1, send.seq());
            s.peer.ack();
            expectSuccesses(s, 1, 2);
            s.assertConnected();
        }
    }
}
