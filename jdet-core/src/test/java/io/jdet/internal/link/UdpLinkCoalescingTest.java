package io.jdet.internal.link;

import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Map;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static io.jdet.internal.link.LinkFrames.counters;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frames share datagrams on the UDP link: corked sends to one peer are staged into one datagram and leave at
 * uncork; the receiver splits a datagram into its frames by their length fields, and hostile lengths drop only
 * what they cannot delimit.
 */
@Timeout(30)
class UdpLinkCoalescingTest {
    private static final String LOCAL = "udp:127.0.0.1";

    private static int port(final Link link) {
        final String a = link.address();
        return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
    }

    private static byte[] frame(final int tag, final int payloadLength) {
        final FrameGather payload = LinkFrames.payload(payloadLength, tag);
        final MemorySegment header = LinkFrames.header(tag, payload);
        final byte[] out = new byte[HEADER + payloadLength];
        MemorySegment.copy(header, 0, MemorySegment.ofArray(out), 0, HEADER);
        java.util.Arrays.fill(out, HEADER, out.length, (byte) tag);
        return out;
    }

    private static ByteBuffer receiveOne(final DatagramChannel raw) throws IOException {
        final ByteBuffer in = ByteBuffer.allocate(65_536);
        raw.configureBlocking(true);
        raw.socket().setSoTimeout((int) Tests.TIMEOUT.toMillis());
        raw.receive(in);
        return in.flip();
    }

    private static void take(final UdpLink link, final LinkFrames.Received into, final int datagrams) {
        final int[] taken = {0};
        Tests.await(datagrams + " datagrams taken", () -> {
            taken[0] += link.receive(into, 16);
            return taken[0] >= datagrams;
        });
    }

