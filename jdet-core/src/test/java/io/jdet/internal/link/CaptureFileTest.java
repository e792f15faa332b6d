package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The capture tap and its pcapng file, read back block by block without Wireshark: a section header, one interface
 * per link that shares the file, and per frame an enhanced packet block whose IPv4 and UDP headers carry the
 * link's and the peer's addresses (a valid IP checksum), whose bytes are the frame's (with a CRC where the link
 * carries none), padded with zeros, and flagged inbound or outbound.
 */
class CaptureFileTest {
    @TempDir
    Path dir;

    /** One pcapng block: its type and body (between the two length fields). */
    private record Block(int type, ByteBuffer body) {
    }

    private static List<Block> blocks(final Path file) throws IOException {
        final ByteBuffer all = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        final List<Block> blocks = new ArrayList<>();
        while (all.hasRemaining()) {
            final int start = all.position();
            final int type = all.getInt();
            final int length = all.getInt();
            assertEquals(0, length % 4, "block lengths are multiples of 4");
            assertTrue(length >= 12 && start + length <= all.limit(), "block length " + length);
            assertEquals(length, all.getInt(start + length - 4), "the trailing length repeats the leading one");
            blocks.add(new Block(type, all.slice(start + 8, length - 12).order(ByteOrder.LITTLE_ENDIAN)));
            all.position(start + length);
        }
        return blocks;
    }

    /** What an enhanced packet block says. */
    private record Packet(int id, int iface, long timestampNs, int srcIp, int srcPort, int dstIp, int dstPort, byte[] frame,
                          int flags) {
    }

