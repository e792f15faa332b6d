package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
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
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The UDP link gathers a lent payload piece of registered memory straight into {@code sendmmsg} (issue 7, cost per
 * byte) and copies the rest; the kernel never reads memory the application freed: an arena closed between staging
 * and sending drops what lay in it (and only that), and {@link UdpLink#settle} leaves no staged reference behind,
 * sending what is staged or, when the kernel has no room, copying it.
 */
@Timeout(30)
class UdpLinkGatherTest {
    private static final String LOCAL = "udp:127.0.0.1";
    private static final int LARGE = 40_000;

    private static DatagramChannel rawPeer() throws IOException {
        final DatagramChannel raw = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        raw.configureBlocking(false);
        return raw;
    }

    private static long to(final UdpLink link, final DatagramChannel raw) {
        return link.resolve("udp:127.0.0.1:" + raw.socket().getLocalPort());
    }

    private static byte[] receiveOne(final DatagramChannel raw) throws IOException {
        final ByteBuffer in = ByteBuffer.allocate(65_536);
        Tests.await("a datagram", () -> {
            try {
                return raw.receive(in) != null;
            } catch (final IOException e) {
                throw new IllegalStateException(e);
            }
        });
        in.flip();
        final byte[] out = new byte[in.remaining()];
        in.get(out);
        return out;
    }

    /** @return the length of a datagram waiting now, or null if none waits */
    private static Integer pollOne(final DatagramChannel raw) throws IOException {
        final ByteBuffer in = ByteBuffer.allocate(65_536);
        return raw.receive(in) == null ? null : in.flip().remaining();
    }

    /** A lent piece of an arena's memory filled with a pattern of a seed, as registered memory lends it. */
    private static FrameGather lent(final MemorySegment memory, final int length, final long seed) {
        Tests.fill(memory.asSlice(0, length), seed);
        final FrameGather g = new FrameGather(2);
        g.lend(memory, memory.asByteBuffer(), 0, length);
        return g;
    }

    /** The bytes a frame puts on the wire: its header as sent, then its payload pieces. */
    private static byte[] wire(final MemorySegment header, final FrameGather payload) {
        final byte[] out = new byte[HEADER + payload.totalLength()];
        final MemorySegment o = MemorySegment.ofArray(out);
        MemorySegment.copy(header, 0, o, 0, HEADER);
        payload.copyTo(o, HEADER);
        return out;
    }

    private static byte[] concat(final byte[]... parts) {
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (final byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @Test
    void shouldGatherALargeLentPieceAndCopySmallAndUnlentOnes() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); DatagramChannel raw = rawPeer(); Arena memory = Arena.ofShared()) {
            final long peer = to(sender, raw);
            final FrameGather large = lent(memory.allocate(LARGE, 64), LARGE, 1);
            final FrameGather small = lent(memory.allocate(100, 64), 100, 2);
            final FrameGather unlent = LinkFrames.payload(2000, 3);
            final MemorySegment h1 = LinkFrames.header(1, large);
            final MemorySegment h2 = LinkFrames.header(2, small);
            final MemorySegment h3 = LinkFrames.header(3, unlent);
            sender.cork();
            assertTrue(sender.send(peer, h1, HEADER, large));
            assertTrue(sender.send(peer, h2, HEADER, small));
            assertTrue(sender.send(peer, h3, HEADER, unlent));
            sender.uncork();
            assertArrayEquals(concat(wire(h1, large), wire(h2, small), wire(h3, unlent)), receiveOne(raw),
                "three frames in one datagram, byte for byte");
            assertEquals(1L, counters(sender).get("link.tx.gathered"), "only the large lent piece is pointed at");

            assertTrue(sender.send(peer, h1, HEADER, large), "a lone frame, not corked");
            assertArrayEquals(wire(h1, large), receiveOne(raw));
            assertEquals(2L, counters(sender).get("link.tx.gathered"));
        }
    }

    @Test
    void shouldDropOnlyWhatLayInAnArenaClosedBetweenStagingAndSending() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); DatagramChannel one = rawPeer(); DatagramChannel two = rawPeer();
             Arena kept = Arena.ofShared()) {
            final Arena freed = Arena.ofShared();
            final FrameGather doomed = lent(freed.allocate(LARGE, 64), LARGE, 4); // small: still mapped when freed
            final FrameGather alive = lent(kept.allocate(LARGE, 64), LARGE, 5);
            final MemorySegment h1 = LinkFrames.header(1, doomed);
            final MemorySegment h2 = LinkFrames.header(2, alive);
            final byte[] expected = wire(h2, alive);
            sender.cork();
            assertTrue(sender.send(to(sender, one), h1, HEADER, doomed));
            assertTrue(sender.send(to(sender, two), h2, HEADER, alive));
            freed.close(); // the application frees memory a staged datagram points at: the close succeeds
            sender.uncork();
            assertArrayEquals(expected, receiveOne(two), "the datagram of the live arena leaves");
            // Datagrams leave in order, so the first one would have arrived before the second.
            assertNull(pollOne(one), "nothing was sent from freed memory");
            final Map<String, Long> c = counters(sender);
            assertEquals(1L, c.get("link.tx.freed_dropped"));
        }
    }

    @Test
    void shouldSendWhatIsStagedWhenSettledSoTheMemoryCanBeReused() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); DatagramChannel raw = rawPeer(); Arena memory = Arena.ofShared()) {
            final MemorySegment region = memory.allocate(LARGE, 64);
            final FrameGather payload = lent(region, LARGE, 6);
            final MemorySegment header = LinkFrames.header(1, payload);
            final byte[] expected = wire(header, payload);
            sender.cork();
            assertTrue(sender.send(to(sender, raw), header, HEADER, payload));
            sender.settle();
            region.fill((byte) 0x55); // the application reuses its memory once the engine has settled
            sender.uncork();
            assertArrayEquals(expected, receiveOne(raw), "the bytes as they were when sent");
            assertNull(pollOne(raw), "sent once");
        }
    }

    @Test
    void shouldCopyWhatIsStagedWhenSettledWhileTheKernelHasNoRoom() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); DatagramChannel raw = rawPeer()) {
            final Arena memory = Arena.ofShared();
            final MemorySegment region = memory.allocate(256 << 10, 64);
            final FrameGather payload = lent(region, LARGE, 7);
            final MemorySegment header = LinkFrames.header(1, payload);
            final byte[] expected = wire(header, payload);
            sender.cork();
            assertTrue(sender.send(to(sender, raw), header, HEADER, payload));
            sender.transmitBatch().refuseForTests = 1; // the settle's send
            sender.settle();
            assertEquals(1, sender.transmitBatch().stagedCount(), "still staged: the kernel had no room");
            region.fill((byte) 0x55);
            memory.close(); // the memory is the application's again: overwritten, then freed
            sender.uncork();
            assertArrayEquals(expected, receiveOne(raw), "the copy made at the settle");
            assertNull(pollOne(raw));
            assertEquals(0L, counters(sender).get("link.tx.freed_dropped"));
        }
    }

    @Test
    void shouldKeepEveryByteOfTheFramesAroundOneDroppedWhenSettledWithoutRoom() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); DatagramChannel raw = rawPeer()) {
            final Arena live = Arena.ofShared();
            final Arena freed = Arena.ofShared();
            // Four datagrams, the third in memory freed while staged; the others of several lengths.
            final int[] lengths = {LARGE, LARGE - 8, LARGE, LARGE - 24};
            final MemorySegment[] headers = new MemorySegment[4];
            final FrameGather[] payloads = new FrameGather[4];
            final byte[][] expected = new byte[4][];
            for (int i = 0; i < 4; i++) {
                final Arena arena = i == 2 ? freed : live;
                payloads[i] = lent(arena.allocate(lengths[i], 64), lengths[i], 11 + i);
                headers[i] = LinkFrames.header(1 + i, payloads[i]);
                expected[i] = wire(headers[i], payloads[i]);
            }
            sender.cork();
            for (int i = 0; i < 4; i++) {
                assertTrue(sender.send(to(sender, raw), headers[i], HEADER, payloads[i]));
            }
            freed.close();
            sender.transmitBatch().refuseForTests = 1; // the settle's send: the kernel has no room
            sender.settle(); // so the others are copied out of registered memory, the fourth moved up
            assertEquals(3, sender.transmitBatch().stagedCount());
            live.close(); // the application's memory again: the copies must not read it
            sender.uncork();
            for (final int i : new int[] {0, 1, 3}) {
                assertArrayEquals(expected[i], receiveOne(raw), "datagram " + (i + 1) + ", byte for byte, from its copy");
            }
            assertNull(pollOne(raw));
            assertEquals(1L, counters(sender).get("link.tx.freed_dropped"));
        }
    }

    @Test
    void shouldRefuseALoneFrameTheKernelHasNoRoomForAndSendItWhenRetried() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); DatagramChannel raw = rawPeer(); Arena memory = Arena.ofShared()) {
            final FrameGather payload = lent(memory.allocate(LARGE, 64), LARGE, 8);
            final MemorySegment header = LinkFrames.header(1, payload);
            sender.transmitBatch().refuseForTests = 1;
            assertEquals(false, sender.send(to(sender, raw), header, HEADER, payload), "refused: retry later");
            assertEquals(0, sender.transmitBatch().stagedCount(), "nothing kept of a refused lone frame");
            assertTrue(sender.send(to(sender, raw), header, HEADER, payload));
            assertArrayEquals(wire(header, payload), receiveOne(raw));
            assertNull(pollOne(raw), "sent once");
        }
    }

    @Test
    void shouldKeepAtMostFourArenasAliveAndCopyPiecesOfFurtherOnes() throws IOException {
        try (UdpLink sender = new UdpLink(LOCAL); DatagramChannel raw = rawPeer()) {
            final Arena[] arenas = new Arena[6];
            final FrameGather[] payloads = new FrameGather[6];
            final MemorySegment[] headers = new MemorySegment[6];
            final byte[][] frames = new byte[6][];
            for (int i = 0; i < 6; i++) {
                arenas[i] = Arena.ofShared();
                payloads[i] = lent(arenas[i].allocate(5000, 64), 5000, 10 + i);
                headers[i] = LinkFrames.header(i, payloads[i]);
                frames[i] = wire(headers[i], payloads[i]);
            }
            sender.cork();
            for (int i = 0; i < 6; i++) {
                assertTrue(sender.send(to(sender, raw), headers[i], HEADER, payloads[i]));
            }
            sender.uncork();
            assertArrayEquals(concat(frames), receiveOne(raw));
            assertEquals((long) UdpTx.KEEP, counters(sender).get("link.tx.gathered"));
            for (final Arena a : arenas) {
                a.close(); // none is held after the send
            }
        }
    }
}
