package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;
import org.junit.jupiter.api.Test;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The address arithmetic of the UDP and raw Ethernet links on its own: peer handles pack and unpack every bit,
 * MACs parse and format both ways, the frame size limit of an interface MTU at its edges, malformed names refused.
 */
class LinkAddressesTest {
    @Test
    void aUdpHandleKeepsEveryBitOfTheAddressAndPort() {
        final int[] ips = {0x7F000001, 0xFFFFFFFF, 0x80000000, 0x0A000102, 1};
        final int[] ports = {1, 9, 0x8000, 0xFFFF};
        for (final int ip : ips) {
            for (final int port : ports) {
                final long h = UdpAddress.handle(ip, port);
                assertTrue(h >= 0, "a handle is never negative (-1 means unreachable)");
                assertEquals(ip, UdpAddress.handleIp(h));
                assertEquals(port, UdpAddress.handlePort(h));
            }
        }
        assertEquals(0x7F00_0001_1234L, UdpAddress.handle(0x7F000001, 0x1234));
        assertEquals("udp:255.0.128.1:65535", UdpAddress.describe(UdpAddress.handle(0xFF008001, 65535)));
        assertEquals("10.0.1.2", UdpAddress.format(0x0A000102));
        assertEquals("10.20.30.40", UdpAddress.format(0x0A141E28), "every octet in its place");
        assertEquals("udp:200.129.7.255:80", UdpAddress.describe(UdpAddress.handle(0xC88107FF, 80)));
    }

    @Test
    void aUdpAddressConvertsToAndFromInetAddressesWithHighBytes() throws UnknownHostException {
        final Inet4Address a = (Inet4Address) InetAddress.getByAddress(new byte[] {(byte) 200, (byte) 129, 7,
            (byte) 255});
        final int ip = UdpAddress.toInt(a);
        assertEquals(0xC88107FF, ip);
        assertEquals(a, UdpAddress.toAddress(ip));
    }

    @Test
    void resolvesUdpPeersWithAPortAndRefusesTheRest() {
        assertEquals(UdpAddress.handle(0x7F000001, 4791), UdpAddress.resolvePeer("udp:127.0.0.1:4791"));
        assertEquals(UdpAddress.handle(0x7F000001, 4791), UdpAddress.resolvePeer("127.0.0.1:4791"));
        assertEquals(UdpAddress.handle(0x7F000001, 65535), UdpAddress.resolvePeer("udp:127.0.0.1:65535"));
        assertEquals(UdpAddress.handle(0x7F000001, 1), UdpAddress.resolvePeer("udp:127.0.0.1:1"));
        for (final String bad : new String[] {null, "udp:127.0.0.1", "udp:127.0.0.1:0", "udp:0.0.0.0:5",
            "udp:127.0.0.1:65536", "udp:127.0.0.1:-1", "udp::5", "udp:127.0.0.1:x", "udp:::1:5", "udp:[::1]:5"}) {
            assertEquals(-1, UdpAddress.resolvePeer(bad), bad);
        }
    }

    @Test
    void parsesUdpNicNamesAndRefusesWildcardsForeignAddressesAndDownInterfaces() {
        final UdpAddress a = UdpAddress.parseNicName("udp:127.0.0.1:0");
        assertEquals(0x7F000001, a.ip());
        assertEquals(0, a.port());
        assertTrue(a.mtu() > 0, "loopback's MTU is known: " + a.mtu());
        final UdpAddress p = UdpAddress.parseNicName("udp:127.0.0.1");
        assertEquals(0, p.port(), "the port may be left out");
        assertEquals(4791, UdpAddress.parseNicName("udp:127.0.0.1:4791").port());
        final UdpAddress lo = UdpAddress.parseNicName("lo");
        assertEquals(0x7F000001, lo.ip());
        assertEquals(0, lo.port());
        for (final String bad : new String[] {"udp:0.0.0.0", "udp:127.0.0.1:70000", "udp:",
            "no-such-interface0", "udp:224.0.0.1", "udp:255.255.255.255"}) {
            assertEquals(Errno.ENODEV, assertThrows(DetException.class, () -> UdpAddress.parseNicName(bad)).errno(),
                bad);
        }
        // An address on no interface is the kernel's to judge: this host's bind refuses a foreign one (ENODEV) ...
        assertEquals(-1, UdpAddress.parseNicName("udp:192.0.2.1").mtu(), "no interface: the default frame limit");
        assertEquals(Errno.ENODEV, assertThrows(DetException.class, () -> new UdpLink("udp:192.0.2.1")).errno());
        // ... and takes every address of 127.0.0.0/8, with the loopback interface's MTU (a Debian host name
        // resolves to 127.0.1.1, configured on no interface)
        for (final String loopback : new String[] {"udp:127.0.0.2", "udp:127.0.1.1"}) {
            assertEquals(a.mtu(), UdpAddress.parseNicName(loopback).mtu(), loopback);
            try (UdpLink link = new UdpLink(loopback)) {
                assertTrue(link.address().startsWith(loopback + ":"), link.address());
            }
        }
    }

