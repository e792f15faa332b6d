package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The requester's rules that only a peer playing the protocol by hand reaches: a NAK is obeyed only for the exact
 * next request (RFC 5961), a request that failed behind unfinished work keeps its own status when the rest is
 * flushed, a flushed completion reaps the unsignaled requests before it, and a graceful disconnect that flushes
 * work leaves the queue pair in ERROR rather than IDLE.
 */
@Timeout(60)
class RequesterEdgesTest {

    private static int postSend(final HostileSetup s, final long id, final int flags) {
        s.qp().send(id, Loopback.sge(s.lo.mrA, 0, 8), 1, flags, 0);
        return s.peer.expect("send " + id, r -> r.opcode() == Frame.OP_SEND && r.seq() >= 0).seq();
    }

    /**
     * A graceful DISCONNECT from the peer whose acknowledgement field stops short of request {@code seq}: the
     * peer never got it (a correct peer's DISCONNECT acknowledges what it received, which completes it).
     */
    private static void disconnectWithout(final HostileSetup s, final int seq) {
        s.peer.control(Frame.OP_DISCONNECT).seq(1).reqAck(seq - 1).key(EventCode.DISCONNECT.code()).send();
    }

    private static WorkCompletion expectCompletion(final HostileSetup s, final long id, final WcStatus status) {
        final WorkCompletion wc = Tests.pollOne(s.lo.cqA);
        assertEquals(id, wc.id(), wc.toString());
        assertEquals(status, wc.status(), wc.toString());
        return wc;
    }

    @Test
    void aNakOfALaterRequestInTheWindowIsChallengedNotObeyed() {
        try (HostileSetup s = new HostileSetup()) {
            final int first = postSend(s, 1, 0);
            final int second = postSend(s, 2, 0);
            assertEquals(first + 1, second);
            final long challenges = s.counter("tx.challenge_acks");
            // Its own acknowledgement holds nothing back (processed first, an ack of both would make it stale).
            s.peer.control(Frame.OP_NAK).seq(second).reqAck(first - 1).key(WcStatus.ACCESS_ERR.code())
                .length(EventCode.ACCESS_VIOLATION.code()).send();
            Tests.await("the NAK ignored", () -> s.counter("naks.ignored") == 1);
            assertEquals(challenges + 1, s.counter("tx.challenge_acks"), "the true peer is asked where it stands");
            s.peer.expect(Frame.OP_ACK);
            s.assertConnected();
            s.peer.ack();
            expectCompletion(s, 1, WcStatus.SUCCESS);
            expectCompletion(s, 2, WcStatus.SUCCESS);
            s.assertConnected();
        }
    }

    @Test
    void aRequestRefusedBehindAnUnfinishedReadKeepsItsStatusWhenTheReadIsFlushed() {
        try (HostileSetup s = new HostileSetup()) {
            s.qp().read(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            final int read = s.peer.expect(Frame.OP_READ).seq();
            final int send = postSend(s, 2, 0);
            s.peer.control(Frame.OP_ACK).reqAck(read).send(); // the read's request arrived; its response never comes
            s.peer.nak(send, WcStatus.ACCESS_ERR.code(), EventCode.ACCESS_VIOLATION.code());
            s.awaitQpEvent(EventCode.ACCESS_VIOLATION, true);
            expectCompletion(s, 1, WcStatus.FLUSHED);
            expectCompletion(s, 2, WcStatus.ACCESS_ERR);
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aNakOfAReadWhoseRequestWasAcknowledgedFailsTheRead() {
        try (HostileSetup s = new HostileSetup()) {
            s.qp().read(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            final int read = s.peer.expect(Frame.OP_READ).seq();
            s.peer.control(Frame.OP_ACK).reqAck(read).send();
            // A responder whose region went away part-way through the response refuses the read then.
            s.peer.control(Frame.OP_NAK).seq(read).key(WcStatus.ACCESS_ERR.code())
                .length(EventCode.ACCESS_VIOLATION.code()).send();
            expectCompletion(s, 1, WcStatus.ACCESS_ERR);
            s.awaitQpEvent(EventCode.ACCESS_VIOLATION, true);
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aDisconnectNamesTheFirstRequestNotAcknowledged() {
        try (HostileSetup s = new HostileSetup()) {
            final int first = postSend(s, 1, 0);
            final int second = postSend(s, 2, 0);
            s.peer.control(Frame.OP_ACK).reqAck(first).send();
            expectCompletion(s, 1, WcStatus.SUCCESS);
            s.qp().close();
            // RFC 5961: the peer obeys only the exact next request it expects, which is the second if it got it.
            assertEquals(second, s.peer.expect(Frame.OP_DISCONNECT).seq());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aFlushedCompletionReapsTheUnsignaledRequestsBeforeIt() {
        try (HostileSetup s = new HostileSetup()) {
            for (int i = 1; i <= 3; i++) {
                postSend(s, i, WrFlags.SUPPRESSED);
            }
            s.peer.ack();
            Tests.await("three unsignaled sends acknowledged", () -> s.counter("wr.completed") == 3);
            final int seq = postSend(s, 4, 0);
            disconnectWithout(s, seq);
            final WorkCompletion wc = expectCompletion(s, 4, WcStatus.FLUSHED);
            assertEquals(4, wc.reapCount(), "the three unsignaled sends and itself");
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aGracefulDisconnectThatFlushesWorkLeavesTheQueuePairInError() {
        try (HostileSetup s = new HostileSetup()) {
            disconnectWithout(s, postSend(s, 1, 0));
            expectCompletion(s, 1, WcStatus.FLUSHED);
            Loopback.awaitState(s.qp(), QpState.ERROR);
            s.assertNoEngineErrors();
        }
    }
}
