package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frames for a queue pair the NIC does not have: a request is answered by at most a rate-limited DISCONNECT
 * (INVALID_QP, echoing the frame's acknowledgement so that only its true sender obeys it), the rest is counted as
 * limited; an ACK, NAK or DISCONNECT is never answered (two NICs must not reply to each other forever). The NIC's
 * own connection is untouched.
 */
@Timeout(60)
class UnknownTrafficTest {
    private static final int UNKNOWN_QP = 0x7777_0001;

    private static long disconnects(final HostileSetup s) {
        return s.peer.received().stream().filter(r -> r.opcode() == Frame.OP_DISCONNECT).count();
    }

    @Test
    void requestsForAnUnknownQueuePairGetAtMostTheBucketsReplies() {
        // One reply a second, a burst of 1: twenty frames get one answer, and one more per second they took.
        try (HostileSetup s = new HostileSetup(new Configuration().unknownRepliesPerSecond(1))) {
            s.peer.aimAt(UNKNOWN_QP);
            final long start = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                s.peer.request(Frame.OP_SEND).reqAck(41).payload(new byte[8]).send();
            }
            Tests.await("twenty frames for an unknown queue pair", () -> s.counter("rx.unknown_qp") == 20);
            final HostilePeer.Received reply = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.INVALID_QP.code(), reply.key(), reply.toString());
            assertEquals(42, reply.seq(), "the request ack of the frame it answers, plus one");
            final long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            final long replies = disconnects(s); // every frame received so far, the one above included
            assertTrue(replies <= 1 + seconds + 1, replies + " replies in " + seconds + " s");
            assertEquals(20 - replies, s.counter("tx.replies_limited"));
            s.assertConnected();
        }
    }

    @Test
    void aQueuePairDestroyedWhileConnectedIsAnsweredAsDestroyedToItsPeerOnly() {
        // The peer missed the destroy's DISCONNECT (lost, or inexact because frames were in flight): its next
        // request learns QP_DESTROYED, what that DISCONNECT said, not INVALID_QP. Anyone else, a stranger's
        // queue pair at the same address included, still gets INVALID_QP.
        try (HostileSetup s = new HostileSetup()) {
            final int gone = s.qp().number();
            s.qp().close();
            assertEquals(EventCode.QP_DESTROYED.code(), s.peer.expect(Frame.OP_DISCONNECT).key());
            s.peer.request(Frame.OP_SEND).reqAck(41).payload(new byte[8]).send();
            final HostilePeer.Received reply = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.QP_DESTROYED.code(), reply.key(), reply.toString());
            assertEquals(42, reply.seq(), "the request ack of the frame it answers, plus one");
            assertEquals(gone, reply.srcQp());
            s.peer.request(Frame.OP_SEND).src(HostilePeer.QP_NUMBER + 1).reqAck(41).payload(new byte[8]).send();
            final HostilePeer.Received stranger = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.INVALID_QP.code(), stranger.key(), stranger.toString());
            assertEquals(2, s.counter("rx.unknown_qp"));
        }
    }

    @Test
    void theAnswerForADestroyedQueuePairAcknowledgesTheRequestsItReceived() {
        // The queue pair received a send, then was destroyed; its ACK and its DISCONNECT were lost, and the peer
        // resends the send. The answer carries the acknowledgements the queue pair went with, so the peer completes
        // that send (it did arrive) instead of flushing it or retrying it until RETRY_EXCEEDED.
        try (HostileSetup s = new HostileSetup()) {
            s.qp().recv(1, Loopback.sge(s.lo.mrA, 0, 8), 1);
            final int seq = s.peer.request(Frame.OP_SEND).flags(Frame.FLAG_LAST).length(8).payload(new byte[8]).send();
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(s.lo.cqA).status());
            s.qp().close();
            assertEquals(seq, s.peer.expect(Frame.OP_DISCONNECT).reqAck(), "the destroy's DISCONNECT acknowledges it");
            s.peer.request(Frame.OP_SEND).seq(seq).reqAck(0).flags(Frame.FLAG_LAST).length(8)
                .payload(new byte[8]).send();
            final HostilePeer.Received reply = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.QP_DESTROYED.code(), reply.key(), reply.toString());
            assertEquals(1, reply.seq(), "exact for the resent frame's sender: its request ack, plus one");
            assertEquals(seq, reply.reqAck(), "the send the queue pair received before it went");
            assertEquals(0, reply.rspAck(), "no response of the peer's had arrived");
        }
    }

    @Test
    void controlFramesForAnUnknownQueuePairAreNeverAnswered() {
        try (HostileSetup s = new HostileSetup()) {
            s.peer.aimAt(UNKNOWN_QP);
            s.peer.control(Frame.OP_ACK).send();
            s.peer.control(Frame.OP_NAK).seq(1).key(WcStatus.ACCESS_ERR.code()).send();
            s.peer.control(Frame.OP_DISCONNECT).seq(1).key(EventCode.DISCONNECT.code()).send();
            Tests.await("three frames for an unknown queue pair", () -> s.counter("rx.unknown_qp") == 3);
            s.peer.request(Frame.OP_SEND).payload(new byte[8]).send(); // a request is answered, after them
            s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(1, disconnects(s), "only the request was answered");
            assertEquals(0, s.counter("tx.replies_limited"));
            s.assertConnected();
        }
    }
}