    @Test
    void shouldCarryCorkedFramesToOnePeerInOneDatagramAndSplitThemOnReceipt() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); UdpLink receiver = new UdpLink(LOCAL);
             DatagramChannel raw = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            final long toRaw = sender.resolve("udp:127.0.0.1:" + raw.socket().getLocalPort());
            final int[] sizes = {8, 0, 300};
            sender.cork();
            for (int i = 0; i < sizes.length; i++) {
                final FrameGather payload = LinkFrames.payload(sizes[i], i + 1);
                assertTrue(sender.send(toRaw, LinkFrames.header(i + 1, payload), HEADER, payload));
            }
            sender.uncork();
            final ByteBuffer datagram = receiveOne(raw);
            assertEquals(3 * HEADER + 308, datagram.remaining(), "three frames, one datagram");
            assertEquals(2L, counters(sender).get("link.tx.coalesced"));

            raw.send(datagram, new InetSocketAddress("127.0.0.1", port(receiver)));
            final LinkFrames.Received received = new LinkFrames.Received();
            take(receiver, received, 1);
            assertEquals(3, received.frames.size());
            for (int i = 0; i < sizes.length; i++) {
                final byte[] expected = frame(i + 1, sizes[i]);
                expected[36] = expected[37] = expected[38] = expected[39] = 0; // the check zeroes the CRC field
                assertEquals(java.util.HexFormat.of().formatHex(expected),
                    java.util.HexFormat.of().formatHex(received.frames.get(i)), "frame " + i);
            }
        }
    }

    @Test
    void shouldSplitProtectedFramesByTheirTrailerWhichConnectionManagerFramesDoNotCarry() throws IOException {
        // A protected CM_READY (its MAC is its payload, no trailer), a protected SEND (payload, then the seal's
        // 32-byte trailer, not counted in the payload length) and a plain ACK, corked into one datagram: the
        // receiver must delimit each by the right rule, or the frames after a misread one fail their CRC.
        final int trailer = Frame.PROTECTED_TRAILER_LENGTH;
        try (UdpLink sender = new UdpLink(LOCAL); UdpLink receiver = new UdpLink(LOCAL)) {
            final long toReceiver = sender.resolve(receiver.address());
            final FrameGather mac = LinkFrames.payload(32, 1);
            final FrameGather sealed = LinkFrames.payload(100 + trailer, 2);
            final FrameGather none = LinkFrames.payload(0, 3);
            sender.cork();
            assertTrue(sender.send(toReceiver, LinkFrames.header(Frame.OP_CM_READY, Frame.FLAG_PROTECTED, 32, mac),
                HEADER, mac));
            assertTrue(sender.send(toReceiver, LinkFrames.header(Frame.OP_SEND, Frame.FLAG_PROTECTED, 100, sealed),
                HEADER, sealed));
            assertTrue(sender.send(toReceiver, LinkFrames.header(Frame.OP_ACK, 0, 0, none), HEADER, none));
            sender.uncork();
            assertEquals(2L, counters(sender).get("link.tx.coalesced"), "one datagram");
            final LinkFrames.Received received = new LinkFrames.Received();
            take(receiver, received, 1);
            assertEquals(3, received.frames.size(), counters(receiver).toString());
            assertEquals(HEADER + 32, received.frames.get(0).length);
            assertEquals(HEADER + 100 + trailer, received.frames.get(1).length);
            assertEquals(HEADER, received.frames.get(2).length);
            assertEquals(0L, counters(receiver).get("link.rx.bad_crc"));
        }
    }

    @Test
    void shouldDeliverWhatItCanDelimitAndDropTheRestOfAHostileDatagram() throws IOException {
        try (UdpLink receiver = new UdpLink(LOCAL); DatagramChannel raw = DatagramChannel.open()) {
            final InetSocketAddress target = new InetSocketAddress("127.0.0.1", port(receiver));
            final byte[] good = frame(1, 20);
            // A good frame, then a second whose length field claims more than the datagram holds: its CRC (over
            // the bytes it claims) fails on what is there, and nothing after it is read.
            final byte[] claims = frame(2, 500);
            final ByteBuffer overlong = ByteBuffer.allocate(good.length + 200);
            overlong.put(good).put(claims, 0, 200).flip();
            raw.send(overlong, target);
            // A good frame, then ten bytes that cannot hold a header.
            raw.send(ByteBuffer.wrap(java.util.Arrays.copyOf(good, good.length + 10)), target);
            // A good frame whose length field is then corrupted: the CRC fails and the datagram is dropped whole.
            final byte[] corrupt = frame(3, 40);
            corrupt[6] = 10;
            raw.send(ByteBuffer.wrap(java.util.Arrays.copyOf(corrupt, corrupt.length + good.length)), target);

            final LinkFrames.Received received = new LinkFrames.Received();
            take(receiver, received, 3);
            assertEquals(2, received.frames.size(), "the good frame of each of the first two datagrams");
            assertEquals(good.length, received.frames.get(0).length);
            assertEquals(good.length, received.frames.get(1).length);
            final Map<String, Long> counters = counters(receiver);
            assertEquals(2L, counters.get("link.rx.bad_crc"));
            assertEquals(1L, counters.get("link.rx.truncated"));
        }
    }

    @Test
    void shouldStartANewDatagramForAnotherPeerOrWhenTheFrameLimitWouldBeExceeded() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL);
             DatagramChannel one = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             DatagramChannel two = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            final long toOne = sender.resolve("udp:127.0.0.1:" + one.socket().getLocalPort());
            final long toTwo = sender.resolve("udp:127.0.0.1:" + two.socket().getLocalPort());
            final int big = sender.mtu() - HEADER - 100; // two of these do not fit one datagram
            final FrameGather large = LinkFrames.payload(big, 5);
            final FrameGather small = LinkFrames.payload(16, 6);
            sender.cork();
            assertTrue(sender.send(toOne, LinkFrames.header(5, large), HEADER, large));
            assertTrue(sender.send(toTwo, LinkFrames.header(6, small), HEADER, small));
            assertTrue(sender.send(toOne, LinkFrames.header(5, large), HEADER, large));
            assertTrue(sender.send(toOne, LinkFrames.header(6, small), HEADER, small));
            sender.uncork();
            assertEquals(HEADER + big, receiveOne(one).remaining());
            assertEquals(HEADER + 16, receiveOne(two).remaining());
            assertEquals(2 * HEADER + big + 16, receiveOne(one).remaining(), "the small frame joined the large");
            assertEquals(1L, counters(sender).get("link.tx.coalesced"));
        }
    }

    @Test
    void shouldPushWhatIsStagedInsideABatchInOneDatagram() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL);
             DatagramChannel raw = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            final long toRaw = sender.resolve("udp:127.0.0.1:" + raw.socket().getLocalPort());
            raw.configureBlocking(false);
            sender.cork();
            for (int i = 1; i <= 2; i++) {
                final FrameGather payload = LinkFrames.payload(8, i);
                assertTrue(sender.send(toRaw, LinkFrames.header(i, payload), HEADER, payload));
            }
            sender.push();
            raw.configureBlocking(true);
            assertEquals(2 * (HEADER + 8), receiveOne(raw).remaining(), "both frames, pushed inside the batch");
            final FrameGather payload = LinkFrames.payload(8, 3);
            assertTrue(sender.send(toRaw, LinkFrames.header(3, payload), HEADER, payload));
            raw.configureBlocking(false);
            assertEquals(null, raw.receive(ByteBuffer.allocate(65_536)), "still inside the batch: staged again");
            sender.uncork();
            assertEquals(HEADER + 8, receiveOne(raw).remaining(), "the rest at the batch's end");
        }
    }
}
