package io.jdet.internal.link;

import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.wire.Frame;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The raw Ethernet link's frame checks and addresses, without a socket: every received frame is hostile. */
class EthFrameTest {
    private static final long OWN = 0x02_11_22_33_44_55L;
    private static final long PEER = 0x02_aa_bb_cc_dd_eeL;
    private static final int TYPE = 0x88B5;
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
        ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment buffer = Arena.ofAuto().allocate(2048);

    /** A frame from PEER to OWN with a jdet header declaring {@code payload} bytes; returns its wire length. */
    private int frame(final long dst, final long src, final int type, final int payload) {
        EthFrame.writeHeader(buffer, dst, src, type);
        buffer.set(LE_SHORT, EthFrame.HEADER + Frame.PAYLOAD_LENGTH_OFFSET, (short) payload);
        return EthFrame.HEADER + Frame.HEADER_LENGTH + payload;
    }

    @Test
    void shouldAcceptAFrameForUsAndGiveItsJdetLength() {
        final int length = frame(OWN, PEER, TYPE, 100);
        assertEquals(Frame.HEADER_LENGTH + 100, EthFrame.check(buffer, length, OWN, TYPE));
        assertEquals(PEER, EthFrame.mac(buffer, EthFrame.SRC));
        assertEquals(OWN, EthFrame.mac(buffer, EthFrame.DST));
        assertEquals((byte) 0x88, buffer.get(ValueLayout.JAVA_BYTE, 12), "EtherType in network order");
        assertEquals((byte) 0xB5, buffer.get(ValueLayout.JAVA_BYTE, 13));
    }

    @Test
    void shouldCountAProtectedFramesTrailerButNotAConnectionManagerFrames() {
        // A protected frame of a queue pair carries the seal's trailer after its payload (not in the payload
        // length); trimmed to payload alone, its CRC and tag would fail and no protected connection would work.
        final int trailer = Frame.PROTECTED_TRAILER_LENGTH;
        int length = frame(OWN, PEER, TYPE, 100) + trailer;
        buffer.set(ValueLayout.JAVA_BYTE, EthFrame.HEADER + Frame.OPCODE_OFFSET, (byte) Frame.OP_WRITE);
        buffer.set(LE_SHORT, EthFrame.HEADER + Frame.FLAGS_OFFSET, (short) Frame.FLAG_PROTECTED);
        assertEquals(Frame.HEADER_LENGTH + 100 + trailer, EthFrame.check(buffer, length, OWN, TYPE));
        assertEquals(EthFrame.TRUNCATED, EthFrame.check(buffer, length - 1, OWN, TYPE), "the trailer cut short");
        length = frame(OWN, PEER, TYPE, 32);
        buffer.set(ValueLayout.JAVA_BYTE, EthFrame.HEADER + Frame.OPCODE_OFFSET, (byte) Frame.OP_CM_READY);
        assertEquals(Frame.HEADER_LENGTH + 32, EthFrame.check(buffer, length + 30, OWN, TYPE),
            "a protected CM frame has no trailer: what follows is padding");
    }

    @Test
    void shouldTrimEthernetPaddingToTheDeclaredLength() {
        final int length = frame(OWN, PEER, TYPE, 0);
        assertEquals(Frame.HEADER_LENGTH, EthFrame.check(buffer, length + 30, OWN, TYPE));
    }

    @Test
    void shouldDropShortFramesWhateverTheyClaim() {
        frame(OWN, PEER, TYPE, 0);
        assertEquals(EthFrame.SHORT, EthFrame.check(buffer, 0, OWN, TYPE));
        assertEquals(EthFrame.SHORT, EthFrame.check(buffer, EthFrame.HEADER, OWN, TYPE));
        assertEquals(EthFrame.SHORT, EthFrame.check(buffer, EthFrame.HEADER + Frame.HEADER_LENGTH - 1, OWN, TYPE));
        assertEquals(EthFrame.SHORT, EthFrame.check(buffer, -5, OWN, TYPE));
        assertEquals(EthFrame.SHORT, EthFrame.check(buffer, (int) buffer.byteSize() + 1, OWN, TYPE),
            "a length beyond the buffer is never read");
    }

    @Test
    void shouldDropFramesLongerThanTheBytesReceived() {
        final int length = frame(OWN, PEER, TYPE, 1000);
        assertEquals(EthFrame.TRUNCATED, EthFrame.check(buffer, length - 1, OWN, TYPE));
        frame(OWN, PEER, TYPE, 0xFFFF);
        assertEquals(EthFrame.TRUNCATED, EthFrame.check(buffer, (int) buffer.byteSize(), OWN, TYPE));
    }

