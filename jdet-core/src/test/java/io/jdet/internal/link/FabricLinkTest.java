package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static io.jdet.internal.link.LinkFrames.counters;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The in-process link: one slot size per fabric, slots always published, endpoints and fabrics released. */
@Timeout(30)
class FabricLinkTest {
    private static final AtomicLong NAMES = new AtomicLong();

    private static String fabric() {
        return "link-test-" + NAMES.incrementAndGet();
    }

    @Test
    void shouldCarryTheFabricsLargestFrameToANicThatAskedForASmallerMtu() {
        final String name = fabric();
        try (FabricLink big = new FabricLink(name, 4176, 8); FabricLink small = new FabricLink(name, 1500, 8)) {
            assertEquals(4176, small.mtu(), "a NIC adopts the MTU of the fabric it joins");
            final FrameGather payload = LinkFrames.payload(4176 - HEADER, 0x5A);
            final MemorySegment header = LinkFrames.header(1, payload);
            assertTrue(big.send(big.resolve(small.address()), header, HEADER, payload));
            assertTrue(small.send(small.resolve(big.address()), header, HEADER, payload));
            final LinkFrames.Received atSmall = new LinkFrames.Received();
            final LinkFrames.Received atBig = new LinkFrames.Received();
            assertEquals(1, small.receive(atSmall, 4));
            assertEquals(1, big.receive(atBig, 4));
            assertEquals(4176, atSmall.frames.get(0).length);
            assertEquals(4176, atBig.frames.get(0).length);
        }
    }

    @Test
    void shouldPublishTheSlotOfAFrameWhoseSourceMemoryClosedSoOtherPeersAreStillHeard() {
        final String name = fabric();
        try (FabricLink dying = new FabricLink(name, 1024, 8); FabricLink healthy = new FabricLink(name, 1024, 8);
             FabricLink target = new FabricLink(name, 1024, 8)) {
            final FrameGather gone = new FrameGather(1);
            final MemorySegment header;
            try (Arena arena = Arena.ofShared()) {
                final MemorySegment memory = arena.allocate(100);
                gone.add(memory, memory.asByteBuffer(), 0, 100);
                header = LinkFrames.header(1, gone);
            }
            assertTrue(dying.send(dying.resolve(target.address()), header, HEADER, gone),
                "a frame whose memory is gone is dropped, as on a wire");
            assertEquals(1L, counters(dying).get("link.tx.errors"));

            final FrameGather payload = LinkFrames.payload(50, 7);
            final MemorySegment good = LinkFrames.header(2, payload);
            assertTrue(healthy.send(healthy.resolve(target.address()), good, HEADER, payload));
            final LinkFrames.Received received = new LinkFrames.Received();
            assertEquals(2, target.receive(received, 8), "the abandoned slot and the good frame");
            assertEquals(1, received.frames.size());
            assertEquals(2, received.frames.get(0)[0]);
            assertEquals(healthy.resolve(healthy.address()), received.peers.get(0));
            assertEquals(1L, counters(target).get("link.rx.aborted"));
            assertEquals(0L, counters(target).get("link.rx.bad_crc"));
        }
    }

    @Test
    void shouldSettleWhatItLentOnEveryPeerBeforeTheApplicationGetsItsMemoryBack() {
        final String name = fabric();
        final int size = 4096;
        try (FabricLink sender = new FabricLink(name, 8192, 8, false);
             FabricLink target = new FabricLink(name, 8192, 8, false);
             Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(size);
            memory.fill((byte) 1);
            final FrameGather payload = new FrameGather(1);
            payload.lend(memory, memory.asByteBuffer(), 0, size);
            final MemorySegment header = LinkFrames.header(1, payload);
            assertTrue(sender.send(sender.resolve(target.address()), header, HEADER, payload));
            assertTrue(sender.send(sender.resolve(sender.address()), header, HEADER, payload), "to itself too");
            sender.settle();
            memory.fill((byte) 2);
            final LinkFrames.Received received = new LinkFrames.Received();
            assertEquals(1, target.receive(received, 8));
            assertEquals(1, sender.receive(received, 8));
            for (final byte[] frame : received.frames) {
                assertEquals(1, frame[HEADER], "the bytes as sent");
                assertEquals(1, frame[HEADER + size - 1]);
            }
        }
    }

