package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Writes the frames of one or more links into a pcapng file (the format of Wireshark and {@code dumpcap}): one
 * interface per link, named after its address, and one enhanced packet block per frame with a nanosecond
 * timestamp and its direction. Each frame is wrapped in a synthetic IPv4 and UDP header
 * ({@code LINKTYPE_IPV4}), so the UDP dissector, and {@code tools/wireshark/jdet.lua} behind it, read frames of
 * the in-process fabric exactly like those of the UDP link.
 *
 * <p>Links that name the same file share one writer, so a test or a perf run that opens two NICs gets one file
 * with both sides; the file is truncated when its first user opens it and closed when its last user releases it.
 * Blocks are buffered and written when the buffer fills, when a second has passed since the last write, and on
 * close. A write error stops the capture (it is counted) and never reaches the engine.
 *
 * <p>Thread safe: the NICs of a process write from their own threads, so writes are serialised on the writer.
 * Allocation free per frame.
 */
final class PcapngWriter {
    /** Synthetic UDP port of fabric endpoints in a capture: 0x4A44, the frame magic "JD". */
    static final int FABRIC_PORT = 0x4A44;
    /** Synthetic IPv4 network of fabric endpoints: 127.74.0.0/16, endpoint n being 127.74.(n / 256).(n % 256). */
    static final int FABRIC_NET = 0x7F4A_0000;
    static final int LINKTYPE_IPV4 = 228;
    static final int IP_UDP_HEADERS = 28;

    private static final int SHB = 0x0A0D_0D0A;
    private static final int IDB = 1;
    private static final int EPB = 6;
    private static final int BYTE_ORDER_MAGIC = 0x1A2B_3C4D;
    private static final int OPT_END = 0;
    private static final int OPT_EPB_FLAGS = 2;
    private static final int OPT_IF_NAME = 2;
    private static final int OPT_IF_TSRESOL = 9;
    private static final int OPT_SHB_USERAPPL = 4;
    private static final int EPB_FIXED = 28 + 12 + 4; // header fields, flags option + end, trailing length
    private static final int BUFFER_BYTES = 1 << 20;
    private static final long FLUSH_NS = 1_000_000_000L;
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort BE_SHORT =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final Map<Path, PcapngWriter> OPEN = new HashMap<>();

    private final Path path;
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final MemorySegment memory = MemorySegment.ofBuffer(buffer);
    private final CRC32C crc = new CRC32C();
    private final long epochNs;
    private final long originNs;
    private int users;
    private int interfaces;
    private int ipId;
    private long lastFlushNs;
    private long errors;
    private boolean failed;

    private PcapngWriter(final Path path, final FileChannel channel) {
        this.path = path;
        this.channel = channel;
        final Instant now = Instant.now();
        this.originNs = System.nanoTime();
        this.epochNs = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        this.lastFlushNs = originNs;
        writeSectionHeader();
    }

    /**
     * Opens the writer of a file, creating (or truncating) the file if no link writes it yet.
     *
     * @param file the capture file
     * @return the writer; {@link #release} it when done
     * @throws DetException EINVAL if the file cannot be created
     */
    static PcapngWriter open(final String file) {
        final Path path = Path.of(file).toAbsolutePath().normalize();
        synchronized (OPEN) {
            PcapngWriter writer = OPEN.get(path);
            if (writer == null) {
                try {
                    writer = new PcapngWriter(path, FileChannel.open(path, StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING));
                } catch (final IOException | RuntimeException e) {
                    throw new DetException(Errno.EINVAL, "cannot write the capture file " + file + ": " + e);
                }
                OPEN.put(path, writer);
            }
            writer.users++;
            return writer;
        }
    }

    /** Gives up one user's share; the last one flushes and closes the file. */
    void release() {
        synchronized (OPEN) {
            if (--users > 0) {
                return;
            }
            OPEN.remove(path);
        }
        synchronized (this) {
            flush();
            try {
                channel.close();
            } catch (final IOException e) {
                errors++;
            }
        }
    }

    /**
     * Describes a link as a new interface of the capture.
     *
     * @param name the link's address
     * @return the interface id its frames are written with
     */
    synchronized int addInterface(final String name) {
        final byte[] text = name.getBytes(StandardCharsets.UTF_8);
        final int nameOption = 4 + padded(Math.min(text.length, 0xFFFF));
        final int length = 20 + nameOption + 8 + 4;
        if (!room(length)) {
            return interfaces++;
        }
        final int start = buffer.position();
        buffer.putInt(IDB).putInt(length).putShort((short) LINKTYPE_IPV4).putShort((short) 0).putInt(0);
        putOption(OPT_IF_NAME, text);
        buffer.putShort((short) OPT_IF_TSRESOL).putShort((short) 1).putInt(9); // 10^-9 s, then 3 pad bytes
        buffer.putShort((short) OPT_END).putShort((short) 0).putInt(length);
        assert buffer.position() - start == length;
        return interfaces++;
    }

