package io.jdet.internal.link;

import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tshark;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code tools/wireshark/jdet.lua} reads a CRC field of 0 from a loopback address as "no CRC sent" (what a tcpdump
 * on {@code lo} shows of jdet over loopback: docs/PROTOCOL.md, section 4), and a 0 from anywhere else as the bad
 * CRC it is. Skipped where tshark cannot be had (installed in CI).
 */
@Timeout(120)
class LoopbackCrcDissectorTest {
    private static final int LOOPBACK = 0x7F00_0001;
    private static final int ELSEWHERE = 0xC612_0001; // 198.18.0.1
    private static final FrameGather NO_PAYLOAD = new FrameGather(0);

    @TempDir
    Path dir;

    @Test
    void aZeroCrcFromLoopbackIsNoneAndFromElsewhereIsBad() {
        final Path file = dir.resolve("crc.pcapng");
        final PcapngWriter writer = PcapngWriter.open(file.toString());
        try (Arena arena = Arena.ofConfined()) {
            final int iface = writer.addInterface("udp:127.0.0.1:5000");
            final MemorySegment ack = arena.allocate(Frame.HEADER_LENGTH);
            Frame.writeBase(ack, Frame.OP_ACK, 0, 0, 3, 4, 0, 10, 0, 0);
            // the CRC field stays 0 unless the writer fills it in
            writer.write(iface, false, LOOPBACK, 4000, LOOPBACK, 5000, ack, Frame.HEADER_LENGTH, NO_PAYLOAD, false);
            writer.write(iface, false, ELSEWHERE, 4000, LOOPBACK, 5000, ack, Frame.HEADER_LENGTH, NO_PAYLOAD, false);
            writer.write(iface, false, LOOPBACK, 4000, LOOPBACK, 5000, ack, Frame.HEADER_LENGTH, NO_PAYLOAD, true);
        } finally {
            writer.release();
        }
        final List<String> rows = Tshark.run(file, "-T", "fields", "-E", "separator=;", "-e", "frame.number",
            "-e", "ip.src", "-e", "jdet.crc", "-e", "jdet.crc.good");
        assertEquals(3, rows.size(), rows::toString);
        assertEquals(List.of("2"), frames(file, "jdet.crc.bad"), "a 0 off loopback is checked: " + rows);
        assertEquals(List.of("1"), frames(file, "jdet.crc.none"), rows::toString);
        assertEquals(List.of("3"), frames(file, "jdet.crc.good == 1"), "a CRC over loopback is checked");
    }

    private static List<String> frames(final Path file, final String filter) {
        return Tshark.run(file, "-Y", filter, "-T", "fields", "-e", "frame.number");
    }
}
