package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The responder against a hostile peer: malformed requests from the connected peer's own address and queue pair
 * (so they pass the sender check and reach request validation) are refused with a NAK naming the status and event
 * of {@code docs/PROTOCOL.md} 6.6, the queue pair fails with a local event, and no byte outside what a valid
 * request could write changes. Well-formed requests from the same fixture succeed, so each refusal is the field's.
 */
@Timeout(60)
class HostileRequestsTest {
    private static final byte[] EIGHT = {1, 2, 3, 4, 5, 6, 7, 8};

    private static void postReceive(final HostileSetup s, final long id, final int length) {
        s.qp().recv(id, Loopback.sge(s.lo.mrA, 0, length), 1);
    }

    private static WorkCompletion receiveCompletion(final HostileSetup s) {
        return Tests.pollOne(s.lo.cqA);
    }

    private static HostilePeer.Out send(final HostileSetup s, final int offset, final int total, final int n) {
        return s.peer.request(Frame.OP_SEND).offset(offset).length(total).payload(new byte[n]);
    }

    @Test
    void shouldReceiveSendOfTwoFragments() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            s.peer.request(Frame.OP_SEND).length(16).payload(EIGHT).send();
            s.peer.request(Frame.OP_SEND).flags(Frame.FLAG_LAST | Frame.FLAG_IMMEDIATE).length(16).offset(8)
                .immediate(99).payload(EIGHT).send();
            final WorkCompletion wc = receiveCompletion(s);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(16, wc.length());
            assertEquals(99, wc.immediate());
            assertEquals(0x0807_0605_0403_0201L, s.lo.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 8));
            s.assertConnected();
        }
    }

    @Test
    void shouldRefuseSendFragmentThatSkipsBytes() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            send(s, 0, 24, 8).send();
            final int seq = send(s, 16, 24, 8).flags(Frame.FLAG_LAST).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
            assertEquals(WcStatus.FLUSHED, receiveCompletion(s).status());
        }
    }

    @Test
    void shouldRefuseSendFragmentThatChangesLength() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            send(s, 0, 24, 8).send();
            final int seq = send(s, 8, 16, 8).flags(Frame.FLAG_LAST).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseSendWhoseLastFragmentEndsEarly() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            final int seq = send(s, 0, 16, 8).flags(Frame.FLAG_LAST).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseSendFragmentWithoutLastThatFillsMessage() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            final int seq = send(s, 0, 8, 8).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseSendWithNegativeLength() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            final int seq = send(s, 0, -8, 8).flags(Frame.FLAG_LAST).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseSendLongerThanReceive() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 4);
            final int seq = send(s, 0, 8, 8).flags(Frame.FLAG_LAST).send();
            s.awaitNak(seq, WcStatus.BOUNDS_ERR, EventCode.BOUNDS_VIOLATION);
            assertEquals(WcStatus.BOUNDS_ERR, receiveCompletion(s).status());
        }
    }

    @Test
    void shouldRefuseSendWithWrongMessageId() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            final int seq = send(s, 0, 8, 8).flags(Frame.FLAG_LAST).msgId(3).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_MSG_ID);
        }
    }

    @Test
    void shouldRefuseLaterFragmentWithoutReceive() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = send(s, 8, 16, 8).flags(Frame.FLAG_LAST).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_MSG_ID);
        }
    }

    @Test
    void shouldAnswerReceiverNotReadyWhenNoReceiveIsPosted() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = send(s, 0, 8, 8).flags(Frame.FLAG_LAST).send();
            final HostilePeer.Received nak = s.peer.expect(Frame.OP_NAK);
            assertEquals(seq, nak.seq());
            assertEquals(Frame.NAK_RNR, nak.key());
            assertEquals(1, s.counter("rnr.naks.sent"));
            s.assertConnected();
        }
    }

    @Test
    void shouldRefuseSendThatInvalidatesUnknownKey() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            final int seq = send(s, 0, 8, 8).flags(Frame.FLAG_LAST | Frame.FLAG_INVALIDATE).key(0x1234_5601).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_RDMA_KEY);
            assertEquals(WcStatus.INVALID_REQUEST, receiveCompletion(s).status());
        }
    }

    @Test
    void shouldRefuseWriteWithImmediateWhoseLengthIsNegative() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            final int seq = s.peer.request(Frame.OP_WRITE).flags(Frame.FLAG_LAST | Frame.FLAG_IMMEDIATE)
                .address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(-5).payload(EIGHT).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
            assertEquals(WcStatus.FLUSHED, receiveCompletion(s).status());
        }
    }

    @Test
    void shouldRefuseWriteFragmentThatChangesLength() {
        try (HostileSetup s = new HostileSetup()) {
            final MemorySegment before = MemorySegment.ofArray(s.lo.bufA.asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE));
            s.peer.request(Frame.OP_WRITE).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(16)
                .payload(EIGHT).send();
            final int seq = s.peer.request(Frame.OP_WRITE).flags(Frame.FLAG_LAST).address(s.lo.bufA.address() + 8)
                .key(s.lo.mrA.rKey()).length(9).offset(8).payload(EIGHT).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
            Tests.assertSameBytes(before.asSlice(8, 8), s.lo.bufA.asSlice(8, 8));
        }
    }

    @Test
    void shouldRefuseWriteWithUnknownKey() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_WRITE).flags(Frame.FLAG_LAST).address(s.lo.bufA.address())
                .key(s.lo.mrA.rKey() ^ 0x100).length(8).payload(EIGHT).send();
            s.awaitNak(seq, WcStatus.PROTECTION_ERR, EventCode.INVALID_RDMA_KEY);
        }
    }

    @Test
    void shouldServeReadAndAtomic() {
        try (HostileSetup s = new HostileSetup()) {
            s.lo.bufA.set(ValueLayout.JAVA_LONG, 0, 40);
            s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(8).send();
            assertEquals(8, s.peer.expect(Frame.OP_READ_RESP).payloadLength());
            s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(8)
                .operands(2, 0).send();
            assertEquals(40, s.peer.expect(Frame.OP_ATOMIC_RESP).operand1());
            assertEquals(42, s.lo.bufA.get(ValueLayout.JAVA_LONG, 0));
            s.assertConnected();
        }
    }

    @Test
    void shouldRefuseReadThatCarriesData() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(8).payload(EIGHT).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseReadInTheMiddleOfSend() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            send(s, 0, 16, 8).send();
            final int seq = s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(8).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseReadWithNegativeLength() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(-1).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseReadBeyondRegion() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(Integer.MAX_VALUE).send();
            s.awaitNak(seq, WcStatus.BOUNDS_ERR, EventCode.BOUNDS_VIOLATION);
        }
    }

    @Test
    void shouldRefuseMoreReadsThanMaxIr() {
        try (HostileSetup s = new HostileSetup()) {
            final int maxIr = s.qp().query().maxIr();
            int seq = 0;
            for (int i = 0; i <= maxIr; i++) {
                // Responses stay unacknowledged, so each read keeps its place in the responder's inbound queue.
                seq = s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(8)
                    .rspAck(0).send();
            }
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.MAX_IR_EXCEEDED);
        }
    }

    @Test
    void shouldRefuseMisalignedAtomic() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_COMP_EXCH).address(s.lo.bufA.address() + 4)
                .key(s.lo.mrA.rKey()).length(8).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
        }
    }

    @Test
    void shouldRefuseAtomicWhoseLengthIsNotEight() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(4096).operands(1, 0).send();
            s.awaitNak(seq, WcStatus.INVALID_REQUEST, EventCode.INVALID_LENGTH);
            assertEquals(0, s.lo.bufA.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    @Test
    void shouldRefuseAtomicWithUnknownKey() {
        try (HostileSetup s = new HostileSetup()) {
            final int seq = s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address()).key(0x55_5501)
                .length(8).operands(1, 0).send();
            s.awaitNak(seq, WcStatus.PROTECTION_ERR, EventCode.INVALID_ATOMIC_KEY);
        }
    }

    @Test
    void shouldDropFrameWithUnknownFlags() {
        try (HostileSetup s = new HostileSetup()) {
            postReceive(s, 1, 64);
            send(s, 0, 8, 8).flags(Frame.FLAG_LAST | 0x0001).send();
            Tests.await("the frame counted as a bad header", () -> s.counter("rx.bad_header") == 1);
            s.assertConnected();
        }
    }
}