    /**
     * Writes one frame: {@code headerLength} bytes of {@code header} followed by the payload pieces.
     *
     * @param iface     the interface id
     * @param outbound  true for a frame the link sent, false for one it received
     * @param srcIp     source IPv4 address
     * @param srcPort   source UDP port
     * @param dstIp     destination IPv4 address
     * @param dstPort   destination UDP port
     * @param header    the frame's first bytes
     * @param headerLength their count
     * @param payload   the rest of the frame
     * @param restoreCrc recompute the CRC field in the copy (a received frame's was zeroed when it was checked)
     * @return whether the frame was recorded
     */
    synchronized boolean write(final int iface, final boolean outbound, final int srcIp, final int srcPort,
                            final int dstIp, final int dstPort, final MemorySegment header, final int headerLength,
                            final FrameGather payload, final boolean restoreCrc) {
        final long nowNs = System.nanoTime();
        final int frameLength = headerLength + payload.totalLength();
        final int packetLength = IP_UDP_HEADERS + frameLength;
        final int length = EPB_FIXED + padded(packetLength);
        if (failed || !room(length)) {
            return false;
        }
        final long ts = epochNs + (nowNs - originNs);
        buffer.putInt(EPB).putInt(length).putInt(iface).putInt((int) (ts >>> 32)).putInt((int) ts)
            .putInt(packetLength).putInt(packetLength);
        final int ip = buffer.position();
        ipUdpHeaders(ip, srcIp, srcPort, dstIp, dstPort, packetLength);
        final int frame = ip + IP_UDP_HEADERS;
        MemorySegment.copy(header, 0, memory, frame, headerLength);
        payload.copyTo(memory, frame + headerLength);
        if (restoreCrc && frameLength >= FrameCrc.CRC_OFFSET + 4) {
            memory.set(LE_INT, frame + FrameCrc.CRC_OFFSET, 0);
            crc.reset();
            buffer.limit(frame + frameLength).position(frame);
            crc.update(buffer);
            buffer.limit(buffer.capacity());
            memory.set(LE_INT, frame + FrameCrc.CRC_OFFSET, (int) crc.getValue());
        }
        for (int i = frame + frameLength; i < ip + padded(packetLength); i++) {
            memory.set(ValueLayout.JAVA_BYTE, i, (byte) 0);
        }
        buffer.position(ip + padded(packetLength));
        buffer.putShort((short) OPT_EPB_FLAGS).putShort((short) 4).putInt(outbound ? 2 : 1);
        buffer.putShort((short) OPT_END).putShort((short) 0).putInt(length);
        if (nowNs - lastFlushNs >= FLUSH_NS) {
            flush();
        }
        return true;
    }

    /** Writes what is buffered to the file. */
    synchronized void flush() {
        lastFlushNs = System.nanoTime();
        if (failed) {
            buffer.clear();
            return;
        }
        buffer.flip();
        try {
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        } catch (final IOException e) {
            errors++;
            failed = true;
        }
        buffer.clear();
    }

    /**
     * @return how many write errors the file had (it stops recording at the first)
     */
    synchronized long errors() {
        return errors;
    }

    private boolean room(final int length) {
        if (buffer.remaining() < length) {
            flush();
        }
        if (buffer.remaining() < length) {
            errors++; // larger than the whole buffer: cannot happen with frames of at most 64 KiB
            return false;
        }
        return true;
    }

    private void ipUdpHeaders(final int at, final int srcIp, final int srcPort, final int dstIp, final int dstPort,
                              final int packetLength) {
        memory.set(BE_SHORT, at, (short) 0x4500); // version 4, 20-byte header, no TOS
        memory.set(BE_SHORT, at + 2, (short) packetLength);
        memory.set(BE_SHORT, at + 4, (short) ipId++);
        memory.set(BE_SHORT, at + 6, (short) 0x4000); // don't fragment
        memory.set(BE_SHORT, at + 8, (short) 0x4011); // TTL 64, protocol UDP
        memory.set(BE_SHORT, at + 10, (short) 0);
        memory.set(BE_INT, at + 12, srcIp);
        memory.set(BE_INT, at + 16, dstIp);
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += memory.get(BE_SHORT, at + i) & 0xFFFF;
        }
        sum = (sum & 0xFFFF) + (sum >>> 16);
        sum += sum >>> 16;
        memory.set(BE_SHORT, at + 10, (short) ~sum);
        memory.set(BE_SHORT, at + 20, (short) srcPort);
        memory.set(BE_SHORT, at + 22, (short) dstPort);
        memory.set(BE_SHORT, at + 24, (short) (packetLength - 20));
        memory.set(BE_SHORT, at + 26, (short) 0); // no UDP checksum: allowed over IPv4
    }

    private void writeSectionHeader() {
        final byte[] app = "jdet".getBytes(StandardCharsets.US_ASCII);
        final int length = 28 + 4 + padded(app.length) + 4;
        buffer.putInt(SHB).putInt(length).putInt(BYTE_ORDER_MAGIC).putShort((short) 1).putShort((short) 0)
            .putLong(-1L);
        putOption(OPT_SHB_USERAPPL, app);
        buffer.putShort((short) OPT_END).putShort((short) 0).putInt(length);
    }

    private void putOption(final int code, final byte[] value) {
        final int n = Math.min(value.length, 0xFFFF);
        buffer.putShort((short) code).putShort((short) n).put(value, 0, n);
        for (int i = n; i < padded(n); i++) {
            buffer.put((byte) 0);
        }
    }

    private static int padded(final int length) {
        return (length + 3) & ~3;
    }
}
