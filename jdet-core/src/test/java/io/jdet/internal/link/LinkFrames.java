package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Frames for the link tests: a sealed header plus payload, and a handler that keeps copies of what arrives. */
final class LinkFrames {
    /** A header as long as the engine's, so that every link accepts it. */
    static final int HEADER = io.jdet.internal.wire.Frame.HEADER_LENGTH;

    private LinkFrames() {
    }

    /**
     * A header whose first byte is a tag and whose payload-length field is the payload's (the UDP link splits
     * datagrams into frames by it), sealed with the CRC of the header plus the payload.
     */
    static MemorySegment header(final int tag, final FrameGather payload) {
        final ByteBuffer view = ByteBuffer.allocateDirect(HEADER);
        final MemorySegment header = MemorySegment.ofBuffer(view);
        header.set(ValueLayout.JAVA_BYTE, 0, (byte) tag);
        header.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 6,
            (short) payload.totalLength());
        new FrameCrc().seal(header, view, HEADER, payload);
        return header;
    }

    /**
     * A header as {@link #header} makes it, but with an opcode, flags, and a payload-length field that may say less
     * than the payload holds (a protected frame's trailer follows its payload and is not counted there).
     */
    static MemorySegment header(final int opcode, final int flags, final int payloadLength,
                                final FrameGather bytesAfterHeader) {
        final ByteBuffer view = ByteBuffer.allocateDirect(HEADER);
        final MemorySegment header = MemorySegment.ofBuffer(view);
        final ValueLayout.OfShort u16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
        header.set(ValueLayout.JAVA_BYTE, io.jdet.internal.wire.Frame.OPCODE_OFFSET, (byte) opcode);
        header.set(u16, io.jdet.internal.wire.Frame.FLAGS_OFFSET, (short) flags);
        header.set(u16, io.jdet.internal.wire.Frame.PAYLOAD_LENGTH_OFFSET, (short) payloadLength);
        new FrameCrc().seal(header, view, HEADER, bytesAfterHeader);
        return header;
    }

    /** A gather list of one piece over the whole of a direct buffer filled with a byte. */
    static FrameGather payload(final int length, final int fill) {
        final ByteBuffer view = ByteBuffer.allocateDirect(length);
        final MemorySegment segment = MemorySegment.ofBuffer(view);
        segment.fill((byte) fill);
        final FrameGather gather = new FrameGather(1);
        gather.add(segment, view, 0, length);
        return gather;
    }

    /** The link's counters, by name ({@link Link#addCounters}). */
    static java.util.Map<String, Long> counters(final Link link) {
        final java.util.Map<String, Long> m = new java.util.HashMap<>();
        link.addCounters(m);
        return m;
    }

    /** Sends frame {@code tag} with {@code length} payload bytes of that value from one link to another. */
    static boolean send(final Link from, final Link to, final int tag, final int length) {
        final FrameGather payload = payload(length, tag);
        return from.send(from.resolve(to.address()), header(tag, payload), HEADER, payload);
    }

    /** Checks that the frames received are tags {@code first} on, with the payload lengths given. */
    static void assertFrames(final Received got, final int first, final int... lengths) {
        assertEquals(lengths.length, got.frames.size(), "frames handed over");
        for (int k = 0; k < lengths.length; k++) {
            final byte[] frame = got.frames.get(k);
            assertEquals(HEADER + lengths[k], frame.length, "frame " + k);
            assertEquals((byte) (first + k), frame[0], "frame " + k + " in order");
            for (int b = HEADER; b < frame.length; b++) {
                assertEquals((byte) (first + k), frame[b], "frame " + k + " byte " + b);
            }
        }
    }

    /**
     * On a link that stages a batch's frames for one slot (the fabric, shared memory): a push inside the batch
     * publishes what is staged, a push with nothing staged publishes nothing, and what follows is staged again until
     * the batch ends.
     */
    static void assertPushInsideABatch(final Link a, final Link b) {
        a.cork();
        assertTrue(send(a, b, 1, 8));
        assertTrue(send(a, b, 2, 8));
        assertTrue(send(a, b, 3, 8));
        final LinkFrames.Received got = new LinkFrames.Received();
        assertEquals(1, b.receive(got, 8), "the first frame alone; the others staged");
        a.push();
        assertEquals(1, b.receive(got, 8), "pushed inside the batch: one slot");
        a.push();
        assertEquals(0, b.receive(got, 8), "nothing staged, nothing pushed");
        assertTrue(send(a, b, 4, 8));
        assertEquals(0, b.receive(got, 8), "still inside the batch: staged again");
        a.uncork();
        assertEquals(1, b.receive(got, 8));
        assertFrames(got, 1, 8, 8, 8, 8);
    }

    /** What a link handed over: one copy per frame, with the peer handle. */
    static final class Received implements FrameHandler {
        final List<byte[]> frames = new ArrayList<>();
        final List<Long> peers = new ArrayList<>();

        @Override
        public void onFrame(final MemorySegment frame, final int length, final long peer) {
            frames.add(frame.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
            peers.add(peer);
        }
    }
}
