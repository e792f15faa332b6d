package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The responder's response stream, frame by frame against a {@link HostilePeer} that reads from the victim and
 * acknowledges the response frames as it chooses: which frames a selective acknowledgement makes the victim
 * resend, going back after a retransmission timeout, and the window over response frames. Read responses of
 * several frames come from a victim with a small MTU.
 */
@Timeout(60)
class ResponderRecoveryTest {
    private static final int READ_LENGTH = 6000;

    private static Configuration smallFrames() {
        return new Configuration().loopMtu(1000).minRtoUs(3_000_000).maxRtoUs(3_000_000);
    }

    /** Sends the peer's read of {@link #READ_LENGTH} bytes of the victim's buffer. */
    private static void read(final HostileSetup s) {
        s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(READ_LENGTH)
            .send();
    }

    /** Waits for the response frame {@code seq}. */
    private static HostilePeer.Received response(final HostileSetup s, final int seq) {
        return s.peer.expect("response " + seq, r -> r.opcode() == Frame.OP_READ_RESP && r.seq() == seq);
    }

    /** Receives every frame of the read's response and returns their sequence numbers in order. */
    private static List<Integer> wholeResponse(final HostileSetup s) {
        final List<Integer> seqs = new ArrayList<>();
        HostilePeer.Received r;
        do {
            r = s.peer.expect(Frame.OP_READ_RESP);
            seqs.add(r.seq());
        } while ((r.flags() & Frame.FLAG_LAST) == 0);
        return seqs;
    }

    private static void ackResponses(final HostileSetup s, final int rspAck, final int sack) {
        final long acks = s.counter("acks.received");
        s.peer.control(Frame.OP_ACK).flags(sack != 0 ? Frame.FLAG_RESPONSE_SACK : 0).rspAck(rspAck).sack(sack)
            .send();
        Tests.await("the ACK taken", () -> s.counter("acks.received") > acks);
    }

    private static List<Integer> responsesFrom(final HostileSetup s, final int from) {
        final List<HostilePeer.Received> all = s.peer.received();
        final List<Integer> seqs = new ArrayList<>();
        for (int i = from; i < all.size(); i++) {
            if (all.get(i).opcode() == Frame.OP_READ_RESP) {
                seqs.add(all.get(i).seq());
            }
        }
        return seqs;
    }

    @Test
    void shouldResendOnlyTheResponseFramesMissingBelowSelectivelyAcknowledgedOnes() {
        try (HostileSetup s = new HostileSetup(smallFrames())) {
            read(s);
            final List<Integer> seqs = wholeResponse(s);
            assertTrue(seqs.size() >= 6, seqs.toString());
            final int first = seqs.get(0);
            final int mark = s.peer.received().size();
            // Nothing acknowledged; the peer holds first+2 and first+4 (bit i: ack + 2 + i).
            ackResponses(s, first - 1, 1 << 1 | 1 << 3);
            response(s, first + 3);
            Tests.await("three frames resent", () -> s.counter("frames.sack_retransmitted") == 3);
            assertEquals(List.of(first, first + 1, first + 3), responsesFrom(s, mark));
            for (final HostilePeer.Received r : s.peer.received().subList(mark, s.peer.received().size())) {
                // (an ACK of the peer's read request may go out meanwhile, on a slow machine: not a resend)
                assertTrue(r.opcode() != Frame.OP_READ_RESP || (r.flags() & Frame.FLAG_FORCE_ACK) != 0,
                    "a resent frame asks for an ACK: " + r);
            }
            // The same news again: each frame is resent once per recovery.
            ackResponses(s, first - 1, 1 << 1 | 1 << 3);
            assertEquals(3, s.counter("frames.sack_retransmitted"));
            assertEquals(3, s.counter("frames.retransmitted"));
            ackResponses(s, seqs.get(seqs.size() - 1), 0);
            assertEquals(List.of(first, first + 1, first + 3), responsesFrom(s, mark));
            s.assertConnected();
        }
    }

    @Test
    void shouldGoBackToTheFirstUnacknowledgedResponseFrameAfterTimeout() {
        try (HostileSetup s = new HostileSetup(smallFrames().minRtoUs(20_000).maxRtoUs(20_000))) {
            read(s);
            final List<Integer> seqs = wholeResponse(s);
            final int first = seqs.get(0);
            final int last = seqs.get(seqs.size() - 1);
            ackResponses(s, first + 1, 0);
            // Every frame sent before the ACK was taken is in the ring by now: what comes later is resent after it.
            final int mark = s.peer.received().size();
            Tests.await("a round of resends after the ACK", () -> responsesFrom(s, mark).contains(last));
            final List<Integer> resent = responsesFrom(s, mark);
            assertTrue(resent.stream().allMatch(q -> q >= first + 2 && q <= last), resent.toString());
            assertEquals(first + 2, resent.get(0), resent.toString());
            assertTrue(s.counter("retransmit.timeouts") >= 1);
            ackResponses(s, last, 0);
            s.assertConnected();
        }
    }

    @Test
    void shouldSendNoMoreResponseFramesThanTheWindowBeyondTheAcknowledgement() {
        try (HostileSetup s = new HostileSetup(smallFrames().windowFrames(4))) {
            read(s);
            final int first = s.peer.expect(Frame.OP_READ_RESP).seq();
            response(s, first + 3);
            // With the response stream's timer far away, only an acknowledgement lets more out.
            Tests.assertNoCompletion(s.lo.cqA, 10);
            assertEquals(List.of(first, first + 1, first + 2, first + 3), responsesFrom(s, 0));
            ackResponses(s, first, 0);
            response(s, first + 4);
            assertEquals(5, responsesFrom(s, 0).size());
            ackResponses(s, first + 4, 0);
            HostilePeer.Received r;
            do {
                r = s.peer.expect(Frame.OP_READ_RESP);
            } while ((r.flags() & Frame.FLAG_LAST) == 0);
            ackResponses(s, r.seq(), 0);
            final List<Integer> all = responsesFrom(s, 0);
            for (int i = 0; i < all.size(); i++) {
                assertEquals(first + i, all.get(i), "each frame once, in order: " + all);
            }
            assertEquals(0, s.counter("frames.retransmitted"));
            s.assertConnected();
        }
    }
}
