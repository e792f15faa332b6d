package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A queue pair's lifecycle, from an audit: after a graceful DISCONNECT that ended in ERROR (send work flushed), a
 * repeat to the peer carries DISCONNECT, not a stale QP_ERROR or an earlier incarnation's failure, so a peer with
 * nothing outstanding ends IDLE as det.md 4.8 says; a destroyed queue pair answers its peer's challenge ACK with an
 * exact QP_DESTROYED, so the peer learns of it even when the destroy's own DISCONNECT was inexact (det.md 1.6); and
 * a plain reconnect after a protected connection sends full-size frames again.
 */
@Timeout(60)
class QpLifecycleTest {

    // ------------------------------------------------------------ finding 1: stale errorCode repeated

    /** A graceful DISCONNECT that flushed send work ends in ERROR; the peer's later frames get the DISCONNECT again. */
    @Test
    void shouldRepeatTheDisconnectItAnnouncedAfterAGracefulDisconnectEndedInError() {
        try (HostileSetup s = new HostileSetup()) {
            s.postSend(1, 0); // the peer receives it and never acknowledges it
            s.qp().modify(new QpModify().state(QpState.DISCONNECT));
            assertEquals(QpState.ERROR, s.qp().query().state(), "flushed send work: ERROR (DET's rule)");
            final HostilePeer.Received first = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.DISCONNECT.code(), first.key(), "announced: a graceful DISCONNECT");
            s.peer.ack(); // the peer missed it and still sends: it must be told the same thing again
            final HostilePeer.Received again = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.DISCONNECT.code(), again.key(),
                "repeated DISCONNECT carries code " + again.key() + ", not the DISCONNECT announced");
        }
    }

    /** Same in a later incarnation: the code of the previous incarnation's failure is repeated. */
    @Test
    void shouldNotRepeatACodeOfAnEarlierIncarnation() {
        try (HostileSetup s = new HostileSetup()) {
            s.peer.disconnect(EventCode.MAX_IR_EXCEEDED.code()); // incarnation 1 fails
            s.awaitQpEvent(EventCode.MAX_IR_EXCEEDED, true);
            s.qp().modify(new QpModify().state(QpState.IDLE));
            try (HostilePeer p2 = HostilePeer.on(s.lo.nicA)) { // incarnation 2
                p2.connect(s.qp());
                s.qp().send(2, sge(s.lo.mrA, 0, 8), 1, 0, 0);
                p2.expect(Frame.OP_SEND);
                s.qp().modify(new QpModify().state(QpState.DISCONNECT));
                assertEquals(EventCode.DISCONNECT.code(), p2.expect(Frame.OP_DISCONNECT).key());
                p2.ack();
                final HostilePeer.Received again = p2.expect(Frame.OP_DISCONNECT);
                assertEquals(EventCode.DISCONNECT.code(), again.key(),
                    "repeated DISCONNECT carries code " + again.key() + " of the earlier incarnation");
            }
        }
    }

    /**
     * Real peers, no loss: A's graceful DISCONNECT reaches B inexact (B refused A's send, receiver not ready), B
     * challenges, A (in ERROR because it flushed the send) answers with QP_ERROR, so B, which had no work of its
     * own, ends in ERROR with REMOTE|QP_ERROR instead of IDLE with REMOTE|DISCONNECT (det.md 4.8).
     */
    @Test
    void shouldEndThePeerOfAGracefulDisconnectGracefully() throws InterruptedException {
        try (Loopback pair = Loopback.open()) {
            pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0); // B has no receive posted
            pair.qpA.modify(new QpModify().state(QpState.DISCONNECT));
            assertEquals(QpState.ERROR, pair.qpA.query().state());
            Tests.await("B left CONNECTED", () -> pair.qpB.query().state() != QpState.CONNECTED);
            Thread.sleep(100);
            final List<EventRecord> b = Tests.drainEvents(pair.eventsB);
            assertEquals(QpState.IDLE, pair.qpB.query().state(), "B had nothing outstanding: " + b);
            assertEquals(EventCode.DISCONNECT.code() | EventCode.REMOTE_BIT, b.get(b.size() - 1).rawCode(),
                b.toString());
        }
    }

    // ------------------------------------------------------------ finding 2: destroy's DISCONNECT never converges

    /** The destroyed queue pair's DISCONNECT is inexact; the peer's challenge ACK is answered with an exact one. */
    @Test
    void shouldAnswerThePeersChallengeAfterADestroy() {
        try (HostileSetup s = new HostileSetup()) {
            s.postSend(1, 0);
            s.postSend(2, 0); // the peer refused 1 (receiver not ready, say): it still expects request 1
            s.qp().close();
            final HostilePeer.Received d = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.QP_DESTROYED.code(), d.key());
            // The peer finds it inexact and sends a challenge ACK of its true state (PROTOCOL.md 4.2).
            s.peer.control(Frame.OP_ACK).reqAck(0).send();
            final HostilePeer.Received again = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.QP_DESTROYED.code(), again.key());
            assertEquals(1, again.seq());
        }
    }

    /**
     * Real peers, no loss: B refused A's sends (receiver not ready), so the destroy's DISCONNECT names a request B
     * does not expect; B's challenge ACK reaches the destroyed queue pair, which answers it exactly.
     */
    @Test
    void shouldTellThePeerOfADestroyedQueuePair() {
        try (Loopback pair = Loopback.open()) {
            pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0); // B has no receive posted
            pair.qpA.send(2, sge(pair.mrA, 0, 8), 1, 0, 0);
            pair.qpA.close();
            final List<EventRecord> b = Tests.awaitEvent(pair.eventsB, e -> e.type() == ResourceType.QP);
            assertEquals(EventCode.QP_DESTROYED, b.get(b.size() - 1).code());
        }
    }

    // ------------------------------------------------------------ frame size after a protected connection

    @Test
    void shouldSendFullFramesOnAPlainReconnectAfterAProtectedConnection() {
        final long bytes = 1 << 20;
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false).bufferBytes(bytes))) {
            final int full = pair.qpA.query().mtu() - Frame.HEADER_LENGTH;
            // a fresh plain connection: one frame for a message of exactly one frame's payload
            pair.connect();
            final long fresh = framesForOneSend(pair, full);
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            Loopback.awaitState(pair.qpB, QpState.ERROR);
            pair.qpA.modify(new QpModify().state(QpState.IDLE));
            pair.qpB.modify(new QpModify().state(QpState.IDLE));
            secureConnect(pair);
            framesForOneSend(pair, 8);
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            Loopback.awaitState(pair.qpB, QpState.ERROR);
            pair.qpA.modify(new QpModify().state(QpState.IDLE));
            pair.qpB.modify(new QpModify().state(QpState.IDLE));
            pair.connect(); // plain again
            final long after = framesForOneSend(pair, full);
            assertEquals(fresh, after, "frames for one " + full + "-byte send on a plain connection");
        }
    }

    /**
     * The frames A sends for one send of {@code length} bytes: the fewest over three sends, since the NIC may send
     * a frame of its own meanwhile (the connection manager's repeats after the protected connection, say).
     */
    private static long framesForOneSend(final Loopback pair, final int length) {
        Tests.drainEvents(pair.eventsA);
        long fewest = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            pair.qpB.recv(9, sge(pair.mrB, 0, length), 1);
            final long before = pair.nicA.counters().get("frames.sent");
            pair.qpA.send(9, sge(pair.mrA, 0, length), 1, 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            Tests.expectSuccess(pair.cqB, 1);
            fewest = Math.min(fewest, pair.nicA.counters().get("frames.sent") - before);
        }
        return fewest;
    }

    private static void secureConnect(final Loopback pair) {
        pair.nicA.connectionManager().security(Security.of(Security.Mode.AUTH));
        pair.nicB.connectionManager().security(Security.of(Security.Mode.AUTH));
        pair.connectThroughCm(0x5EC);
    }
}
