package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The requester against a hostile peer: every NAK, DISCONNECT and response the peer sends from the connected
 * address is checked against its range. Out of range, the connection fails with a protocol error (the request
 * completes with BAD_RESPONSE, a local event the application can decode); in range, it does what the protocol
 * says. Also the requester's give-up timers.
 */
@Timeout(60)
class HostileResponsesTest {

    @ParameterizedTest(name = "event {0}")
    @ValueSource(ints = {999, -1, 0, 1, 2, 4, 5, 27, EventCode.REMOTE_BIT | 25})
    void shouldFailConnectionWhenNakEventIsOutOfRange(final int event) {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.postSend(1, 0);
            s.peer.nak(seq, WcStatus.ACCESS_ERR.code(), event);
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.QP_ERROR);
        }
    }

    @ParameterizedTest(name = "status {0}")
    @ValueSource(ints = {0, 1, 6, 7, 9, 10, 12, 13, 77, -1, 0xFFFE})
    void shouldFailConnectionWhenNakStatusIsOutOfRange(final int status) {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.postSend(1, 0);
            s.peer.nak(seq, status, EventCode.ACCESS_VIOLATION.code());
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.QP_ERROR);
        }
    }

    @Test
    void shouldFailRequestWithPeersStatusWhenNakIsInRange() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.postSend(1, 0);
            s.peer.nak(seq, WcStatus.ACCESS_ERR.code(), EventCode.ACCESS_VIOLATION.code());
            s.expectCompletion(1, WcStatus.ACCESS_ERR);
            s.awaitQpEvent(EventCode.ACCESS_VIOLATION, true);
            assertEquals(0, s.counter("rx.protocol_error"));
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldIgnoreNakOfRequestNotSentOrAlreadyAcknowledged() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.postSend(1, 0);
            s.peer.nak(seq + 1, WcStatus.ACCESS_ERR.code(), EventCode.ACCESS_VIOLATION.code());
            s.peer.nak(seq - 1, WcStatus.ACCESS_ERR.code(), EventCode.ACCESS_VIOLATION.code());
            Tests.await("two NAKs ignored", () -> s.counter("naks.ignored") == 2);
            s.assertConnected();
            s.peer.ack();
            s.expectCompletion(1, WcStatus.SUCCESS);
            s.peer.nak(seq, WcStatus.ACCESS_ERR.code(), EventCode.ACCESS_VIOLATION.code()); // acknowledged by now
            Tests.await("a third NAK ignored", () -> s.counter("naks.ignored") == 3);
            s.assertConnected();
        }
    }

    @Test
    void shouldIgnoreNakOfReadAdmittedButNotSent() {
        // The window (4 frames) is full of sends: the read behind them is admitted but not sent, and a NAK naming
        // it is no answer from a responder that has seen it.
        try (HostileSetup s = new HostileSetup(new Configuration().windowFrames(4))) {
            int last = 0;
            for (int i = 0; i < 4; i++) {
                last = s.postSend(10 + i, 0);
            }
            s.lo.qpA.read(99, Loopback.sge(s.lo.mrA, 64, 8), 1, 0x1000, 0x77, 0);
            s.peer.control(Frame.OP_NAK).seq(last + 1).reqAck(last - 4).key(WcStatus.ACCESS_ERR.code())
                .length(EventCode.ACCESS_VIOLATION.code()).send();
            Tests.await("the NAK ignored", () -> s.counter("naks.ignored") == 1);
            s.assertConnected();
            s.peer.ack();
            s.peer.expect(Frame.OP_READ); // the window opened: the read goes out after all
            s.assertConnected();
        }
    }

    @Test
    void aReadFlushedWhileItsResponseAcknowledgesEarlierWorkGetsNoData() {
        // A's queue is full of completions; the read's response is the first word of the send before it, whose
        // completion overruns the queue and fails the queue pair: the read is flushed, and its buffer, which a
        // poller may own again, is not written.
        try (HostileSetup s = new HostileSetup(new Loopback.Options().cqSize(1).depth(200, 8).connect(false))) {
            final int size = s.lo.cqA.query().size();
            for (int i = 0; i < size; i++) {
                s.postSend(i, 0);
                s.peer.ack(); // within the window
            }
            Tests.await("A's queue full", () -> {
                s.peer.received(); // retransmissions came too: take every send, and acknowledge them all
                s.peer.ack();
                return s.lo.cqA.query().depth() == size;
            });
            s.lo.bufA.fill((byte) 0x11);
            s.lo.qpA.send(size, Loopback.sge(s.lo.mrA, 0, 8), 1, 0, 0);
            s.lo.qpA.read(size + 1, Loopback.sge(s.lo.mrA, 64, 8), 1, 0x1000, 0x77, 0);
            final HostilePeer.Received read = s.peer.expect(Frame.OP_READ);
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).reqAck(read.seq() - 2)
                .length(8).payload(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).send();
            Loopback.awaitState(s.lo.qpA, QpState.ERROR);
            Tests.awaitEvent(s.lo.eventsA, r -> r.code() == EventCode.CQ_OVERRUN);
            assertEquals(0x1111_1111_1111_1111L, s.lo.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 64),
                "the flushed read's buffer was written");
        }
    }

    @Test
    void shouldFailConnectionWhenReceiverNotReadyNakNamesRead() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.postRead(1, 8).seq();
            s.peer.nak(seq, Frame.NAK_RNR, 0);
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.QP_ERROR);
        }
    }

    /**
     * Sends a receiver-not-ready NAK and waits until the victim has resent something after its hold, so that the
     * next NAK cannot arrive during the hold (where a repeat is ignored).
     */
    private static void nakNotReadyAndAwaitResend(final HostileSetup s, final int seq, final int naksSoFar) {
        s.peer.nak(seq, Frame.NAK_RNR, 0);
        Tests.await("the NAK taken", () -> s.counter("rnr.naks.received") == naksSoFar + 1);
        final long resent = s.counter("frames.retransmitted");
        Tests.await("a resend after the hold", () -> s.counter("frames.retransmitted") > resent);
    }

    @Test
    void shouldRetrySendAfterReceiverNotReadyNak() {
        try (HostileSetup s = new HostileSetup(new Configuration().rnrDelayUs(100))) {
            final int seq = s.postSend(1, 0);
            nakNotReadyAndAwaitResend(s, seq, 0);
            s.peer.control(Frame.OP_ACK).reqAck(seq).send();
            s.expectCompletion(1, WcStatus.SUCCESS);
            s.assertConnected();
        }
    }

    @Test
    void shouldGiveUpAfterReceiverNotReadyRetries() {
        try (HostileSetup s = new HostileSetup(new Configuration().rnrDelayUs(100).rnrRetryCount(1))) {
            final int seq = s.postSend(1, 0);
            nakNotReadyAndAwaitResend(s, seq, 0);
            s.peer.nak(seq, Frame.NAK_RNR, 0);
            s.expectCompletion(1, WcStatus.RNR_RETRY_EXCEEDED);
            s.awaitQpEvent(EventCode.QP_RQ_ERROR, true);
            s.assertNoEngineErrors();
        }
    }

    @ParameterizedTest(name = "code {0}")
    @ValueSource(ints = {999, -1, 0, 1, 2, 3, 5, 6, 27, EventCode.REMOTE_BIT | 999})
    void shouldFailConnectionWhenDisconnectCodeIsNoEvent(final int code) {
        try (HostileSetup s = new HostileSetup()) {
            s.peer.disconnect(code);
            s.awaitProtocolError(EventCode.QP_ERROR);
        }
    }

    @Test
    void shouldEnterErrorWithPeersEventWhenDisconnectCodeIsInRange() {
        try (HostileSetup s = new HostileSetup()) {
            s.peer.disconnect(EventCode.REMOTE_BIT | EventCode.QP_DESTROYED.code());
            s.awaitQpEvent(EventCode.QP_DESTROYED, true);
            assertEquals(0, s.counter("rx.protocol_error"));
            s.assertNoEngineErrors();
        }
    }

    @Test
    void aPeersDisconnectCompletesTheSendsItAcknowledgesAndFlushesTheRest() {
        // The peer received both sends but acknowledges only the first in its DISCONNECT (the second arrived after
        // it went): the first did arrive and completes successfully, the second is flushed.
        try (HostileSetup s = new HostileSetup()) {
            s.qp().send(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0, 0);
            final int first = s.peer.expect(Frame.OP_SEND).seq();
            s.qp().send(2, Loopback.sge(s.lo.mrA, 8, 8), 1, 0, 0);
            s.peer.expect(Frame.OP_SEND);
            s.peer.disconnectFrame(EventCode.REMOTE_BIT | EventCode.QP_DESTROYED.code()).reqAck(first).send();
            s.awaitQpEvent(EventCode.QP_DESTROYED, true);
            final WorkCompletion arrived = Tests.pollOne(s.lo.cqA);
            assertEquals(1, arrived.id());
            assertEquals(WcStatus.SUCCESS, arrived.status(), arrived.toString());
            final WorkCompletion flushed = Tests.pollOne(s.lo.cqA);
            assertEquals(2, flushed.id());
            assertEquals(WcStatus.FLUSHED, flushed.status(), flushed.toString());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void anInvalidQpDisconnectAcknowledgesNothing() {
        // A NIC answering for a queue pair it does not have sends acks of 0, which a random initial sequence number
        // can put inside the window: whatever they say, they must not complete a send.
        try (HostileSetup s = new HostileSetup()) {
            s.qp().send(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0, 0);
            final int sent = s.peer.expect(Frame.OP_SEND).seq();
            s.peer.disconnectFrame(EventCode.INVALID_QP.code()).reqAck(sent).send();
            s.awaitQpEvent(EventCode.INVALID_QP, true);
            final WorkCompletion flushed = Tests.pollOne(s.lo.cqA);
            assertEquals(1, flushed.id());
            assertEquals(WcStatus.FLUSHED, flushed.status(), flushed.toString());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldGoIdleOnGracefulDisconnect() {
        try (HostileSetup s = new HostileSetup()) {
            s.peer.disconnect(EventCode.DISCONNECT.code());
            Loopback.awaitState(s.qp(), QpState.IDLE);
            final EventRecord e = Tests.awaitEvent(s.lo.eventsA, r -> r.handle() == s.qp()).getLast();
            assertEquals(EventCode.DISCONNECT, e.code());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldFailReadWhenResponseNamesNoRequest() {
        try (HostileSetup s = new HostileSetup()) {
            final HostilePeer.Received read = s.postRead(1, 8);
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId() + 5).length(8)
                .payload(new byte[8]).send();
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.INVALID_RDMA_ID);
            assertEquals(1, s.counter("rx.bad_response"));
        }
    }

    @Test
    void shouldFailReadWhenAtomicResponseAnswersIt() {
        try (HostileSetup s = new HostileSetup()) {
            final HostilePeer.Received read = s.postRead(1, 8);
            s.peer.response(Frame.OP_ATOMIC_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).operands(5, 0).send();
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.INVALID_ATOMIC_ID);
        }
    }

    @Test
    void shouldFailConnectionWhenResponseComesWithNothingOutstanding() {
        try (HostileSetup s = new HostileSetup()) {
            s.peer.response(Frame.OP_ATOMIC_RESP).flags(Frame.FLAG_LAST).msgId(0).send();
            s.awaitProtocolError(EventCode.INVALID_ATOMIC_ID);
        }
    }

    @Test
    void shouldFailReadWhenLastFragmentEndsEarly() {
        try (HostileSetup s = new HostileSetup()) {
            s.lo.bufA.fill((byte) 0x11);
            final HostilePeer.Received read = s.postRead(1, 8);
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8)
                .payload(new byte[4]).send();
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.INVALID_LENGTH);
        }
    }

    @ParameterizedTest(name = "offset {0}")
    @ValueSource(ints = {4, 8, -4, Integer.MAX_VALUE})
    void shouldFailReadWhenFragmentLeavesItsPlace(final int offset) {
        try (HostileSetup s = new HostileSetup()) {
            final HostilePeer.Received read = s.postRead(1, 8);
            s.peer.response(Frame.OP_READ_RESP).msgId(read.msgId()).length(8).offset(offset)
                .payload(new byte[4]).send();
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldFailReadWhenFragmentWithoutLastFillsIt() {
        try (HostileSetup s = new HostileSetup()) {
            final HostilePeer.Received read = s.postRead(1, 8);
            s.peer.response(Frame.OP_READ_RESP).msgId(read.msgId()).length(8).payload(new byte[8]).send();
            s.expectCompletion(1, WcStatus.BAD_RESPONSE);
            s.awaitProtocolError(EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldCompleteReadFromTwoFragmentsInOrder() {
        try (HostileSetup s = new HostileSetup()) {
            final HostilePeer.Received read = s.postRead(1, 8);
            s.peer.response(Frame.OP_READ_RESP).msgId(read.msgId()).length(8)
                .payload(new byte[] {1, 2, 3, 4}).send();
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(8).offset(4)
                .payload(new byte[] {5, 6, 7, 8}).send();
            s.expectCompletion(1, WcStatus.SUCCESS);
            assertEquals(0x0807_0605_0403_0201L, s.lo.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            s.assertConnected();
        }
    }

    @Test
    void shouldPlaceOriginalValueOfAtomicResponse() {
        try (HostileSetup s = new HostileSetup()) {
            s.qp().fetchAdd(1, 3, new DataSegment().set(s.lo.mrA, 0, 8), 0x1000, 0x77, 0);
            final HostilePeer.Received request = s.peer.expect(Frame.OP_FETCH_ADD);
            assertEquals(3, request.operand1());
            s.peer.response(Frame.OP_ATOMIC_RESP).flags(Frame.FLAG_LAST).msgId(request.msgId()).operands(41, 0)
                .send();
            s.expectCompletion(1, WcStatus.SUCCESS);
            assertEquals(41, s.lo.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            s.assertConnected();
        }
    }

    // ---------------------------------------------------------------- give-up timers

    private static Configuration fastGiveUp() {
        return new Configuration().ackTimeoutMs(10).minRtoUs(1000).maxRtoUs(1000).timerPeriodUs(200);
    }

    @Test
    void shouldFailSendWithRetryExceededWhenPeerNeverAcknowledges() {
        try (HostileSetup s = new HostileSetup(fastGiveUp())) {
            s.postSend(1, 0);
            s.expectCompletion(1, WcStatus.RETRY_EXCEEDED);
            s.awaitQpEvent(EventCode.ACK_TIMEOUT, false);
            assertEquals(EventCode.ACK_TIMEOUT.code(), s.peer.expect(Frame.OP_DISCONNECT).key());
            assertEquals(1, s.counter("retry.exceeded"));
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldFailReadWithRetryExceededWhenResponseNeverComes() {
        try (HostileSetup s = new HostileSetup(fastGiveUp())) {
            s.postRead(1, 8);
            s.peer.ack(); // the request arrived; its response never will
            s.expectCompletion(1, WcStatus.RETRY_EXCEEDED);
            s.awaitQpEvent(EventCode.ACK_TIMEOUT, false);
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldRetransmitPastAckTimeoutWhenRequestHasNoTimeout() {
        try (HostileSetup s = new HostileSetup(fastGiveUp())) {
            s.qp().send(1, Loopback.sge(s.lo.mrA, 0, 8), 1, WrFlags.NO_TIMEOUT, 0);
            final int seq = s.peer.expect(Frame.OP_SEND).seq();
            // Each retransmission waits at least the 1 ms RTO, so 20 of them span twice the 10 ms ack timeout.
            for (int i = 0; i < 20; i++) {
                s.peer.expect("retransmission " + i, r -> r.opcode() == Frame.OP_SEND && r.seq() == seq);
            }
            s.assertConnected();
            s.peer.ack();
            s.expectCompletion(1, WcStatus.SUCCESS);
            s.assertConnected();
        }
    }

    @Test
    void shouldFailConnectionWhenPeerNeverAcknowledgesResponses() {
        try (HostileSetup s = new HostileSetup(fastGiveUp())) {
            final int rKey = s.lo.mrA.rKey();
            s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(rKey).length(8).rspAck(0).send();
            s.peer.expect(Frame.OP_READ_RESP);
            s.awaitQpEvent(EventCode.ACK_TIMEOUT, false);
            assertEquals(EventCode.ACK_TIMEOUT.code(), s.peer.expect(Frame.OP_DISCONNECT).key());
            s.assertNoEngineErrors();
        }
    }
}
