package io.jdet.internal.link;

import io.jdet.WcStatus;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import io.jdet.testing.VethPair;
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
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frames over the loopback interface carry no CRC (docs/PROTOCOL.md, section 4): the UDP link asks the engine for
 * none to a loopback peer when its own datagrams leave from a loopback source, takes a frame whose CRC field is 0
 * unchecked only from a loopback source, and checks every other frame, a loopback one with a CRC included.
 */
@Timeout(60)
class UdpLinkLoopbackCrcTest {
    private static final int PAYLOAD = 100;

    private static int port(final Link link) {
        return Integer.parseInt(link.address().substring(link.address().lastIndexOf(':') + 1));
    }

    /** A frame as {@link LinkFrames#header} makes it, header and payload in one buffer, its CRC field as given. */
    private static ByteBuffer datagram(final int tag, final boolean sealed) {
        final FrameGather payload = LinkFrames.payload(PAYLOAD, tag);
        final MemorySegment header = LinkFrames.header(tag, payload);
        if (!sealed) {
            header.set(ValueLayout.JAVA_INT_UNALIGNED, FrameCrc.CRC_OFFSET, 0);
        }
        final ByteBuffer datagram = ByteBuffer.allocate(HEADER + PAYLOAD);
        datagram.put(header.asByteBuffer()).put(payload.view(0).duplicate().clear());
        return datagram.flip();
    }

    /** Receives until {@code n} datagrams were taken, good or dropped. */
    private static void receive(final Link link, final FrameHandler handler, final int n) {
        final int[] taken = {0};
        Tests.await(n + " datagrams taken", () -> {
            taken[0] += link.receive(handler, 16);
            return taken[0] >= n;
        });
    }

    @Test
    void aLinkOnLoopbackAsksForACrcOnlyToPeersOffLoopback() {
        try (UdpLink link = new UdpLink("udp:127.0.0.1")) {
            assertFalse(link.checksummed(link.resolve("udp:127.0.0.1:4000")));
            assertFalse(link.checksummed(link.resolve("udp:127.3.2.1:4000")), "all of 127.0.0.0/8 is loopback");
            assertTrue(link.checksummed(link.resolve("udp:198.18.0.1:4000")));
            assertTrue(link.checksummed(link.resolve("udp:128.0.0.1:4000")));
        }
    }

    @Test
    void aFrameFromLoopbackWithoutACrcArrivesUncheckedAndOneWithAWrongCrcIsDropped() throws IOException {
        try (UdpLink link = new UdpLink("udp:127.0.0.1");
             DatagramChannel raw = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            final InetSocketAddress target = new InetSocketAddress("127.0.0.1", port(link));
            raw.send(datagram(1, false), target);
            final ByteBuffer wrong = datagram(2, true);
            wrong.put(FrameCrc.CRC_OFFSET, (byte) (wrong.get(FrameCrc.CRC_OFFSET) ^ 1));
            raw.send(wrong, target);
            raw.send(datagram(3, true), target);
            raw.send(datagram(4, false), target);
            final LinkFrames.Received received = new LinkFrames.Received();
            receive(link, received, 4);
            assertEquals(3, received.frames.size());
            assertEquals(1, received.frames.get(0)[0]);
            assertEquals(3, received.frames.get(1)[0]);
            assertEquals(4, received.frames.get(2)[0]);
            final byte[] first = received.frames.get(0);
            assertArrayEquals(datagram(1, false).array(), first, "handed over as it came, CRC field 0");
            final Map<String, Long> c = counters(link);
            assertEquals(2L, c.get("link.rx.loopback_unchecked"));
            assertEquals(1L, c.get("link.rx.bad_crc"));
        }
    }

    @Test
    void aFrameWithoutACrcFromASourceOffLoopbackIsDropped() throws IOException {
        try (VethPair veth = new VethPair(1500)) {
            final String[] ip = veth.addresses(214);
            final String a = ip[0];
            final String b = ip[1];
            try (UdpLink link = new UdpLink("udp:" + a);
                 DatagramChannel raw = DatagramChannel.open().bind(new InetSocketAddress(b, 0))) {
                assertTrue(link.checksummed(link.resolve("udp:127.0.0.1:4000")),
                    "its datagrams to loopback leave from " + a + ", which a receiver checks");
                final InetSocketAddress target = new InetSocketAddress(a, port(link));
                raw.send(datagram(1, false), target);
                raw.send(datagram(2, true), target);
                final LinkFrames.Received received = new LinkFrames.Received();
                receive(link, received, 2);
                assertEquals(1, received.frames.size());
                assertEquals(2, received.frames.get(0)[0]);
                final Map<String, Long> c = counters(link);
                assertEquals(1L, c.get("link.rx.bad_crc"), "a 0 is a CRC like any other off loopback");
                assertEquals(0L, c.get("link.rx.loopback_unchecked"));
            }
        }
    }

    @Test
    void longWritesOverLoopbackArePlacedUncheckedAndOffLoopbackChecked() {
        try (Loopback pair = Loopback.open(new Loopback.Options().nic("udp:127.0.0.1").bufferBytes(1 << 20))) {
            writeAndCompare(pair);
            final Map<String, Long> b = pair.nicB.counters();
            assertTrue(b.get("link.rx.loopback_unchecked") > 0, b::toString);
            assertTrue(b.get("link.rx.placed") > 0, () -> "fragments land in place unchecked too: " + b);
            assertEquals(0L, b.get("link.rx.bad_crc"));
        }
        try (VethPair veth = new VethPair(65_535)) { // frames long enough to be placed (Responder.PLACE_MIN)
            final String[] ip = veth.addresses(215);
            try (Loopback pair = Loopback.open(new Loopback.Options().bufferBytes(1 << 20)
                .nics("udp:" + ip[0], "udp:" + ip[1]))) {
                writeAndCompare(pair);
                final Map<String, Long> b = pair.nicB.counters();
                assertEquals(0L, b.get("link.rx.loopback_unchecked"), b::toString);
                assertTrue(b.get("link.rx.placed") > 0, b::toString);
            }
        }
    }

    /** Writes 256 KiB from A to B ten times, each of other bytes, and compares each after its completion. */
    private static void writeAndCompare(final Loopback pair) {
        final int length = 256 << 10;
        for (int k = 0; k < 10; k++) {
            Tests.fill(pair.bufA.asSlice(0, length), k);
            pair.qpA.write(k, Loopback.sge(pair.mrA, 0, length), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status(), () -> "" + pair.nicA.counters());
            Tests.assertSameBytes(pair.bufA.asSlice(0, length), pair.bufB.asSlice(0, length));
        }
    }
}