    @Test
    void theFrameLimitIsTheMtuLessIpAndUdpHeadersWithinUdpsLargestPayload() {
        assertEquals(UdpAddress.DEFAULT_FRAME, new UdpAddress(1, 1, -1).frameLimit(), "unknown MTU");
        assertEquals(UdpAddress.DEFAULT_FRAME, new UdpAddress(1, 1, 28).frameLimit(), "nothing left after headers");
        assertEquals(548, new UdpAddress(1, 1, 29).frameLimit(), "IPv4's 576-byte datagram: IP fragments it");
        assertEquals(548, new UdpAddress(1, 1, 576).frameLimit());
        assertEquals(549, new UdpAddress(1, 1, 577).frameLimit());
        assertEquals(1472, new UdpAddress(1, 1, 1500).frameLimit());
        assertEquals(8972, new UdpAddress(1, 1, 9000).frameLimit());
        assertEquals(65_507, new UdpAddress(1, 1, 65_535).frameLimit(), "exactly the largest payload");
        assertEquals(65_507, new UdpAddress(1, 1, 65_536).frameLimit(), "loopback's 64 KiB: capped");
    }

    @Test
    void macsParseAndFormatBothWaysWithEveryOctet() {
        assertEquals(0x0123_4567_89ABL, EthAddress.parseMac("01:23:45:67:89:ab"));
        assertEquals(0xFFFF_FFFF_FFFFL, EthAddress.parseMac("FF:FF:FF:FF:FF:FF"));
        assertEquals(0, EthAddress.parseMac("00:00:00:00:00:00"));
        assertEquals("01:23:45:67:89:ab", EthAddress.formatMac(0x0123_4567_89ABL));
        assertEquals("00:00:00:00:00:0f", EthAddress.formatMac(0xF));
        assertEquals("f0:00:00:00:00:00", EthAddress.formatMac(0xF000_0000_0000L));
        for (long mac = 1; mac < 1L << 48; mac = mac * 3 + 7) {
            assertEquals(mac, EthAddress.parseMac(EthAddress.formatMac(mac)), Long.toHexString(mac));
        }
        for (final String bad : new String[] {"01:23:45:67:89:a", "01:23:45:67:89:abc", "01-23:45:67:89:ab",
            "01:23:45:67:89-ab", "0g:23:45:67:89:ab", "01:23:45:67:89:ag", "01:23:45:67:8 :ab", "",
            "\u0661\u0662:23:45:67:89:ab", "01:23:45:67:89:\uFF21\uFF22"}) { // other scripts' digits, full-width A
            assertEquals(-1, EthAddress.parseMac(bad), bad);
        }
    }

    @Test
    void onlyAUnicastMacNamesOneStation() {
        assertTrue(EthAddress.unicast(0x02AA_BBCC_DDEEL));
        assertTrue(EthAddress.unicast(1));
        assertTrue(EthAddress.unicast(0xFEFF_FFFF_FFFFL), "every bit but the group bit");
        assertFalse(EthAddress.unicast(0));
        assertFalse(EthAddress.unicast(0x0100_0000_0000L), "the group bit alone");
        assertFalse(EthAddress.unicast(0x0100_5E00_0001L), "multicast");
        assertFalse(EthAddress.unicast(0xFFFF_FFFF_FFFFL), "broadcast");
        assertFalse(EthAddress.unicast(1L << 48 | 2), "more than 48 bits");
        assertFalse(EthAddress.unicast(-2));
    }

    @Test
    void aPeerAddressMayNameAnyValidInterfaceOrNone() {
        assertEquals(0x02AA_BBCC_DDEEL, EthAddress.resolvePeer("eth:a/02:aa:bb:cc:dd:ee"));
        assertEquals(0x02AA_BBCC_DDEEL, EthAddress.resolvePeer("eth:abcdefghijklmno/02:aa:bb:cc:dd:ee"));
        assertEquals(-1, EthAddress.resolvePeer("eth:abcdefghijklmnop/02:aa:bb:cc:dd:ee"), "16 characters");
        assertEquals(-1, EthAddress.resolvePeer("eth:/02:aa:bb:cc:dd:ee"), "an empty interface");
        assertEquals(-1, EthAddress.resolvePeer("eth:a/b/02:aa:bb:cc:dd:ee"));
        assertEquals(-1, EthAddress.resolvePeer("03:aa:bb:cc:dd:ee"), "a group address");
        assertEquals("eth:02:aa:bb:cc:dd:ee", EthAddress.describe(0x02AA_BBCC_DDEEL));
        assertEquals("eth:veth0/00:00:00:00:00:01", new EthAddress("veth0", 1).toString());
    }
}
