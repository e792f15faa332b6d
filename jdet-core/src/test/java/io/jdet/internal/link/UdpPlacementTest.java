package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tests;
import io.jdet.testing.VethPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The UDP link's receive into place: a datagram whose payload the handler places lands in the target but for the
 * bytes after the placed ones, which arrive after the header; a corrupted one is dropped; one the handler declines,
 * or whose target's memory is gone, arrives whole, the usual way.
 */
@Timeout(30)
class UdpPlacementTest {
    private static final int PAYLOAD = 30_000;
    private static final int TAIL = 64;

    /** Places every datagram of at least {@link #PAYLOAD} bytes' frame into {@link #target}, all but the tail. */
    private static final class Placing implements FrameHandler {
        final List<byte[]> whole = new ArrayList<>();
        final List<byte[]> placedFrames = new ArrayList<>();
        final List<Integer> placedCounts = new ArrayList<>();
        MemorySegment target;
        ByteBuffer targetView;
        long targetOffset;
        boolean decline;

        @Override
        public boolean placing() {
            return true;
        }

        @Override
        public int placement(final MemorySegment header, final int length, final long peer, final FrameGather into) {
            if (decline || length < HEADER + PAYLOAD) {
                return 0;
            }
            final int n = length - HEADER - TAIL;
            into.lend(target, targetView, targetOffset, n);
            return n;
        }

        @Override
        public void onPlacedFrame(final MemorySegment frame, final int length, final long peer, final int placed) {
            placedFrames.add(frame.asSlice(0, length - placed).toArray(ValueLayout.JAVA_BYTE));
            placedCounts.add(placed);
        }

