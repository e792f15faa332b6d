package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.FaultPlan;
import io.jdet.WcStatus;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import io.jdet.testing.VethPair;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The raw Ethernet link across veth pairs (root; see {@link VethPair}): frames and their sender, hostile frames
 * dropped and counted, batching, jumbo frames, fault injection, and the errors of a refused open (EPERM without
 * CAP_NET_RAW, EADDRINUSE for a second NIC, ENODEV for what is no Ethernet interface).
 */
@Timeout(60)
class EthLinkTest {
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
        ByteOrder.LITTLE_ENDIAN);
    private static VethPair veth;
    private static VethPair jumbo;

    @BeforeAll
    static void createPairs() {
        veth = new VethPair(1500);
        jumbo = new VethPair(9000);
    }

    @AfterAll
    static void deletePairs() {
        for (final VethPair p : new VethPair[] {veth, jumbo}) {
            if (p != null) {
                p.close();
            }
        }
    }

    /** A sealed header that declares its payload's length, as the engine's frames do. */
    private static MemorySegment header(final int tag, final FrameGather payload, final boolean seal) {
        final ByteBuffer view = ByteBuffer.allocateDirect(Frame.HEADER_LENGTH);
        final MemorySegment header = MemorySegment.ofBuffer(view);
        header.set(ValueLayout.JAVA_BYTE, 0, (byte) tag);
        header.set(LE_SHORT, Frame.PAYLOAD_LENGTH_OFFSET, (short) payload.totalLength());
        if (seal) {
            new FrameCrc().seal(header, view, Frame.HEADER_LENGTH, payload);
        }
        return header;
    }

    private static int receiveAtLeast(final Link link, final LinkFrames.Received into, final int n,
                                      final Map<String, Long> counters, final String counter, final long dropped) {
        final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
        int taken = 0;
        while (true) {
            taken += link.receive(into, 64);
            counters.clear();
            link.addCounters(counters);
            if (into.frames.size() >= n && counters.getOrDefault(counter, 0L) >= dropped) {
                return taken;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("got " + into.frames.size() + " frames and counters " + counters);
            }
            link.await(1_000_000);
        }
    }

    @Test
    void shouldCarryFramesBothWaysWithTheSenderAndInterfaceMtu() {
        final Configuration c = new Configuration();
        try (EthLink a = new EthLink(veth.nicA(), c); EthLink b = new EthLink(veth.nicB(), c)) {
            assertEquals(1500, a.mtu());
            assertTrue(a.address().startsWith("eth:" + veth.a + "/"), a.address());
            final long toB = a.resolve(b.address());
            final long toA = b.resolve(a.address());
            assertEquals(-1, a.resolve("eth:" + veth.a + "/ff:ff:ff:ff:ff:ff"), "no group addresses");
            final FrameGather payload = LinkFrames.payload(1500 - Frame.HEADER_LENGTH, 0x5A);
            for (int i = 0; i < 3 * EthLink.TX_BATCH + 5; i++) { // more than a batch: sendmmsg flushes by itself
                assertTrue(a.send(toB, header(i, payload, true), Frame.HEADER_LENGTH, payload));
            }
            a.flush();
            final LinkFrames.Received atB = new LinkFrames.Received();
            receiveAtLeast(b, atB, 3 * EthLink.TX_BATCH + 5, new HashMap<>(), "link.rx.kernel_packets", 1);
            for (int i = 0; i < atB.frames.size(); i++) {
                assertEquals(1500, atB.frames.get(i).length);
                assertEquals((byte) i, atB.frames.get(i)[0], "in order");
                assertEquals(0x5A, atB.frames.get(i)[1499]);
                assertEquals(toA, atB.peers.get(i));
            }
            assertEquals(a.address().substring(a.address().indexOf('/') + 1), b.describe(toA).substring(4));
            final FrameGather none = new FrameGather(0);
            b.send(toA, header(7, none, true), Frame.HEADER_LENGTH, none);
            b.flush();
            final LinkFrames.Received atA = new LinkFrames.Received();
            receiveAtLeast(a, atA, 1, new HashMap<>(), "link.rx.bad_crc", 0);
            assertEquals(toB, atA.peers.get(0));
            final Map<String, Long> counters = new HashMap<>();
            a.addCounters(counters);
            assertEquals(0L, counters.get("link.tx.errors"));
        }
    }

    @Test
    void shouldHandStagedFramesToTheKernelAtAPush() {
        final Configuration c = new Configuration();
        try (EthLink a = new EthLink(veth.nicA(), c); EthLink b = new EthLink(veth.nicB(), c)) {
            final FrameGather payload = LinkFrames.payload(8, 0x33);
            assertTrue(a.send(a.resolve(b.address()), header(1, payload, true), Frame.HEADER_LENGTH, payload));
            a.push();
            final LinkFrames.Received atB = new LinkFrames.Received();
            receiveAtLeast(b, atB, 1, new HashMap<>(), "link.rx.bad_crc", 0);
            assertEquals((byte) 1, atB.frames.get(0)[0]);
        }
    }

    @Test
    void shouldDropAndCountHostileFramesAndDeliverTheGoodOne() {
        final Configuration c = new Configuration();
        try (EthLink a = new EthLink(veth.nicA(), c); EthLink b = new EthLink(veth.nicB(), c)) {
            final long toB = a.resolve(b.address());
            final FrameGather payload = LinkFrames.payload(100, 1);
            final FrameGather none = new FrameGather(0);
            a.send(toB, header(1, payload, false), Frame.HEADER_LENGTH, payload); // unsealed: a bad CRC
            a.send(toB, header(2, none, true), 20, none); // a runt
            a.send(EthAddress.resolvePeer("02:00:00:00:00:99"), header(3, none, true), Frame.HEADER_LENGTH, none);
            final MemorySegment liar = header(4, none, true);
            liar.set(LE_SHORT, Frame.PAYLOAD_LENGTH_OFFSET, (short) 5000); // declares more than it carries
            a.send(toB, liar, Frame.HEADER_LENGTH, none);
            a.send(toB, header(5, payload, true), Frame.HEADER_LENGTH, payload);
            assertTrue(a.send(toB, header(6, none, true), Frame.HEADER_LENGTH, LinkFrames.payload(1500, 0)));
            a.flush();
            final LinkFrames.Received atB = new LinkFrames.Received();
            final Map<String, Long> counters = new HashMap<>();
            receiveAtLeast(b, atB, 1, counters, "link.rx.truncated", 1);
            receiveAtLeast(b, atB, 1, counters, "link.rx.foreign", 1);
            assertEquals(1, atB.frames.size());
            assertEquals(5, atB.frames.get(0)[0]);
            assertEquals(1L, counters.get("link.rx.bad_crc"));
            assertEquals(1L, counters.get("link.rx.short"));
            final Map<String, Long> atA = new HashMap<>();
            a.addCounters(atA);
            assertEquals(1L, atA.get("link.tx.oversize"), "larger than the MTU: never sent");
        }
    }

    /** Sends raw bytes out of an interface, as any host on the segment can (an AF_PACKET socket of this test). */
    private static void sendRaw(final String iface, final byte[] frame) throws Throwable {
        final int ifindex = Integer.parseInt(java.nio.file.Files.readString(
            java.nio.file.Path.of("/sys/class/net", iface, "ifindex")).trim());
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment errno = Posix.newErrnoState(arena);
            final int fd = (int) Posix.SOCKET.invokeExact(errno, PacketCalls.AF_PACKET, PacketCalls.SOCK_RAW, 0);
            assertTrue(fd >= 0, "socket(AF_PACKET): errno " + Posix.errno(errno));
            try {
                final MemorySegment sa = arena.allocate(PacketCalls.SOCKADDR_LL_SIZE, 8);
                PacketCalls.sockaddrLl(sa, 0, ifindex); // protocol 0: this socket only sends
                final int bound = (int) Posix.BIND.invokeExact(errno, fd, sa, PacketCalls.SOCKADDR_LL_SIZE);
                assertEquals(0, bound, "bind: errno " + Posix.errno(errno));
                final MemorySegment bytes = arena.allocateFrom(ValueLayout.JAVA_BYTE, frame);
                final long written = (long) Posix.WRITE.invokeExact(fd, bytes, (long) frame.length);
                assertEquals(frame.length, written);
            } finally {
                final int closed = (int) Posix.CLOSE.invokeExact(fd);
                assertEquals(0, closed);
            }
        }
    }

    @Test
    void shouldDropAFrameTaggedForAVlanThisInterfaceIsNotOn() throws Throwable {
        // The kernel strips an 802.1Q tag before an AF_PACKET socket sees the frame; with no VLAN device for its
        // id it marks it OTHERHOST. Taken as ours, it would let a host on any VLAN of the trunk reach this NIC.
        final Configuration c = new Configuration();
        try (EthLink a = new EthLink(veth.nicA(), c)) {
            final byte[] jdet = header(9, new FrameGather(0), true).toArray(ValueLayout.JAVA_BYTE);
            final byte[] dst = java.util.HexFormat.ofDelimiter(":").parseHex(
                a.address().substring(a.address().indexOf('/') + 1));
            final byte[] src = {0x02, 0, 0, 0, 0, 0x42};
            final ByteBuffer tagged = ByteBuffer.allocate(18 + jdet.length).put(dst).put(src)
                .putShort((short) 0x8100).putShort((short) 5).putShort((short) c.ethEtherType()).put(jdet);
            final ByteBuffer plain = ByteBuffer.allocate(14 + jdet.length).put(dst).put(src)
                .putShort((short) c.ethEtherType()).put(jdet);
            sendRaw(veth.b, tagged.array());
            sendRaw(veth.b, plain.array()); // the control: the same frame untagged arrives
            final LinkFrames.Received atA = new LinkFrames.Received();
            final Map<String, Long> counters = new HashMap<>();
            receiveAtLeast(a, atA, 1, counters, "link.rx.foreign", 1);
            assertEquals(1, atA.frames.size(), "only the untagged frame: " + counters);
            assertEquals(9, atA.frames.get(0)[0]);
        }
    }

    @Test
    void shouldCarryJumboFramesAndMessagesWhenTheInterfaceHasThem() {
        try (Loopback pair = Loopback.open(new Loopback.Options().nics(jumbo.nicA(), jumbo.nicB())
            .bufferBytes(4L << 20))) {
            assertEquals(9000, pair.nicA.query().mtu());
            final int length = 3 << 20;
            Tests.fill(pair.bufA.asSlice(0, length), 9);
            final var wc = pair.writeAtoB(pair.bufB.address(), pair.mrB.rKey(), length);
            assertEquals(WcStatus.SUCCESS, wc.status());
            Tests.assertSameBytes(pair.bufA.asSlice(0, length), pair.bufB.asSlice(0, length));
            final Map<String, Long> a = pair.nicA.counters();
            final long firstSends = a.get("frames.sent") - a.get("frames.retransmitted")
                - a.get("frames.sack_retransmitted");
            assertTrue(firstSends < length / 8000 + 64, "jumbo frames, not 1500-byte ones: " + a);
        }
    }

    @Test
    void shouldRecoverEveryVerbWhenFramesAreLostDuplicatedReorderedAndCorrupted() {
        final Configuration c = new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0.02, 42));
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c).nics(veth.nicA(), veth.nicB())
            .bufferBytes(1L << 20))) {
            final int length = 200_000;
            Tests.fill(pair.bufA.asSlice(0, length), 3);
            for (int round = 0; round < 3; round++) {
                pair.qpB.recv(round, sge(pair.mrB, 0, length), 1);
                pair.qpA.send(100 + round, sge(pair.mrA, 0, length), 1, 0, 0);
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
                Tests.assertSameBytes(pair.bufA.asSlice(0, length), pair.bufB.asSlice(0, length));
            }
            pair.qpA.read(7, sge(pair.mrA, length, length), 1, pair.bufB.address(), pair.mrB.rKey(), 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            Tests.assertSameBytes(pair.bufB.asSlice(0, length), pair.bufA.asSlice(length, length));
            final Map<String, Long> a = pair.nicA.counters();
            final Map<String, Long> b = pair.nicB.counters();
            assertTrue(a.get("link.rx.bad_crc") + b.get("link.rx.bad_crc") > 0, "corrupted frames dropped: " + b);
            assertTrue(a.get("fault.dropped") + b.get("fault.dropped") > 0, "frames were lost: " + a);
        }
    }

    @Test
    void shouldRefuseASecondNicOnTheSameInterfaceAndEtherTypeButNotOnAnother() {
        final Configuration c = new Configuration();
        try (EthLink first = new EthLink(veth.nicA(), c)) {
            final DetException e = assertThrows(DetException.class, () -> new EthLink(veth.nicA(), c));
            assertEquals(Errno.EADDRINUSE, e.errno(), e.getMessage());
            try (EthLink other = new EthLink(veth.nicA(), new Configuration().ethEtherType(0x88B6))) {
                assertEquals(first.address(), other.address());
            }
        }
        try (EthLink again = new EthLink(veth.nicA(), c)) {
            assertTrue(again.mtu() > 0, "the claim ends with the NIC");
        }
    }

    @Test
    void shouldFailWithEnodevForWhatIsNoUsableEthernetInterface() {
        final Configuration c = new Configuration();
        for (final String name : new String[] {"eth:nosuchif0", "eth:lo", "eth:", "eth:a/b"}) {
            assertEquals(Errno.ENODEV, assertThrows(DetException.class, () -> new EthLink(name, c)).errno(), name);
        }
    }

    @Test
    void shouldFailWithEpermAndSayWhatToGrantWithoutCapNetRaw() throws Exception {
        final AtomicReference<Throwable> outcome = new AtomicReference<>();
        // Capabilities belong to a thread: this one drops CAP_NET_RAW from its effective set, then opens.
        final Thread t = Thread.ofPlatform().start(() -> {
            try {
                dropNetRawFromThisThread();
                new EthLink(veth.nicA(), new Configuration()).close();
                outcome.set(new AssertionError("opened without CAP_NET_RAW"));
            } catch (final Throwable e) {
                outcome.set(e);
            }
        });
        t.join(Tests.TIMEOUT.toMillis());
        final DetException e = assertInstanceOf(outcome.get());
        assertEquals(Errno.EPERM, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains("CAP_NET_RAW") && e.getMessage().contains("setpriv"), e.getMessage());
        try (EthLink stillWorks = new EthLink(veth.nicA(), new Configuration())) {
            assertTrue(stillWorks.mtu() > 0, "other threads keep the capability, and the claim was released");
        }
    }

    private static DetException assertInstanceOf(final Throwable t) {
        if (t instanceof DetException e) {
            return e;
        }
        throw new AssertionError("expected a DetException", t);
    }

    /** {@code capget}/{@code capset} (v3) on the calling thread: clears CAP_NET_RAW (13) from its effective set. */
    private static void dropNetRawFromThisThread() throws Throwable {
        final Linker linker = Linker.nativeLinker();
        final FunctionDescriptor fd = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.ADDRESS);
        final MethodHandle capget = linker.downcallHandle(linker.defaultLookup().find("capget").orElseThrow(), fd);
        final MethodHandle capset = linker.downcallHandle(linker.defaultLookup().find("capset").orElseThrow(), fd);
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment header = arena.allocate(8, 4);
            header.set(ValueLayout.JAVA_INT, 0, 0x20080522); // _LINUX_CAPABILITY_VERSION_3
            header.set(ValueLayout.JAVA_INT, 4, 0); // this thread
            final MemorySegment data = arena.allocate(24, 4); // two of {effective, permitted, inheritable}
            assertEquals(0, (int) capget.invokeExact(header, data));
            data.set(ValueLayout.JAVA_INT, 0, data.get(ValueLayout.JAVA_INT, 0) & ~(1 << 13));
            assertEquals(0, (int) capset.invokeExact(header, data));
        }
    }

    @Test
    void shouldCarryFramesOnEveryEtherTypeTheConfigurationAccepts() throws InterruptedException {
        // 0x88A8 (802.1ad) is a VLAN tag to the kernel: it strips it on receive, so a socket bound to it gets nothing
        for (final int type : new int[] {0x88B5, 0x88A8, 0x9100}) {
            final Configuration c = new Configuration().ethEtherType(type);
            try {
                c.conclude();
            } catch (final DetException refused) {
                assertEquals(Errno.EINVAL, refused.errno());
                continue; // refused when a device opens: fine
            }
            try (EthLink a = new EthLink(veth.nicA(), c); EthLink b = new EthLink(veth.nicB(), c)) {
                final FrameGather none = new FrameGather(0);
                assertTrue(a.send(a.resolve(b.address()), header(type & 0x7F, none, true), Frame.HEADER_LENGTH, none));
                a.flush();
                final LinkFrames.Received atB = new LinkFrames.Received();
                final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
                while (atB.frames.isEmpty() && System.nanoTime() - deadline < 0) {
                    b.receive(atB, 8);
                    b.await(10_000_000);
                }
                assertEquals(1, atB.frames.size(), "EtherType 0x" + Integer.toHexString(type)
                    + " is accepted by Configuration.conclude but carries nothing");
            }
        }
    }
}