    @Test
    void shouldDropOwnForeignAndGroupAddressedFrames() {
        assertEquals(EthFrame.OWN, EthFrame.check(buffer, frame(OWN, OWN, TYPE, 0), OWN, TYPE));
        assertEquals(EthFrame.NOT_FOR_US, EthFrame.check(buffer, frame(0x02_00_00_00_00_99L, PEER, TYPE, 0), OWN,
            TYPE), "another station's frame, as a promiscuous interface hands it up");
        assertEquals(EthFrame.NOT_FOR_US, EthFrame.check(buffer, frame(0xFFFF_FFFF_FFFFL, PEER, TYPE, 0), OWN, TYPE),
            "broadcast");
        assertEquals(EthFrame.NOT_FOR_US, EthFrame.check(buffer, frame(0x01_00_5e_00_00_01L, PEER, TYPE, 0), OWN,
            TYPE), "multicast");
        assertEquals(EthFrame.BAD_SOURCE, EthFrame.check(buffer, frame(OWN, 0x01_00_5e_00_00_01L, TYPE, 0), OWN,
            TYPE), "a group address is never a sender");
        assertEquals(EthFrame.BAD_SOURCE, EthFrame.check(buffer, frame(OWN, 0, TYPE, 0), OWN, TYPE));
        assertEquals(EthFrame.WRONG_TYPE, EthFrame.check(buffer, frame(OWN, PEER, 0x0800, 0), OWN, TYPE));
    }

    @Test
    void shouldParseAndFormatAddresses() {
        assertEquals("eth:veth0/02:aa:bb:cc:dd:ee", new EthAddress("veth0", PEER).toString());
        assertEquals(PEER, EthAddress.resolvePeer("eth:veth0/02:aa:bb:cc:dd:ee"));
        assertEquals(PEER, EthAddress.resolvePeer("eth:02:AA:BB:CC:DD:EE"));
        assertEquals(PEER, EthAddress.resolvePeer("02:aa:bb:cc:dd:ee"));
        assertEquals(PEER, EthAddress.resolvePeer(EthAddress.describe(PEER)));
        for (final String bad : new String[] {null, "", "eth:", "eth:veth0", "eth:veth0/", "eth:veth0/02:aa:bb:cc:dd",
            "eth:veth0/02-aa-bb-cc-dd-ee", "eth:veth0/02:aa:bb:cc:dd:eg", "eth:ff:ff:ff:ff:ff:ff",
            "eth:01:00:5e:00:00:01", "eth:00:00:00:00:00:00", "eth:bad name/02:aa:bb:cc:dd:ee",
            "udp:127.0.0.1:5"}) {
            assertEquals(-1, EthAddress.resolvePeer(bad), bad);
        }
    }

    @Test
    void shouldRefuseNicNamesThatAreNoInterfaceNames() {
        assertEquals("veth0", EthAddress.parseNicName("eth:veth0"));
        for (final String bad : new String[] {"eth:", "eth:a/b", "eth:sixteen-chars-xy", "eth:a b", "veth0"}) {
            assertEquals(Errno.ENODEV, assertThrows(DetException.class, () -> EthAddress.parseNicName(bad)).errno(),
                bad);
        }
    }

    @Test
    void shouldSayWhatToGrantWhenThePacketSocketIsRefused() {
        final DetException e = EthLink.socketFailure("eth:veth0", PacketCalls.EPERM);
        assertEquals(Errno.EPERM, e.errno());
        assertTrue(e.getMessage().contains("CAP_NET_RAW") && e.getMessage().contains("does not fall back"),
            e.getMessage());
        assertEquals(Errno.EPERM, EthLink.socketFailure("eth:veth0", PacketCalls.EACCES).errno());
        assertEquals(Errno.ENODEV, EthLink.socketFailure("eth:veth0", 97).errno());
    }

    @Test
    void shouldRefuseEtherTypesTheKernelTakesForVlanTags() {
        // Linux strips a tag of either VLAN EtherType (802.1Q 0x8100, 802.1ad 0x88A8) before a packet socket sees the
        // frame, taking the jdet header's first four bytes as the tag's TCI and inner type: a NIC bound to either
        // would never receive a frame (EthLinkTest.shouldCarryFramesOnEveryEtherTypeTheConfigurationAccepts).
        for (final int vlan : new int[] {0x8100, 0x88A8}) {
            assertEquals(Errno.EINVAL, assertThrows(DetException.class,
                () -> new Configuration().ethEtherType(vlan).conclude()).errno(), Integer.toHexString(vlan));
        }
        new Configuration().ethEtherType(0x9100).conclude(); // the old QinQ type: the kernel leaves it alone
    }
}