        @Override
        public void onFrame(final MemorySegment frame, final int length, final long peer) {
            whole.add(frame.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    private static FrameGather pattern(final int length, final int seed) {
        final FrameGather g = LinkFrames.payload(length, 0);
        final MemorySegment s = g.segment(0);
        for (int i = 0; i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return g;
    }

    private static long counter(final UdpLink link, final String name) {
        final Map<String, Long> c = new HashMap<>();
        link.addCounters(c);
        return c.getOrDefault(name, 0L);
    }

    private static void drain(final UdpLink receiver, final Placing handler, final int frames) {
        Tests.await(frames + " frames", () -> {
            receiver.receive(handler, 16);
            return handler.whole.size() + handler.placedFrames.size() >= frames;
        });
    }

    @Test
    void shouldReceiveThePayloadIntoItsTargetAndTheTailAfterTheHeader() {
        try (UdpLink sender = new UdpLink("udp:127.0.0.1"); UdpLink receiver = new UdpLink("udp:127.0.0.1");
             Arena arena = Arena.ofShared()) {
            final Placing handler = new Placing();
            handler.target = arena.allocate(1 << 16, 64);
            handler.targetView = handler.target.asByteBuffer();
            handler.targetOffset = 100;
            final FrameGather payload = pattern(PAYLOAD, 7);
            final MemorySegment header = LinkFrames.header(1, payload);
            assertTrue(sender.send(sender.resolve(receiver.address()), header, HEADER, payload));
            drain(receiver, handler, 1);

            assertEquals(List.of(), handler.whole, "the frame was placed, not received whole");
            final int placed = PAYLOAD - TAIL;
            assertEquals(List.of(placed), handler.placedCounts);
            final byte[] expected = payload.segment(0).toArray(ValueLayout.JAVA_BYTE);
            assertArrayEquals(java.util.Arrays.copyOf(expected, placed),
                handler.target.asSlice(100, placed).toArray(ValueLayout.JAVA_BYTE), "the payload lies in its target");
            final byte[] frame = handler.placedFrames.get(0);
            assertEquals(HEADER + TAIL, frame.length);
            assertArrayEquals(java.util.Arrays.copyOfRange(expected, placed, PAYLOAD),
                java.util.Arrays.copyOfRange(frame, HEADER, HEADER + TAIL), "the last bytes follow the header");
            assertEquals(0, handler.target.get(ValueLayout.JAVA_BYTE, 99), "nothing before the target");
            assertEquals(0, handler.target.get(ValueLayout.JAVA_BYTE, 100 + placed), "nothing after it");
            assertEquals(1, counter(receiver, "link.rx.placed"));
        }
    }

    @Test
    void shouldDropAPlacedFrameWhoseCrcFails() {
        try (UdpLink sender = new UdpLink("udp:127.0.0.1"); UdpLink receiver = new UdpLink("udp:127.0.0.1");
             Arena arena = Arena.ofShared()) {
            final Placing handler = new Placing();
            handler.target = arena.allocate(1 << 16, 64);
            handler.targetView = handler.target.asByteBuffer();
            final FrameGather payload = pattern(PAYLOAD, 3);
            final MemorySegment header = LinkFrames.header(1, payload);
            payload.segment(0).set(ValueLayout.JAVA_BYTE, 5000, (byte) 0x55); // after the CRC: corrupted on the way
            final FrameGather good = pattern(PAYLOAD, 4);
            final MemorySegment goodHeader = LinkFrames.header(2, good);
            final long peer = sender.resolve(receiver.address());
            assertTrue(sender.send(peer, header, HEADER, payload));
            assertTrue(sender.send(peer, goodHeader, HEADER, good));
            drain(receiver, handler, 1);

            assertEquals(1, handler.placedFrames.size(), "only the good frame is handed over");
            assertEquals(2, handler.placedFrames.get(0)[0], "the good frame's tag");
            assertEquals(1, counter(receiver, "link.rx.bad_crc"));
            assertEquals(1, counter(receiver, "link.rx.placed"));
        }
    }

    @Test
    void shouldReceiveWholeWhatTheHandlerDoesNotPlace() {
        try (UdpLink sender = new UdpLink("udp:127.0.0.1"); UdpLink receiver = new UdpLink("udp:127.0.0.1");
             Arena arena = Arena.ofShared()) {
            final Placing handler = new Placing();
            handler.target = arena.allocate(1 << 16, 64);
            handler.targetView = handler.target.asByteBuffer();
            final long peer = sender.resolve(receiver.address());
            final FrameGather small = pattern(100, 1);
            assertTrue(sender.send(peer, LinkFrames.header(1, small), HEADER, small));
            final FrameGather large = pattern(PAYLOAD, 2);
            assertTrue(sender.send(peer, LinkFrames.header(2, large), HEADER, large));
            drain(receiver, handler, 2);
            handler.decline = true;
            final FrameGather declined = pattern(PAYLOAD, 3);
            assertTrue(sender.send(peer, LinkFrames.header(3, declined), HEADER, declined));
            drain(receiver, handler, 3);

            assertEquals(2, handler.whole.size(), "the small frame and the declined one arrive whole");
            assertEquals(1, handler.whole.get(0)[0]);
            assertEquals(HEADER + 100, handler.whole.get(0).length);
            assertEquals(3, handler.whole.get(1)[0]);
            assertEquals(HEADER + PAYLOAD, handler.whole.get(1).length);
            assertEquals(1, handler.placedFrames.size());
            assertEquals(2, handler.placedFrames.get(0)[0]);
        }
    }

    /**
     * A frame whose CRC field is 0 passes unchecked only from a loopback source (docs/PROTOCOL.md, section 4): from
     * any other, a placed one is checked like every frame and dropped.
     */
    @Test
    void shouldCheckAPlacedFrameWithoutACrcFromASourceOffLoopback() {
        try (VethPair veth = new VethPair(65_535)) {
            final String[] ip = veth.addresses(217);
            try (UdpLink sender = new UdpLink("udp:" + ip[0]); UdpLink receiver = new UdpLink("udp:" + ip[1]);
                 Arena arena = Arena.ofShared()) {
                final Placing handler = new Placing();
                handler.target = arena.allocate(1 << 16, 64);
                handler.targetView = handler.target.asByteBuffer();
                final long peer = sender.resolve(receiver.address());
                final FrameGather payload = pattern(PAYLOAD, 8);
                final MemorySegment unsealed = LinkFrames.header(1, payload);
                unsealed.set(ValueLayout.JAVA_INT_UNALIGNED, io.jdet.internal.wire.FrameCrc.CRC_OFFSET, 0);
                assertTrue(sender.send(peer, unsealed, HEADER, payload));
                final FrameGather good = pattern(PAYLOAD, 9);
                assertTrue(sender.send(peer, LinkFrames.header(2, good), HEADER, good));
                drain(receiver, handler, 1);

                assertEquals(1, handler.placedFrames.size(), "only the frame with a CRC is handed over");
                assertEquals(2, handler.placedFrames.get(0)[0], "its tag");
                assertEquals(1, counter(receiver, "link.rx.bad_crc"), "a 0 off loopback is a CRC, and wrong");
                assertEquals(0, counter(receiver, "link.rx.loopback_unchecked"));
            }
        }
    }

    /**
     * A receiver bound to an address of a 1500-byte MTU interface (frame limit 1472, below
     * {@link UdpLink#PLACE_MIN_FRAME}) hears a peer whose frames are longer (its own MTU is larger; here the kernel
     * routes between two local addresses over loopback, as IP fragments and reassembles them between real hosts): it
     * does not look at datagrams to place them (on such a link a look costs more than the copy of its own frames it
     * would save, and it takes aggregates, which cannot be placed), so the long datagram is received whole, its bytes
     * intact, and the engine copies its payload. Needs root (a veth pair); skipped without it.
     */
    @Test
    void aLinkWithSmallFramesReceivesALongerDatagramWholeWithoutPlacingIt() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            final FrameGather payload = pattern(PAYLOAD, 5);
            final Placing handler = longFrameFromLoopback(1500, 216, 1472, arena, payload);
            assertEquals(List.of(), handler.placedCounts, "not placed");
            assertEquals(1, handler.whole.size(), "received whole");
            final byte[] expected = payload.segment(0).toArray(ValueLayout.JAVA_BYTE);
            assertArrayEquals(expected, java.util.Arrays.copyOfRange(handler.whole.get(0), HEADER,
                HEADER + PAYLOAD));
        }
    }

    /**
     * A receiver whose own frame limit is at least {@link UdpLink#PLACE_MIN_FRAME} (a 9000-byte MTU: 8972) hears a
     * peer whose frames are longer still (routed over loopback, as above): it places the datagram all the same, since
     * only the header and the tail are received into scratch. Needs root (a veth pair); skipped without it.
     */
    @Test
    void shouldPlaceADatagramLongerThanTheReceiversOwnFrameLimit() throws Exception {
        assertTrue(PAYLOAD > 8972);
        try (Arena arena = Arena.ofShared()) {
            final FrameGather payload = pattern(PAYLOAD, 5);
            final Placing handler = longFrameFromLoopback(9000, 226, 8972, arena, payload);
            assertEquals(List.of(), handler.whole, "placed, not received whole");
            assertEquals(List.of(PAYLOAD - TAIL), handler.placedCounts);
            final byte[] expected = payload.segment(0).toArray(ValueLayout.JAVA_BYTE);
            assertArrayEquals(java.util.Arrays.copyOf(expected, PAYLOAD - TAIL),
                handler.target.asSlice(0, PAYLOAD - TAIL).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(java.util.Arrays.copyOfRange(expected, PAYLOAD - TAIL, PAYLOAD),
                java.util.Arrays.copyOfRange(handler.placedFrames.get(0), HEADER, HEADER + TAIL));
        }
    }

    /**
     * Sends one frame of {@code payload} from a link on loopback to a receiver bound to an address of a veth pair of
     * the given MTU (routed over loopback, as IP fragments and reassembles it between real hosts), and drains it
     * into a handler whose target lies in {@code arena}.
     */
    private static Placing longFrameFromLoopback(final int mtu, final int subnet, final int frameLimit,
                                                 final Arena arena, final FrameGather payload) throws Exception {
        try (VethPair veth = new VethPair(mtu)) {
            final String address = "198.18." + subnet + "." + ((int) (ProcessHandle.current().pid() % 60) * 4 + 2);
            ip("addr", "add", address + "/30", "dev", veth.b);
            try (UdpLink sender = new UdpLink("udp:127.0.0.1"); UdpLink receiver = new UdpLink("udp:" + address)) {
                assertEquals(frameLimit, receiver.mtu(), "the frame limit of a " + mtu + "-byte MTU");
                final Placing handler = new Placing();
                handler.target = arena.allocate(1 << 16, 64);
                handler.targetView = handler.target.asByteBuffer();
                assertTrue(sender.send(sender.resolve(receiver.address()), LinkFrames.header(6, payload), HEADER,
                    payload));
                drain(receiver, handler, 1);
                return handler;
            }
        }
    }

    private static void ip(final String... args) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>();
        command.add("ip");
        command.addAll(List.of(args));
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            fail("ip " + String.join(" ", args) + ": " + out);
        }
    }

    @Test
    void shouldReceiveWholeAFrameWhoseTargetMemoryIsGone() {
        try (UdpLink sender = new UdpLink("udp:127.0.0.1"); UdpLink receiver = new UdpLink("udp:127.0.0.1")) {
            final Placing handler = new Placing();
            final Arena gone = Arena.ofShared();
            handler.target = gone.allocate(1 << 16, 64);
            handler.targetView = handler.target.asByteBuffer();
            gone.close(); // the kernel must never write there: the receive refuses to start, the usual one takes it
            final FrameGather payload = pattern(PAYLOAD, 9);
            assertTrue(sender.send(sender.resolve(receiver.address()), LinkFrames.header(4, payload), HEADER,
                payload));
            drain(receiver, handler, 1);

            assertEquals(0, handler.placedFrames.size());
            assertEquals(1, handler.whole.size());
            assertArrayEquals(payload.segment(0).toArray(ValueLayout.JAVA_BYTE),
                java.util.Arrays.copyOfRange(handler.whole.get(0), HEADER, HEADER + PAYLOAD));
            assertEquals(0, counter(receiver, "link.rx.placed"));
        }
    }
}
