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
 * The responder at the edges of what a request may ask, from a {@link HostilePeer}: exactly max_ir reads or
 * atomics in flight and one more, a read of zero bytes and one of exactly one frame, a write fragment that fills
 * its message without LAST, and the completion flags of a write with immediate data.
 */
@Timeout(60)
class ResponderEdgesTest {

    private static HostilePeer.Out read(final HostileSetup s, final int length) {
        return s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(length);
    }

    private static HostilePeer.Out fetchAdd(final HostileSetup s) {
        return s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(8)
            .operands(1, 0);
    }

    private static HostileSetup maxIr(final int value) {
        return new HostileSetup(new Loopback.Options().connect(false).maxIr(value)
            .configuration(new Configuration().minRtoUs(3_000_000).maxRtoUs(3_000_000)));
    }

    @Test
    void shouldTakeExactlyMaxIrReadsWhoseResponsesAreNotAcknowledged() {
        try (HostileSetup s = maxIr(2)) {
            read(s, 8).rspAck(0).send();
            read(s, 8).rspAck(0).send();
            s.peer.expect(Frame.OP_READ_RESP);
            s.peer.expect(Frame.OP_READ_RESP);
            final int third = read(s, 8).rspAck(0).send();
            s.awaitNak(third, WcStatus.INVALID_REQUEST, EventCode.MAX_IR_EXCEEDED);
        }
    }

