package io.jdet.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A small pcapng reader for the capture tests: the section header, interface descriptions (link type, name) and
 * enhanced packets (interface, timestamp, direction, bytes). It checks every block's framing as it goes, so a
 * malformed file fails the test that reads it.
 */
public final class Pcapng {
    /** One interface description block. */
    public record Interface(int linkType, String name, int tsResolution) {
    }

    /** One enhanced packet block. */
    public record Packet(int iface, long timestamp, boolean outbound, byte[] data) {
        /**
         * The jdet frame behind the synthetic IPv4 and UDP headers.
         *
         * @return the frame, little-endian
         */
        public ByteBuffer frame() {
            return ByteBuffer.wrap(data, 28, data.length - 28).slice().order(ByteOrder.LITTLE_ENDIAN);
        }

        /** @return the UDP source port */
        public int srcPort() {
            return ByteBuffer.wrap(data).getShort(20) & 0xFFFF;
        }

        /** @return the UDP destination port */
        public int dstPort() {
            return ByteBuffer.wrap(data).getShort(22) & 0xFFFF;
        }
    }

    public final List<Interface> interfaces = new ArrayList<>();
    public final List<Packet> packets = new ArrayList<>();

    private Pcapng() {
    }

    /**
     * Reads a file.
     *
     * @param file the capture
     * @return its contents
     * @throws IOException if it cannot be read
     */
    public static Pcapng read(final Path file) throws IOException {
        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        final Pcapng p = new Pcapng();
        assertEquals(0x0A0D0D0A, b.getInt(0), "section header block first");
        assertEquals(0x1A2B3C4D, b.getInt(8), "little-endian byte-order magic");
        while (b.hasRemaining()) {
            final int start = b.position();
            final int type = b.getInt(start);
            final int length = b.getInt(start + 4);
            assertTrue(length >= 12 && length % 4 == 0 && start + length <= b.limit(), "block length " + length);
            assertEquals(length, b.getInt(start + length - 4), "trailing block length at " + start);
            if (type == 1) {
                final int linkType = b.getShort(start + 8) & 0xFFFF;
                String name = null;
                int tsResol = 6;
                int at = start + 16;
                while (at < start + length - 4) {
                    final int code = b.getShort(at) & 0xFFFF;
                    final int n = b.getShort(at + 2) & 0xFFFF;
                    if (code == 0) {
                        break;
                    }
                    if (code == 2) {
                        final byte[] text = new byte[n];
                        b.get(at + 4, text);
                        name = new String(text, StandardCharsets.UTF_8);
                    } else if (code == 9) {
                        tsResol = b.get(at + 4);
                    }
                    at += 4 + ((n + 3) & ~3);
                }
                p.interfaces.add(new Interface(linkType, name, tsResol));
            } else if (type == 6) {
                final int iface = b.getInt(start + 8);
                final long ts = (long) b.getInt(start + 12) << 32 | b.getInt(start + 16) & 0xFFFFFFFFL;
                final int captured = b.getInt(start + 20);
                final byte[] data = new byte[captured];
                b.get(start + 28, data);
                int at = start + 28 + ((captured + 3) & ~3);
                boolean outbound = false;
                while (at < start + length - 4) {
                    final int code = b.getShort(at) & 0xFFFF;
                    final int n = b.getShort(at + 2) & 0xFFFF;
                    if (code == 0) {
                        break;
                    }
                    if (code == 2) {
                        outbound = (b.getInt(at + 4) & 3) == 2;
                    }
                    at += 4 + ((n + 3) & ~3);
                }
                assertTrue(iface < p.interfaces.size(), "packet of an undescribed interface " + iface);
                p.packets.add(new Packet(iface, ts, outbound, data));
            }
            b.position(start + length);
        }
        return p;
    }
}