    @Test
    void shouldReuseEndpointNumbersWhenNicsComeAndGo() {
        final String name = fabric();
        try (FabricLink stays = new FabricLink(name, 512, 8)) {
            final Set<String> seen = new HashSet<>();
            for (int i = 0; i < 5_000; i++) {
                final FabricLink passing = new FabricLink(name, 512, 8);
                seen.add(passing.address());
                assertTrue(passing.resolve(stays.address()) > 0);
                passing.close();
                assertEquals(-1, stays.resolve(passing.address()), "a closed endpoint is unreachable");
            }
            assertTrue(seen.size() <= 32, "5000 NICs, one at a time, used " + seen.size() + " numbers");
            assertTrue(Fabric.endpointCapacity(name) <= 32, "the endpoint table grew to "
                + Fabric.endpointCapacity(name));
        }
    }

    @Test
    void shouldReleaseAFabricWhenItsLastNicCloses() {
        final String name = fabric();
        final FabricLink first = new FabricLink(name, 1024, 8);
        first.close();
        assertFalse(Fabric.exists(name), "a fabric without NICs is forgotten");
        try (FabricLink again = new FabricLink(name, 2048, 8)) {
            assertEquals(2048, again.mtu(), "a new fabric of the same name takes the MTU of its new first NIC");
        }
        assertFalse(Fabric.exists(name));
    }

    @Test
    void shouldForgetAFabricWhoseFirstNicCouldNotBeMade() {
        final String name = fabric();
        try {
            new FabricLink(name, 1024, 6);
        } catch (final IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("power of two"), expected.getMessage());
        }
        assertFalse(Fabric.exists(name), "a failed open leaves no endpoint behind");
    }

    @Test
    void shouldSendFramesToNobodyWhenThePeerIsGone() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8)) {
            final FabricLink b = new FabricLink(name, 1024, 8);
            final long peer = a.resolve(b.address());
            b.close();
            final FrameGather payload = LinkFrames.payload(10, 1);
            assertTrue(a.send(peer, LinkFrames.header(3, payload), HEADER, payload));
            assertEquals(1L, counters(a).get("link.tx.peer_gone"));
            assertEquals(-1, a.resolve("loop:" + name + "/x"));
            assertEquals(-1, a.resolve("loop:other/1"));
            assertEquals(-1, a.resolve(null));
        }
    }

    @Test
    void shouldCopyEveryByteOfAFrame() {
        final String name = fabric();
        try (FabricLink a = new FabricLink(name, 1024, 8); FabricLink b = new FabricLink(name, 1024, 8)) {
            final FrameGather payload = LinkFrames.payload(300, 0x33);
            final MemorySegment header = LinkFrames.header(9, payload);
            final byte[] expected = new byte[HEADER + 300];
            MemorySegment.copy(header, 0, MemorySegment.ofArray(expected), 0, HEADER);
            java.util.Arrays.fill(expected, HEADER, expected.length, (byte) 0x33);
            expected[FrameCrc.CRC_OFFSET] = 0; // the receiver zeroes the CRC field while checking it
            expected[FrameCrc.CRC_OFFSET + 1] = 0;
            expected[FrameCrc.CRC_OFFSET + 2] = 0;
            expected[FrameCrc.CRC_OFFSET + 3] = 0;
            assertTrue(a.send(a.resolve(b.address()), header, HEADER, payload));
            final LinkFrames.Received received = new LinkFrames.Received();
            assertEquals(1, b.receive(received, 8));
            assertArrayEquals(expected, received.frames.get(0));
        }
    }
}
