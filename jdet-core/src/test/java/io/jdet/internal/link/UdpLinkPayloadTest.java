package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The UDP link never hands the kernel the address of payload memory: a payload whose arena was closed after the
 * frame was sealed makes the send fail in Java, where {@code sendmsg} would have read the freed memory.
 */
@Timeout(30)
class UdpLinkPayloadTest {
    private static final int HEADER = 80;
    private static final int PAYLOAD = 1000;
    private static final long MARK = 0x0123_4567_89ab_cdefL;

    @Test
    void shouldRefuseToSendPayloadWhoseArenaIsClosed() {
        try (UdpLink sender = new UdpLink("udp:127.0.0.1"); UdpLink receiver = new UdpLink("udp:127.0.0.1");
             Arena frames = Arena.ofShared()) {
            final long peer = sender.resolve(receiver.address());
            final MemorySegment header = frames.allocate(HEADER, 8);
            // The payload-length field: the link splits datagrams into frames by it.
            header.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 6,
                (short) PAYLOAD);
            final AtomicInteger received = new AtomicInteger();
            final AtomicLong firstPayloadLong = new AtomicLong();
            final FrameHandler count = (frame, length, from) -> {
                received.incrementAndGet();
                firstPayloadLong.set(frame.get(ValueLayout.JAVA_LONG_UNALIGNED, HEADER));
            };

            final Arena payloadArena = Arena.ofShared();
            final MemorySegment payload = payloadArena.allocate(256 << 10, 64); // large: unmapped when freed
            payload.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, MARK);
            final FrameGather gather = new FrameGather(1);
            gather.add(payload, payload.asByteBuffer(), 0, PAYLOAD);

            seal(header, gather);
            assertTrue(sender.send(peer, header, HEADER, gather), "a live payload goes out");
            Tests.await("the first frame", () -> receiver.receive(count, 16) >= 0 && received.get() > 0);
            assertEquals(MARK, firstPayloadLong.get(), "the payload arrived intact");

            seal(header, gather);
            payloadArena.close(); // after the CRC pass, before the send: the application freed the memory
            assertThrows(IllegalStateException.class, () -> sender.send(peer, header, HEADER, gather));
            receiver.receive(count, 16);
            assertEquals(1, received.get(), "nothing was sent from freed memory");
        }
    }

    private static void seal(final MemorySegment header, final FrameGather gather) {
        new FrameCrc().seal(header, header.asByteBuffer(), HEADER, gather);
    }
}
