package io.jdet.systest;

import io.jdet.Det;
import io.jdet.EventCode;
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
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile datagrams sent at a UDP NIC from a plain socket: each kind is counted and dropped (or answered as the
 * protocol says), the engine keeps working, and no registered byte changes.
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
            frame.fill((byte) 0);
            Frame.writeBase(frame, opcode, 0, payload, dst, src, 1, 0, 0, 0);
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
            a.qp.modify(new QpModify().connect(b.nic.address(), b.qp.number()));
            b.qp.modify(new QpModify().connect(a.nic.address(), a.qp.number()));
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
