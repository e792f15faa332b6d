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

    /**
     * A graceful DISCONNECT from the peer whose acknowledgement field stops short of request {@code seq}: the
     * peer never got it (a correct peer's DISCONNECT acknowledges what it received, which completes it).
     */
    private static void disconnectWithout(final HostileSetup s, final int seq) {
        s.peer.control(Frame.OP_DISCONNECT).seq(1).reqAck(seq - 1).key(EventCode.DISCONNECT.code()).send();
    }

    /**
     * A DISCONNECT half the sequence space away (2^31 from what is expected) is ignored without a challenge ACK, as
     * any other far from the window: the distance was taken as an int, whose absolute value of MIN_VALUE is
     * negative, so that one value drew a challenge.
     */
    @Test
    void aDisconnectHalfTheSequenceSpaceAwayIsIgnoredWithoutAChallenge() {
        try (HostileSetup s = new HostileSetup()) {
            final long challenges = s.counter("tx.challenge_acks");
            s.peer.control(Frame.OP_DISCONNECT).seq(1 + Integer.MIN_VALUE).key(EventCode.DISCONNECT.code()).send();
            Tests.await("the DISCONNECT ignored", () -> s.counter("rx.control_inexact") == 1);
            assertEquals(challenges, s.counter("tx.challenge_acks"), "no challenge for a sequence number this far");
            s.assertConnected();
        }
    }

    @Test
    void aNakOfALaterRequestInTheWindowIsChallengedNotObeyed() {
        try (HostileSetup s = new HostileSetup()) {
            final int first = s.postSend(1, 0);
            final int second = s.postSend(2, 0);
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
            s.expectCompletion(1, WcStatus.SUCCESS);
            s.expectCompletion(2, WcStatus.SUCCESS);
            s.assertConnected();
        }
    }

    @Test
    void aRequestRefusedBehindAnUnfinishedReadKeepsItsStatusWhenTheReadIsFlushed() {
        try (HostileSetup s = new HostileSetup()) {
            final int read = s.postRead(1, 8).seq();
            final int send = s.postSend(2, 0);
            s.peer.control(Frame.OP_ACK).reqAck(read).send(); // the read's request arrived; its response never comes
            s.peer.nak(send, WcStatus.ACCESS_ERR.code(), EventCode.ACCESS_VIOLATION.code());
            s.awaitQpEvent(EventCode.ACCESS_VIOLATION, true);
            s.expectCompletion(1, WcStatus.FLUSHED);
            s.expectCompletion(2, WcStatus.ACCESS_ERR);
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aNakOfAReadWhoseRequestWasAcknowledgedFailsTheRead() {
        try (HostileSetup s = new HostileSetup()) {
            final int read = s.postRead(1, 8).seq();
            s.peer.control(Frame.OP_ACK).reqAck(read).send();
            // A responder whose region went away part-way through the response refuses the read then.
            s.peer.control(Frame.OP_NAK).seq(read).key(WcStatus.ACCESS_ERR.code())
                .length(EventCode.ACCESS_VIOLATION.code()).send();
            s.expectCompletion(1, WcStatus.ACCESS_ERR);
            s.awaitQpEvent(EventCode.ACCESS_VIOLATION, true);
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aDisconnectNamesTheRequestAfterTheLastSent() {
        try (HostileSetup s = new HostileSetup()) {
            final int first = s.postSend(1, 0);
            final int second = s.postSend(2, 0);
            s.peer.control(Frame.OP_ACK).reqAck(first).send();
            s.expectCompletion(1, WcStatus.SUCCESS);
            s.qp().close();
            // RFC 5961: the peer obeys only the exact next request it expects; it got the second, unacknowledged.
            assertEquals(second + 1, s.peer.expect(Frame.OP_DISCONNECT).seq());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aDisconnectWhileRequestsAreSentAgainNamesTheFirstNotAcknowledged() {
        try (HostileSetup s = new HostileSetup(new Configuration().rnrDelayUs(1_000_000))) {
            final int first = s.postSend(1, 0);
            final int second = s.postSend(2, 0);
            s.peer.control(Frame.OP_ACK).reqAck(first).send();
            s.expectCompletion(1, WcStatus.SUCCESS);
            s.peer.nak(second, Frame.NAK_RNR, 0); // the peer lacks the second until it is sent again
            Tests.await("the receiver-not-ready NAK taken", () -> s.counter("rnr.naks.received") == 1);
            s.qp().close();
            assertEquals(second, s.peer.expect(Frame.OP_DISCONNECT).seq());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aFlushedCompletionReapsTheUnsignaledRequestsBeforeIt() {
        try (HostileSetup s = new HostileSetup()) {
            for (int i = 1; i <= 3; i++) {
                s.postSend(i, WrFlags.SUPPRESSED);
            }
            s.peer.ack();
            Tests.await("three unsignaled sends acknowledged", () -> s.counter("wr.completed") == 3);
            final int seq = s.postSend(4, 0);
            disconnectWithout(s, seq);
            final WorkCompletion wc = s.expectCompletion(4, WcStatus.FLUSHED);
            assertEquals(4, wc.reapCount(), "the three unsignaled sends and itself");
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aGracefulDisconnectThatFlushesWorkLeavesTheQueuePairInError() {
        try (HostileSetup s = new HostileSetup()) {
            disconnectWithout(s, s.postSend(1, 0));
            s.expectCompletion(1, WcStatus.FLUSHED);
            Loopback.awaitState(s.qp(), QpState.ERROR);
            s.assertNoEngineErrors();
        }
    }
}
