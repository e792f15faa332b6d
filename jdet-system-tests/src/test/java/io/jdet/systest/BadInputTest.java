package io.jdet.systest;

import io.jdet.Det;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.WcStatus;
import io.jdet.internal.wire.Frame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile datagrams sent at a UDP NIC from a plain socket, from a foreign address and from the connected peer's
 * own: each kind is counted and dropped, or refused as the protocol says, the engine keeps working (no error
 * inside it), and no registered byte changes.
 */
@Timeout(60)
class BadInputTest {

    /** Builds frames with a correct CRC unless asked otherwise. */
    private static final class Raw implements AutoCloseable {
        final Arena arena = Arena.ofConfined();

        @Override
        public void close() {
            arena.close();
        }

        final MemorySegment frame = arena.allocate(2048, 8);

        MemorySegment header(final int opcode, final int payload, final int dst, final int src) {
            return header(opcode, 0, payload, dst, src, 1);
        }

        MemorySegment header(final int opcode, final int flags, final int payload, final int dst, final int src,
                             final int seq) {
            frame.fill((byte) 0);
            Frame.writeBase(frame, opcode, flags, payload, dst, src, seq, 0, 0, 0);
            return frame;
        }

        ByteBuffer seal(final int payload) {
            final int length = Frame.HEADER_LENGTH + payload;
            frame.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), Frame.CRC_OFFSET, 0);
            final CRC32C crc = new CRC32C();
            crc.update(frame.asSlice(0, length).asByteBuffer());
            frame.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), Frame.CRC_OFFSET,
                (int) crc.getValue());
            return ByteBuffer.wrap(frame.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void shouldCountAndDropEveryKindOfBadFrame() throws Exception {
        try (Det det = Det.open(); Endpoint a = new Endpoint(det, "udp:127.0.0.1", 1 << 16, 16);
             Endpoint b = new Endpoint(det, "udp:127.0.0.1", 1 << 16, 16);
             DatagramChannel raw = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             Raw r = new Raw()) {
            a.qp.modify(new QpModify().connect(b.nic.address(), b.qp.number(), b.qp.query().localPsn()));
            b.qp.modify(new QpModify().connect(a.nic.address(), a.qp.number(), a.qp.query().localPsn()));
            final String[] hostPort = a.nic.address().substring(4).split(":");
            final InetSocketAddress target = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
            a.buffer.fill((byte) 0x5A);
            final byte[] before = a.buffer.toArray(ValueLayout.JAVA_BYTE);

            // Wrong magic, wrong version, a payload length that disagrees with the datagram.
            r.header(Frame.OP_SEND, 0, a.qp.number(), b.qp.number()).set(ValueLayout.JAVA_BYTE, 0, (byte) 0x99);
            expect(a, raw, target, r.seal(0), "rx.bad_header", 1);
            r.header(Frame.OP_SEND, 0, a.qp.number(), b.qp.number()).set(ValueLayout.JAVA_BYTE, 2, (byte) 9);
            expect(a, raw, target, r.seal(0), "rx.bad_header", 2);
            r.header(Frame.OP_SEND, 500, a.qp.number(), b.qp.number());
            expect(a, raw, target, r.seal(10), "rx.bad_header", 3);
            // A bad CRC; truncated and empty datagrams.
            r.header(Frame.OP_SEND, 0, a.qp.number(), b.qp.number());
            final ByteBuffer corrupt = r.seal(0);
            corrupt.put(50, (byte) (corrupt.get(50) ^ 1));
            expect(a, raw, target, corrupt, "link.rx.bad_crc", 1);
            expect(a, raw, target, ByteBuffer.wrap(new byte[20]), "link.rx.truncated", 1);
            expect(a, raw, target, ByteBuffer.allocate(0), "link.rx.truncated", 2);
            // An unknown opcode; a connection manager opcode not addressed to queue pair 0.
            r.header(99, 0, a.qp.number(), b.qp.number());
            expect(a, raw, target, r.seal(0), "rx.bad_opcode", 1);
            r.header(Frame.OP_CM_REQUEST, 0, a.qp.number(), b.qp.number());
            expect(a, raw, target, r.seal(0), "rx.bad_header", 4);

            // An unknown queue pair: counted, and answered with a disconnect naming INVALID_QP.
            r.header(Frame.OP_SEND, 0, 0x7F_FF00, 1234);
            expect(a, raw, target, r.seal(0), "rx.unknown_qp", 1);
            final ByteBuffer answer = ByteBuffer.allocate(2048).order(ByteOrder.LITTLE_ENDIAN);
            raw.configureBlocking(true);
            raw.socket().setSoTimeout(10_000);
            raw.receive(answer);
            assertEquals(Frame.OP_DISCONNECT, answer.get(Frame.OPCODE_OFFSET));
            assertEquals(1234, answer.getInt(Frame.DST_QP_OFFSET));
            assertEquals(EventCode.INVALID_QP.code(), answer.getInt(Frame.KEY_OFFSET));

            // Frames for the connected queue pair from an address that is not its peer: a write into the region
            // with the right key, a disconnect, and a connection manager disconnect.
            r.header(Frame.OP_WRITE, 100, a.qp.number(), b.qp.number());
            Frame.writeExtension(r.frame, a.region.address(), 0, 0, a.region.rKey(), 100, 0, 0);
            r.frame.asSlice(Frame.HEADER_LENGTH, 100).fill((byte) 0xEE);
            expect(a, raw, target, r.seal(100), "rx.foreign_source", 1);
            r.header(Frame.OP_DISCONNECT, 0, a.qp.number(), b.qp.number());
            Frame.writeExtension(r.frame, 0, 0, 0, EventCode.DISCONNECT.code(), 0, 0, 0);
            expect(a, raw, target, r.seal(0), "rx.foreign_source", 2);
            r.header(Frame.OP_CM_DISCONNECT, 0, 0, b.qp.number());
            Frame.writeExtension(r.frame, 0, 0, 0, a.qp.number(), 0, 0, 0);
            expect(a, raw, target, r.seal(0), "rx.foreign_source", 3);

            assertEquals(QpState.CONNECTED, a.qp.query().state());
            assertEquals(-1, MemorySegment.ofArray(before).mismatch(a.buffer), "registered memory changed");
            // The engine still works.
            a.qp.recv(1, a.at(0, 16), 1);
            b.buffer.set(ValueLayout.JAVA_LONG, 0, 0x0123_4567_89AB_CDEFL);
            b.qp.send(2, b.at(0, 8), 1, 0, 0);
            assertEquals(WcStatus.SUCCESS, a.received(1, 10_000).get(0).status());
            assertEquals(0x0123_4567_89AB_CDEFL, a.buffer.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(WcStatus.SUCCESS, b.sent(1, 10_000).get(0).status());
            a.assertEngineHealthy(); // every hostile datagram was counted and dropped, none caught as a failure
            b.assertEngineHealthy();
        }
    }

    /**
     * Hostile frames from the connected peer itself (a raw socket that the queue pair is connected to, so they
     * pass the sender check): a malformed header is dropped, a malformed request is refused with a NAK, a
     * DISCONNECT whose code is no event fails the connection with an event the application can decode, and no
     * registered byte changes.
     */
    @Test
    void shouldRefuseHostileFramesFromConnectedPeer() throws Exception {
        final int rawQp = 0x4201;
        try (Det det = Det.open(); EventQueue events = det.createEvent(null);
             Endpoint a = new Endpoint(det, "udp:127.0.0.1", 1 << 16, 16, events);
             DatagramChannel raw = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             Raw r = new Raw()) {
            raw.configureBlocking(false);
            final int rawPort = ((InetSocketAddress) raw.getLocalAddress()).getPort();
            final QpModify connect = new QpModify().connect("udp:127.0.0.1:" + rawPort, rawQp, 1L << 32 | 1)
                .localPsn(1L << 32 | 1); // streams at 1, as the hand-made frames number them
            a.qp.modify(connect);
            final String[] hostPort = a.nic.address().substring(4).split(":");
            final InetSocketAddress target = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
            a.buffer.fill((byte) 0x5A);
            final byte[] before = a.buffer.toArray(ValueLayout.JAVA_BYTE);
            final int dst = a.qp.number();

            // A write into the region with the right key, but with a flag bit no version defines: a bad header.
            r.header(Frame.OP_WRITE, Frame.FLAG_LAST | 0x0001, 100, dst, rawQp, 1);
            Frame.writeExtension(r.frame, a.region.address(), 0, 0, a.region.rKey(), 100, 0, 0);
            r.frame.asSlice(Frame.HEADER_LENGTH, 100).fill((byte) 0xEE);
            expect(a, raw, target, r.seal(100), "rx.bad_header", 1);
            assertEquals(QpState.CONNECTED, a.qp.query().state());

            // A send fragment that skips bytes of its message: refused with a NAK naming INVALID_LENGTH.
            a.qp.recv(1, a.at(0, 64), 1);
            r.header(Frame.OP_SEND, 0, 8, dst, rawQp, 1);
            Frame.writeExtension(r.frame, 0, 0, 0, 0, 24, 0, 0);
            raw.send(r.seal(8), target);
            r.header(Frame.OP_SEND, Frame.FLAG_LAST, 8, dst, rawQp, 2);
            Frame.writeExtension(r.frame, 0, 0, 0, 0, 24, 16, 0);
            raw.send(r.seal(8), target);
            final ByteBuffer nak = receive(raw, Frame.OP_NAK);
            assertEquals(2, nak.getInt(Frame.SEQ_OFFSET));
            assertEquals(WcStatus.INVALID_REQUEST.code(), nak.getInt(Frame.KEY_OFFSET));
            assertEquals(EventCode.INVALID_LENGTH.code(), nak.getInt(Frame.LENGTH_OFFSET));
            assertEquals(WcStatus.FLUSHED, a.received(1, 10_000).get(0).status());
            awaitEvent(events, EventCode.INVALID_LENGTH);

            // Connected again, a DISCONNECT whose code is no event: a protocol error, not an undecodable event.
            a.qp.modify(new QpModify().state(QpState.IDLE));
            a.qp.modify(connect);
            r.header(Frame.OP_DISCONNECT, 0, 0, dst, rawQp, 1); // exactly the next request expected: obeyed
            Frame.writeExtension(r.frame, 0, 0, 0, 999, 0, 0, 0);
            expect(a, raw, target, r.seal(0), "rx.protocol_error", 1);
            awaitEvent(events, EventCode.QP_ERROR);
            assertEquals(EventCode.QP_ERROR.code(), receive(raw, Frame.OP_DISCONNECT).getInt(Frame.KEY_OFFSET));

            assertEquals(-1, MemorySegment.ofArray(before).asSlice(64).mismatch(a.buffer.asSlice(64)),
                "registered memory beyond the receive buffer changed");
            assertEquals(0, a.nic.counters().get("engine.errors"), "nothing failed inside the engine");
        }
    }

    /** Waits for the queue pair event, which must decode; fails after 10 s. */
    private static void awaitEvent(final EventQueue events, final EventCode code) {
        final EventRecord record = new EventRecord();
        events.waitOn(10_000_000, record);
        assertEquals(code, record.code(), record.toString());
        assertTrue(record.toString().contains(code.name()));
    }

    /** Receives datagrams at the raw socket until one with the opcode arrives; fails after 10 s. */
    private static ByteBuffer receive(final DatagramChannel raw, final int opcode) throws IOException {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() - deadline < 0) {
            final ByteBuffer answer = ByteBuffer.allocate(2048).order(ByteOrder.LITTLE_ENDIAN);
            if (raw.receive(answer) == null) {
                LockSupport.parkNanos(100_000);
            } else if (answer.get(Frame.OPCODE_OFFSET) == opcode) {
                return answer;
            }
        }
        throw new AssertionError("no frame with opcode " + opcode + " within 10 s");
    }

    /** Sends a datagram and polls until the counter reaches the value. */
    private static void expect(final Endpoint e, final DatagramChannel raw, final InetSocketAddress target,
                               final ByteBuffer datagram, final String counter, final long value) throws IOException {
        raw.send(datagram, target);
        final long deadline = System.nanoTime() + 10_000_000_000L;
        long now = e.nic.counters().getOrDefault(counter, -1L);
        while (now < value && System.nanoTime() < deadline) {
            e.recvCq.poll(new io.jdet.WorkCompletion[1], 0);
            now = e.nic.counters().getOrDefault(counter, -1L);
        }
        assertEquals(value, now, counter + " in " + e.nic.counters());
        assertTrue(e.nic.counters().get("frames.received") >= 0);
    }
}