    @Test
    void shouldTakeExactlyMaxIrAtomicsWhoseResponsesAreNotAcknowledged() {
        try (HostileSetup s = maxIr(2)) {
            fetchAdd(s).rspAck(0).send();
            fetchAdd(s).rspAck(0).send();
            s.peer.expect(Frame.OP_ATOMIC_RESP);
            s.peer.expect(Frame.OP_ATOMIC_RESP);
            assertEquals(2, s.counter("atomics.executed"));
            assertEquals(2, s.lo.bufA.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0));
            final int third = fetchAdd(s).rspAck(0).send();
            s.awaitNak(third, WcStatus.INVALID_REQUEST, EventCode.MAX_IR_EXCEEDED);
            assertEquals(2, s.counter("atomics.executed"));
        }
    }

    @Test
    void shouldTakeMaxIrMoreAtomicsOnceTheResponsesBeforeThemAreAcknowledged() {
        try (HostileSetup s = maxIr(2)) {
            fetchAdd(s).rspAck(0).send();
            fetchAdd(s).rspAck(0).send();
            final int firstResponse = s.peer.expect(Frame.OP_ATOMIC_RESP).seq();
            final int secondResponse = s.peer.expect(Frame.OP_ATOMIC_RESP).seq();
            assertEquals(firstResponse + 1, secondResponse);
            fetchAdd(s).rspAck(secondResponse).send(); // both responses acknowledged: two more may be in flight
            fetchAdd(s).rspAck(secondResponse).send();
            s.peer.expect(Frame.OP_ATOMIC_RESP);
            s.peer.expect(Frame.OP_ATOMIC_RESP);
            assertEquals(4, s.counter("atomics.executed"));
            final int fifth = fetchAdd(s).rspAck(secondResponse).send();
            s.awaitNak(fifth, WcStatus.INVALID_REQUEST, EventCode.MAX_IR_EXCEEDED);
            assertEquals(4, s.lo.bufA.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0));
        }
    }

    @Test
    void shouldAlignAnAtomicByItsAddressNotByItsOffsetInTheRegion() {
        try (HostileSetup s = new HostileSetup()) {
            // A region that starts 2 bytes past an 8-byte boundary: its offset 6 is an aligned address.
            final java.lang.foreign.MemorySegment odd = s.lo.arena.allocate(64, 8).asSlice(2);
            final MemoryRegion mr = s.lo.pdA.regMr(odd, Loopback.ALL_RIGHTS);
            s.peer.request(Frame.OP_FETCH_ADD).address(mr.address() + 6).key(mr.rKey()).length(8).operands(5, 0)
                .send();
            s.peer.expect(Frame.OP_ATOMIC_RESP);
            assertEquals(5, odd.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 6));
            final int misaligned = s.peer.request(Frame.OP_FETCH_ADD).address(mr.address() + 8).key(mr.rKey())
                .length(8).operands(5, 0).send();
            s.awaitNak(misaligned, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldFlushAndCountEveryPostedReceiveWhenTheConnectionFails() {
        try (HostileSetup s = new HostileSetup()) {
            final long flushedBefore = s.counter("wr.flushed");
            for (int i = 1; i <= 3; i++) {
                s.qp().recv(i, Loopback.sge(s.lo.mrA, 0, 8), 1);
            }
            s.peer.disconnect(EventCode.REMOTE_BIT | EventCode.QP_DESTROYED.code());
            for (int i = 1; i <= 3; i++) {
                s.expectCompletion(i, WcStatus.FLUSHED);
            }
            assertEquals(flushedBefore + 3, s.counter("wr.flushed"));
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldResendUnacknowledgedResponsesThenGiveUpWithAckTimeout() {
        try (HostileSetup s = new HostileSetup(new Configuration().minRtoUs(2_000).maxRtoUs(4_000).ackTimeoutMs(300))) {
            read(s, 8).rspAck(0).send(); // and never an acknowledgement of the response
            final int first = s.peer.expect(Frame.OP_READ_RESP).seq();
            assertEquals(first, s.peer.expect(Frame.OP_READ_RESP).seq(), "the same response, resent on its timer");
            s.awaitQpEvent(EventCode.ACK_TIMEOUT, false);
            assertTrue(s.counter("retransmit.timeouts") >= 1);
            assertEquals(1, s.counter("retry.exceeded"));
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldRepeatItsDisconnectOneForOneInErrorButNeverAnswerANakOrDisconnect() {
        try (HostileSetup s = new HostileSetup()) {
            s.peer.disconnect(999); // no event: a protocol error, told to the peer with a DISCONNECT
            s.awaitProtocolError(EventCode.QP_ERROR);
            s.peer.control(Frame.OP_ACK).reqAck(6).send(); // the first DISCONNECT may have been lost: say it again
            final HostilePeer.Received again = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(EventCode.QP_ERROR.code(), again.key());
            assertEquals(7, again.seq(), "the echo of the frame's request ack, plus one");
            s.peer.control(Frame.OP_NAK).seq(1).key(WcStatus.ACCESS_ERR.code())
                .length(EventCode.ACCESS_VIOLATION.code()).send();
            s.peer.control(Frame.OP_DISCONNECT).seq(1).key(EventCode.DISCONNECT.code()).send();
            s.peer.control(Frame.OP_ACK).send();
            s.peer.expect(Frame.OP_DISCONNECT); // the answer to the ACK, and nothing for the two before it
            assertEquals(3, s.peer.received().stream().filter(r -> r.opcode() == Frame.OP_DISCONNECT).count());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldRepeatItsNakToARequestItReceivesInError() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_WRITE).address(s.lo.bufA.address()).key(s.lo.mrA.rKey() ^ 0x100)
                .length(8).payload(new byte[8]).flags(Frame.FLAG_LAST).send();
            final HostilePeer.Received nak = s.peer.expect(Frame.OP_NAK);
            assertEquals(seq, nak.seq());
            s.peer.request(Frame.OP_SEND).payload(new byte[8]).flags(Frame.FLAG_LAST).send();
            final HostilePeer.Received again = s.peer.expect(Frame.OP_NAK);
            assertEquals(seq, again.seq(), "the same NAK: the request that failed");
            assertEquals(nak.key(), again.key());
            assertEquals(nak.length(), again.length());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldAnswerAReadOfZeroBytesWithOneEmptyLastFrame() {
        try (HostileSetup s = new HostileSetup()) {
            read(s, 0).send();
            final HostilePeer.Received r = s.peer.expect(Frame.OP_READ_RESP);
            assertEquals(0, r.payloadLength());
            assertTrue((r.flags() & Frame.FLAG_LAST) != 0, r.toString());
            // Zero bytes touch no memory: the key is not looked up (as in InfiniBand).
            s.peer.request(Frame.OP_READ).address(0).key(0xDEAD).length(0).send();
            final HostilePeer.Received empty = s.peer.expect(Frame.OP_READ_RESP);
            assertEquals(0, empty.payloadLength());
            s.peer.ack();
            s.assertConnected();
        }
    }

    @Test
    void shouldAnswerAReadOfExactlyOneFramesPayloadWithOneFrame() {
        try (HostileSetup s = new HostileSetup(new Configuration().loopMtu(1000))) {
            read(s, 3000).send();
            final int payload = s.peer.expect(Frame.OP_READ_RESP).payloadLength();
            HostilePeer.Received r;
            do {
                r = s.peer.expect(Frame.OP_READ_RESP);
            } while ((r.flags() & Frame.FLAG_LAST) == 0);
            s.peer.ack();
            read(s, payload).send();
            // the first read's frames may be resent before the ACK lands (a loaded machine): skip them
            final int next = r.seq() + 1;
            final HostilePeer.Received one = s.peer.expect("the second read's response",
                f -> f.opcode() == Frame.OP_READ_RESP && f.seq() == next);
            assertEquals(payload, one.payloadLength());
            assertTrue((one.flags() & Frame.FLAG_LAST) != 0, "one frame: " + one);
            s.peer.ack();
            s.assertConnected();
        }
    }

    @Test
    void shouldRefuseAWriteFragmentWithoutLastThatFillsItsMessage() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_WRITE).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(8).payload(new byte[8]).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldReportImmediateWithoutSolicitedWhenTheWriteIsNotSolicited() {
        try (HostileSetup s = new HostileSetup()) {
            s.qp().recv(7, Loopback.sge(s.lo.mrA, 0, 8), 1);
            s.qp().recv(8, Loopback.sge(s.lo.mrA, 0, 8), 1);
            s.peer.request(Frame.OP_WRITE).flags(Frame.FLAG_LAST | Frame.FLAG_IMMEDIATE)
                .address(s.lo.bufA.address() + 64).key(s.lo.mrA.rKey()).length(4).immediate(42)
                .payload(new byte[] {1, 2, 3, 4}).send();
            final WorkCompletion wc = Tests.pollOne(s.lo.cqA);
            assertEquals(7, wc.id());
            assertEquals(WcFlags.IMMEDIATE, wc.flags(), wc.toString());
            assertEquals(42, wc.immediate());
            s.peer.request(Frame.OP_WRITE).flags(Frame.FLAG_LAST | Frame.FLAG_IMMEDIATE | Frame.FLAG_SOLICITED)
                .msgId(1).address(s.lo.bufA.address() + 64).key(s.lo.mrA.rKey()).length(4).immediate(43)
                .payload(new byte[] {1, 2, 3, 4}).send();
            final WorkCompletion solicited = Tests.pollOne(s.lo.cqA);
            assertEquals(8, solicited.id());
            assertEquals(WcFlags.IMMEDIATE | WcFlags.SOLICITED, solicited.flags(), solicited.toString());
            s.assertConnected();
        }
    }
}