    private static Packet packet(final Block b) {
        assertEquals(6, b.type(), "an enhanced packet block");
        final ByteBuffer p = b.body();
        final int iface = p.getInt(0);
        final long ts = (long) p.getInt(4) << 32 | p.getInt(8) & 0xFFFF_FFFFL;
        final int captured = p.getInt(12);
        assertEquals(captured, p.getInt(16), "captured whole");
        final ByteBuffer ip = p.slice(20, captured).order(ByteOrder.BIG_ENDIAN);
        assertEquals(0x4500, ip.getShort(0) & 0xFFFF);
        assertEquals(captured, ip.getShort(2) & 0xFFFF, "IP total length");
        assertEquals(0x4000, ip.getShort(6) & 0xFFFF, "don't fragment");
        assertEquals(0x4011, ip.getShort(8) & 0xFFFF, "TTL 64, UDP");
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += ip.getShort(i) & 0xFFFF;
        }
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum += sum >>> 16;
        assertEquals(0xFFFF, sum & 0xFFFF, "IP header checksum");
        assertEquals(captured - 20, ip.getShort(24) & 0xFFFF, "UDP length");
        assertEquals(0, ip.getShort(26), "no UDP checksum");
        final byte[] frame = new byte[captured - 28];
        ip.get(28, frame);
        final int padded = (captured + 3) & ~3;
        for (int i = captured; i < padded; i++) {
            assertEquals(0, p.get(20 + i), "padding byte " + i);
        }
        final int options = 20 + padded;
        assertEquals(2, p.getShort(options), "flags option");
        assertEquals(4, p.getShort(options + 2));
        assertEquals(0, p.getInt(options + 8), "end of options");
        assertEquals(options + 12, p.limit(), "nothing after the options");
        return new Packet(ip.getShort(4) & 0xFFFF, iface, ts, ip.getInt(12), ip.getShort(20) & 0xFFFF, ip.getInt(16),
            ip.getShort(22) & 0xFFFF, frame, p.getInt(options + 4));
    }

    private static String interfaceName(final Block b) {
        assertEquals(1, b.type(), "an interface description block");
        final ByteBuffer p = b.body();
        assertEquals(PcapngWriter.LINKTYPE_IPV4, p.getShort(0));
        assertEquals(2, p.getShort(8), "if_name");
        final int n = p.getShort(10);
        final byte[] name = new byte[n];
        p.get(12, name);
        final int next = 12 + ((n + 3) & ~3);
        assertEquals(9, p.getShort(next), "if_tsresol");
        assertEquals(1, p.getShort(next + 2));
        assertEquals(9, p.get(next + 4), "nanoseconds");
        assertEquals(0, p.getInt(next + 8), "end of options");
        assertEquals(next + 12, p.limit());
        return new String(name, StandardCharsets.UTF_8);
    }

    private static void assertSectionHeader(final Block b) {
        assertEquals(0x0A0D_0D0A, b.type());
        final ByteBuffer p = b.body();
        assertEquals(0x1A2B_3C4D, p.getInt(0));
        assertEquals(1, p.getShort(4), "version 1.0");
        assertEquals(0, p.getShort(6));
        assertEquals(-1L, p.getLong(8), "section length unknown");
        assertEquals(4, p.getShort(16), "shb_userappl");
        assertEquals(4, p.getShort(18));
        assertEquals("jdet", new String(new byte[] {p.get(20), p.get(21), p.get(22), p.get(23)},
            StandardCharsets.US_ASCII));
        assertEquals(0, p.getInt(24));
        assertEquals(28, p.limit());
    }

    /** A sealed frame: header with a tag and a correct CRC, then {@code payloadLength} bytes of {@code fill}. */
    private static byte[] sealed(final int tag, final FrameGather payload) {
        final MemorySegment header = LinkFrames.header(tag, payload);
        final byte[] bytes = new byte[LinkFrames.HEADER + payload.totalLength()];
        MemorySegment.copy(header, ValueLayout.JAVA_BYTE, 0, bytes, 0, LinkFrames.HEADER);
        for (int i = 0; i < payload.count(); i++) {
            MemorySegment.copy(payload.segment(i), ValueLayout.JAVA_BYTE, payload.offset(i), bytes,
                LinkFrames.HEADER, payload.length(i));
        }
        return bytes;
    }

    @Test
    void recordsFramesBothWaysWithTheFabricsSyntheticAddressesAndRestoresACrcTheLinkLeftOut() throws IOException {
        final Path file = dir.resolve("fabric.pcapng");
        final FaultyLinkTest.RecordingLink inner = new FaultyLinkTest.RecordingLink();
        inner.address = "loop:fab/258";
        inner.checksummed = false; // like shared memory: the engine leaves the CRC field 0
        final long before = Instant.now().toEpochMilli();
        final CaptureLink tap = new CaptureLink(inner, file.toString());
        final FrameGather payload = LinkFrames.payload(21, 0x5A);
        final byte[] expected = sealed(3, payload);
        final MemorySegment unsealed = LinkFrames.header(3, payload);
        unsealed.set(ValueLayout.JAVA_INT_UNALIGNED, FrameCrc.CRC_OFFSET, 0);
        assertTrue(tap.send(0x0102, unsealed, LinkFrames.HEADER, payload));
        assertEquals(0, unsealed.get(ValueLayout.JAVA_INT_UNALIGNED, FrameCrc.CRC_OFFSET),
            "the engine's header is not touched");
        inner.refuse = true;
        assertTrue(!tap.send(5, unsealed, LinkFrames.HEADER, payload), "a refused frame is not recorded");
        inner.inbound.add(expected.clone());
        final LinkFrames.Received got = new LinkFrames.Received();
        assertEquals(1, tap.receive(got, 4));
        assertArrayEquals(expected, got.frames.get(0), "the engine still gets the frame");
        assertEquals(List.of(FaultyLinkTest.RecordingLink.FROM), got.peers);
        final Map<String, Long> counters = new HashMap<>();
        tap.addCounters(counters);
        assertEquals(2L, counters.get("capture.frames"));
        assertEquals(0L, counters.get("capture.errors"));
        tap.close();
        assertTrue(inner.closed);
        final long after = Instant.now().toEpochMilli();

        final List<Block> blocks = blocks(file);
        assertEquals(4, blocks.size());
        assertSectionHeader(blocks.get(0));
        assertEquals("loop:fab/258", interfaceName(blocks.get(1)));
        final Packet out = packet(blocks.get(2));
        assertEquals(0, out.iface());
        assertEquals(2, out.flags(), "outbound");
        assertEquals(PcapngWriter.FABRIC_NET | 258, out.srcIp(), "127.74.1.2");
        assertEquals(0x7F4A_0102, out.dstIp());
        assertEquals(PcapngWriter.FABRIC_PORT, out.srcPort());
        assertEquals(PcapngWriter.FABRIC_PORT, out.dstPort());
        assertArrayEquals(expected, out.frame(), "the frame with its CRC restored");
        final Packet in = packet(blocks.get(3));
        assertEquals(1, in.flags(), "inbound");
        assertEquals(0x7F4A_0009, in.srcIp());
        assertEquals(PcapngWriter.FABRIC_NET | 258, in.dstIp());
        assertArrayEquals(expected, in.frame());
        for (final Packet p : List.of(out, in)) {
            final long ms = p.timestampNs() / 1_000_000;
            assertTrue(ms >= before - 1000 && ms <= after + 1000, "time stamp " + ms + " not in [" + before + ", "
                + after + "]");
        }
        assertTrue(in.timestampNs() >= out.timestampNs());
    }

    @Test
    void keepsTheBadCrcOfAFrameCorruptedOnItsWayToALinkThatLeavesCrcsOut() throws IOException {
        // As Links.open stacks them: faults over the tap over UDP to a loopback peer, which wants no CRC itself;
        // corruption makes the engine seal every frame, and the capture must show the corrupted frame's CRC fail.
        final Path file = dir.resolve("corrupt.pcapng");
        final FaultyLinkTest.RecordingLink inner = new FaultyLinkTest.RecordingLink();
        inner.address = "udp:127.0.0.1:4000";
        inner.checksummed = false;
        final FaultyLink faulty = new FaultyLink(new CaptureLink(inner, file.toString()),
            new io.jdet.FaultPlan(0, 0, 0, 1, 42));
        assertTrue(faulty.checksummed(UdpAddress.handle(0x7F000001, 4001)));
        final FrameGather payload = LinkFrames.payload(50, 0x33);
        final MemorySegment header = LinkFrames.header(9, payload); // sealed, as the engine seals it
        assertTrue(faulty.send(UdpAddress.handle(0x7F000001, 4001), header, LinkFrames.HEADER, payload));
        faulty.close();
        final List<Block> blocks = blocks(file);
        assertEquals(3, blocks.size());
        final byte[] recorded = packet(blocks.get(2)).frame();
        assertArrayEquals(inner.sent.get(0), recorded, "the frame as it was sent, corruption and all");
        final int stored = ByteBuffer.wrap(recorded).order(ByteOrder.LITTLE_ENDIAN).getInt(FrameCrc.CRC_OFFSET);
        Arrays.fill(recorded, FrameCrc.CRC_OFFSET, FrameCrc.CRC_OFFSET + 4, (byte) 0);
        final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(recorded);
        assertTrue((int) crc.getValue() != stored, "a corrupted frame's CRC fails in the capture too");
    }

    @Test
    void givesUdpFramesTheirRealAddressesAndSharesOneFileBetweenLinks() throws IOException {
        final Path file = dir.resolve("udp.pcapng");
        final FaultyLinkTest.RecordingLink a = new FaultyLinkTest.RecordingLink();
        a.address = "udp:127.0.0.1:4000";
        final FaultyLinkTest.RecordingLink b = new FaultyLinkTest.RecordingLink();
        b.address = "udp:127.0.0.2:4001";
        final CaptureLink tapA = new CaptureLink(a, file.toString());
        final CaptureLink tapB = new CaptureLink(b, dir.resolve(".").resolve("udp.pcapng").toString());
        final FrameGather empty = new FrameGather(0);
        final byte[] header = sealed(7, empty);
        final MemorySegment h = MemorySegment.ofArray(header.clone());
        tapA.send(UdpAddress.handle(0x0A000001, 0xBEEF), h, header.length, empty);
        final FrameGather odd = LinkFrames.payload(3, 1);
        final byte[] second = sealed(8, odd);
        final MemorySegment h2 = MemorySegment.ofArray(Arrays.copyOf(second, LinkFrames.HEADER));
        tapB.send(UdpAddress.handle(0x7F000001, 4000), h2, LinkFrames.HEADER, odd);
        tapA.close(); // the file stays open while another link uses it
        tapB.close();

        final List<Block> blocks = blocks(file);
        assertEquals(5, blocks.size());
        assertEquals("udp:127.0.0.1:4000", interfaceName(blocks.get(1)));
        assertEquals("udp:127.0.0.2:4001", interfaceName(blocks.get(2)));
        final Packet first = packet(blocks.get(3));
        assertEquals(0, first.iface());
        assertEquals(0x7F000001, first.srcIp());
        assertEquals(4000, first.srcPort());
        assertEquals(0x0A000001, first.dstIp());
        assertEquals(0xBEEF, first.dstPort());
        assertArrayEquals(header, first.frame());
        final Packet next = packet(blocks.get(4));
        assertEquals(1, next.iface());
        assertEquals(0x7F000002, next.srcIp());
        assertEquals(4001, next.srcPort());
        assertArrayEquals(second, next.frame(), "a checksummed link's frame as it was, padded to 4 bytes");
    }

    @Test
    void packetsAfterTheBufferWasWrittenOutAreAsWholeAsTheFirst() throws IOException {
        final Path file = dir.resolve("big.pcapng");
        final FaultyLinkTest.RecordingLink inner = new FaultyLinkTest.RecordingLink();
        inner.address = "udp:255.255.255.254:65535"; // large address words: the checksum folds a carry twice
        final CaptureLink tap = new CaptureLink(inner, file.toString());
        final FrameGather payload = LinkFrames.payload(60_001, 0xFF); // an odd length: padding after each frame
        final byte[] frame = sealed(0xEE, payload);
        final MemorySegment header = MemorySegment.ofArray(Arrays.copyOf(frame, LinkFrames.HEADER));
        final int frames = 40; // 2.4 MB: the 1 MiB buffer is written out and reused twice
        for (int i = 0; i < frames; i++) {
            assertTrue(tap.send(UdpAddress.handle(0xFFFFFFFF, 0xFFFF), header, LinkFrames.HEADER, payload));
        }
        tap.close();
        final List<Block> blocks = blocks(file);
        assertEquals(2 + frames, blocks.size());
        int id = -1;
        for (int i = 2; i < blocks.size(); i++) {
            final Packet p = packet(blocks.get(i)); // checks the IP checksum, the zero UDP checksum, the padding
            assertEquals(0xFFFFFFFE, p.srcIp());
            assertEquals(0xFFFFFFFF, p.dstIp());
            assertEquals(0xFFFF, p.srcPort());
            assertArrayEquals(frame, p.frame(), "packet " + i);
            if (id >= 0) {
                assertEquals((id + 1) & 0xFFFF, p.id(), "IP ids count up");
            }
            id = p.id();
        }
    }

    @Test
    void refusesAFileItCannotWriteWithEinval() {
        final FaultyLinkTest.RecordingLink inner = new FaultyLinkTest.RecordingLink();
        final DetException e = assertThrows(DetException.class,
            () -> new CaptureLink(inner, dir.resolve("no-such-dir").resolve("x.pcapng").toString()));
        assertEquals(Errno.EINVAL, e.errno());
    }
}
