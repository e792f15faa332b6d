package io.jdet.testing;

import io.jdet.Nic;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.internal.link.FabricLink;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A protocol-valid but hostile peer: a raw endpoint on a NIC's in-process fabric that plays the remote end of a
 * real queue pair with frames built by hand. It keeps the sequence numbers and cumulative acknowledgements a
 * correct peer would send, so every frame it sends comes from the connected peer's own address and queue pair
 * number and passes every check up to the one a test aims at; and it can send anything: NAKs with codes out of
 * range, responses that match no request, DISCONNECTs with unknown codes, requests with malformed fields, or
 * connection manager frames with limits out of range.
 *
 * <p>Its streams start at 1, as after {@link QpModify#connect}; {@link #startStreams} sets them for a connection
 * made through the connection manager. One test thread uses it; every wait has a deadline ({@link Tests#TIMEOUT}).
 */
public final class HostilePeer implements AutoCloseable {
    /** The queue pair number this peer claims: index 0x42, generation 1. */
    public static final int QP_NUMBER = 0x42 << 8 | 1;

    private final FabricLink link;
    private final Arena arena = Arena.ofShared();
    private final ByteBuffer headerView = ByteBuffer.allocateDirect(Frame.HEADER_LENGTH);
    private final MemorySegment header = MemorySegment.ofBuffer(headerView);
    private final MemorySegment payload;
    private final ByteBuffer payloadView;
    private final FrameGather gather = new FrameGather(1);
    private final FrameCrc crc = new FrameCrc();
    private final List<Received> received = new ArrayList<>();
    private long target = -1;
    private int targetQp;
    private int nextRequest = 1;
    private int nextResponse = 1;
    private int requestsInOrder;
    private int responsesInOrder;
    /** Where the next {@link #expect} starts looking in {@link #received}. */
    private int cursor;

    private HostilePeer(final String fabric, final int mtu) {
        this.link = new FabricLink(fabric, mtu, 256);
        this.payload = arena.allocate(link.mtu(), 8);
        this.payloadView = payload.asByteBuffer();
    }

    /**
     * Attaches a raw endpoint to the fabric a NIC is on, aimed at that NIC.
     *
     * @param nic a NIC opened on {@code loop:<fabric>}
     * @return the peer
     */
    public static HostilePeer on(final Nic nic) {
        final String address = nic.address();
        final String fabric = address.substring("loop:".length(), address.lastIndexOf('/'));
        final HostilePeer peer = new HostilePeer(fabric, 65_000);
        peer.target = peer.link.resolve(address);
        return peer;
    }

    /**
     * This endpoint's address, for {@link QpModify#connect} or a connection manager call.
     *
     * @return {@code loop:<fabric>/<n>}
     */
    public String address() {
        return link.address();
    }

    /** Start sequence numbers with both streams at 1 (and message ids at 0), for hand-made frames. */
    public static final long STREAMS_AT_ONE = 1L << 32 | 1;

    /**
     * Connects a queue pair of the NIC to this peer (IDLE to CONNECTED, streams at 1) and aims frames at it.
     *
     * @param qp the victim
     */
    public void connect(final QueuePair qp) {
        qp.modify(new QpModify().connect(address(), QP_NUMBER, STREAMS_AT_ONE).localPsn(STREAMS_AT_ONE));
        aimAt(qp.number());
    }

    /**
     * Aims frames at a queue pair without connecting it (for a connection made through the connection manager).
     *
     * @param qpNumber the victim's number
     */
    public void aimAt(final int qpNumber) {
        targetQp = qpNumber;
    }

    /**
     * Sets the streams to the initial sequence numbers of a connection manager handshake.
     *
     * @param requestIsn      the first request this peer sends
     * @param responseIsn     the first response this peer sends
     * @param peerRequestIsn  the first request the victim sends
     * @param peerResponseIsn the first response the victim sends
     */
    public void startStreams(final int requestIsn, final int responseIsn, final int peerRequestIsn,
                             final int peerResponseIsn) {
        nextRequest = requestIsn;
        nextResponse = responseIsn;
        requestsInOrder = peerRequestIsn - 1;
        responsesInOrder = peerResponseIsn - 1;
    }

    // ---------------------------------------------------------------- frames out

    /**
     * A frame of this peer's request stream, with the next request sequence number.
     *
     * @param opcode SEND, WRITE, READ, COMP_EXCH or FETCH_ADD
     * @return the frame to fill in and {@link Out#send()}
     */
    public Out request(final int opcode) {
        return new Out(opcode, nextRequest++);
    }

    /**
     * A frame of this peer's response stream, with the next response sequence number.
     *
     * @param opcode READ_RESP or ATOMIC_RESP
     * @return the frame
     */
    public Out response(final int opcode) {
        return new Out(opcode, nextResponse++);
    }

    /**
     * An unsequenced frame (ACK, NAK, DISCONNECT, or a connection manager frame with {@link Out#dst} 0).
     *
     * @param opcode the opcode
     * @return the frame
     */
    public Out control(final int opcode) {
        return new Out(opcode, 0);
    }

    /** Sends an ACK of everything received in order so far. */
    public void ack() {
        control(Frame.OP_ACK).send();
    }

    /**
     * Sends a NAK as a responder refusing a request does: if it names the last request received, that one is no
     * longer counted as received, so this NAK and later frames acknowledge only the requests before it.
     *
     * @param seq    the victim's request it refuses
     * @param status the status (key field)
     * @param event  the event code (length field)
     */
    public void nak(final int seq, final int status, final int event) {
        if (seq == requestsInOrder) {
            requestsInOrder = seq - 1;
        }
        control(Frame.OP_NAK).seq(seq).key(status).length(event).send();
    }

    /**
     * Sends a DISCONNECT as the connected peer does: its sequence number is the next request this peer would send,
     * which is exactly what the victim expects (RFC 5961's rule; an inexact one is not obeyed).
     *
     * @param code the code (key field)
     */
    public void disconnect(final int code) {
        disconnectFrame(code).send();
    }

    /**
     * A DISCONNECT as {@link #disconnect(int)} sends it, to change (its acknowledgements, say) before sending.
     *
     * @param code the code (key field)
     * @return the frame
     */
    public Out disconnectFrame(final int code) {
        return control(Frame.OP_DISCONNECT).seq(nextRequest).key(code);
    }

    /** One frame being built; every field starts as a correct peer would send it. */
    public final class Out {
        private final int opcode;
        private int flags;
        private int dst = targetQp;
        private int src = QP_NUMBER;
        private int seq;
        private int reqAck = Integer.MIN_VALUE;
        private int rspAck = Integer.MIN_VALUE;
        private int msgId;
        private long address;
        private long operand1;
        private long operand2;
        private int key;
        private int length;
        private int offset;
        private int immediate;
        private int sack;
        private byte[] data = new byte[0];

        private Out(final int opcode, final int seq) {
            this.opcode = opcode;
            this.seq = seq;
        }

        /** @param value the flags @return this */
        public Out flags(final int value) {
            flags = value;
            return this;
        }

        /** @param value the destination queue pair @return this */
        public Out dst(final int value) {
            dst = value;
            return this;
        }

        /** @param value the source queue pair @return this */
        public Out src(final int value) {
            src = value;
            return this;
        }

        /** @param value the sequence number @return this */
        public Out seq(final int value) {
            seq = value;
            return this;
        }

        /** @param value the request-stream ack (default: the last request received in order) @return this */
        public Out reqAck(final int value) {
            reqAck = value;
            return this;
        }

        /** @param value the response-stream ack (default: the last response received in order) @return this */
        public Out rspAck(final int value) {
            rspAck = value;
            return this;
        }

        /** @param value the message id @return this */
        public Out msgId(final int value) {
            msgId = value;
            return this;
        }

        /** @param value the address @return this */
        public Out address(final long value) {
            address = value;
            return this;
        }

        /** @param first operand 1 @param second operand 2 @return this */
        public Out operands(final long first, final long second) {
            operand1 = first;
            operand2 = second;
            return this;
        }

        /** @param value the key @return this */
        public Out key(final int value) {
            key = value;
            return this;
        }

        /** @param value the length @return this */
        public Out length(final int value) {
            length = value;
            return this;
        }

        /** @param value the fragment offset @return this */
        public Out offset(final int value) {
            offset = value;
            return this;
        }

        /** @param value the immediate data @return this */
        public Out immediate(final int value) {
            immediate = value;
            return this;
        }

        /** @param value the selective-ack bits (bit i: the sender holds frame ack + 2 + i) @return this */
        public Out sack(final int value) {
            sack = value;
            return this;
        }

        /** @param value the payload @return this */
        public Out payload(final byte[] value) {
            data = value.clone();
            return this;
        }

        /**
         * Seals the frame (a correct CRC) and sends it to the victim's NIC.
         *
         * @return the sequence number it carried
         */
        public int send() {
            Frame.writeBase(header, opcode, flags, data.length, dst, src, seq,
                reqAck == Integer.MIN_VALUE ? requestsInOrder : reqAck,
                rspAck == Integer.MIN_VALUE ? responsesInOrder : rspAck, msgId);
            Frame.writeExtension(header, address, operand1, operand2, key, length, offset, immediate);
            Frame.sack(header, sack);
            gather.clear();
            if (data.length > 0) {
                MemorySegment.copy(data, 0, payload, ValueLayout.JAVA_BYTE, 0, data.length);
                gather.add(payload, payloadView, 0, data.length);
            }
            crc.seal(header, headerView, Frame.HEADER_LENGTH, gather);
            final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
            while (!link.send(target, header, Frame.HEADER_LENGTH, gather)) {
                if (System.nanoTime() - deadline > 0) {
                    fail("the victim's ring stayed full for " + Tests.TIMEOUT);
                }
                Thread.yield();
            }
            return seq;
        }
    }

    // ---------------------------------------------------------------- frames in

    /** A frame the victim sent, copied out of the ring. */
    public record Received(MemorySegment frame) {
        /** @return the opcode */
        public int opcode() {
            return Frame.opcode(frame);
        }

        /** @return the flags */
        public int flags() {
            return Frame.flags(frame);
        }

        /** @return the source queue pair */
        public int srcQp() {
            return Frame.srcQp(frame);
        }

        /** @return the sequence number */
        public int seq() {
            return Frame.seq(frame);
        }

        /** @return the request acknowledgement: the last request of this peer received in order */
        public int reqAck() {
            return Frame.reqAck(frame);
        }

        /** @return the response acknowledgement: the last response of this peer received in order */
        public int rspAck() {
            return Frame.rspAck(frame);
        }

        /** @return the message id */
        public int msgId() {
            return Frame.msgId(frame);
        }

        /** @return the address field */
        public long address() {
            return Frame.address(frame);
        }

        /** @return operand 2 (a connection manager cookie) */
        public long operand2() {
            return Frame.operand2(frame);
        }

        /** @return operand 1 */
        public long operand1() {
            return Frame.operand1(frame);
        }

        /** @return the key field */
        public int key() {
            return Frame.key(frame);
        }

        /** @return the length field */
        public int length() {
            return Frame.length(frame);
        }

        /** @return the fragment offset */
        public int offset() {
            return Frame.offset(frame);
        }

        /** @return the payload length */
        public int payloadLength() {
            return Frame.payloadLength(frame);
        }

        @Override
        public String toString() {
            return "Received[op " + opcode() + ", seq " + seq() + ", msg " + msgId() + ", key " + key() + ", length "
                + length() + "]";
        }
    }

    /**
     * Receives until a frame with an opcode arrives, or fails after {@link Tests#TIMEOUT}.
     *
     * @param opcode the opcode
     * @return the frame
     */
    public Received expect(final int opcode) {
        return expect("opcode " + opcode, r -> r.opcode() == opcode);
    }

    /**
     * Receives until a frame matches, or fails after {@link Tests#TIMEOUT}. The search starts after the frame the
     * last {@code expect} returned, so frames that arrived meanwhile count. Every frame is kept in
     * {@link #received()}; request and response frames received in order advance the acknowledgements this peer
     * sends.
     *
     * @param what  the frame wanted, for the failure message
     * @param match what to wait for
     * @return the frame
     */
    public Received expect(final String what, final Predicate<Received> match) {
        final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
        int from = cursor;
        while (true) {
            for (int i = from; i < received.size(); i++) {
                if (match.test(received.get(i))) {
                    cursor = i + 1;
                    return received.get(i);
                }
            }
            from = received.size();
            final long leftNs = deadline - System.nanoTime();
            if (leftNs <= 0) {
                fail("no frame with " + what + " within " + Tests.TIMEOUT + "; got " + received);
            }
            if (link.receive(this::take, 64) == 0) {
                link.await(Math.min(leftNs, TimeUnit.MILLISECONDS.toNanos(10)));
            }
        }
    }

    /**
     * Takes whatever the victim has sent by now, without waiting.
     *
     * @return every frame received so far, oldest first
     */
    public List<Received> received() {
        while (link.receive(this::take, 64) > 0) {
            // drain
        }
        return List.copyOf(received);
    }

    private void take(final MemorySegment frame, final int length, final long peer) {
        final Received r = new Received(MemorySegment.ofArray(frame.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE)));
        received.add(r);
        final int opcode = r.opcode();
        if (opcode <= Frame.OP_FETCH_ADD && r.seq() == requestsInOrder + 1) {
            requestsInOrder++;
        } else if ((opcode == Frame.OP_READ_RESP || opcode == Frame.OP_ATOMIC_RESP)
            && r.seq() == responsesInOrder + 1) {
            responsesInOrder++;
        }
    }

    @Override
    public void close() {
        link.close();
        arena.close();
    }
}
