package io.jdet;

import io.jdet.internal.verbs.NicImpl;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When the engine asks the UDP link to look at each datagram's header ({@code FrameHandler#placing}): only while the
 * next fragment of a long message can be received into place. Fragments of a link whose MTU is an Ethernet's 1500
 * bytes are far below {@code Responder.PLACE_MIN}, a target of short pieces holds no fragment whole, and a protected
 * connection never places: none of them ever places, and a look at every datagram would cost a system call each and
 * the batched receive (16 datagrams a call) for the whole message. The victim is NIC A of a {@link HostileSetup},
 * whose peer sends the first fragment of each message by hand, or NIC B of a sealed {@link Loopback}; the hint is
 * read once the engine processed the fragment (on the fabric, which never looks, nothing clears it).
 */
@Timeout(60)
class PlacementHintTest {
    /** The payload of a full frame over a 1500-byte MTU: 1500 - 20 (IPv4) - 8 (UDP) - 80 (header). */
    private static final int SMALL_FRAGMENT = 1_392;
    /** A fragment long enough to place. */
    private static final int LARGE_FRAGMENT = 16_384;
    private static final int MESSAGE = 1 << 20;

    private static HostileSetup victim() {
        return new HostileSetup(new Loopback.Options().bufferBytes(2L * MESSAGE).sges(16).connect(false));
    }

    private static boolean placing(final HostileSetup s) {
        return ((NicImpl) s.lo.nicA).placing();
    }

    /** Waits until the victim's engine processed {@code frames} frames (its counters are read under its lock). */
    private static void processed(final HostileSetup s, final long frames) {
        Tests.await(frames + " frames processed", () -> s.counter("frames.received") >= frames);
    }

    private static void writeFragment(final HostileSetup s, final int offset, final int n) {
        s.peer.request(Frame.OP_WRITE).address(s.lo.bufA.address() + offset).key(s.lo.mrA.rKey()).length(MESSAGE)
            .offset(offset).payload(new byte[n]).send();
    }

    @Test
    void shouldNotLookWhileAWriteArrivesInFragmentsTooShortToPlace() {
        try (HostileSetup s = victim()) {
            writeFragment(s, 0, SMALL_FRAGMENT);
            processed(s, 1);
            assertFalse(placing(s), "the next fragment of 1392 bytes can never be placed");

            writeFragment(s, SMALL_FRAGMENT, LARGE_FRAGMENT);
            processed(s, 2);
            assertTrue(placing(s), "a fragment of 16 KiB can be placed");
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldNotLookWhileAProtectedWriteArrives() {
        try (Loopback pair = Loopback.open(new Loopback.Options().bufferBytes(2L * MESSAGE).connect(false))) {
            pair.nicA.connectionManager().security(Security.of(Security.Mode.AUTH));
            pair.nicB.connectionManager().security(Security.of(Security.Mode.AUTH));
            pair.connectThroughCm(0x91C);
            pair.qpA.write(1, Loopback.sge(pair.mrA, 0, MESSAGE), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            Tests.expectSuccess(pair.cqA, 1); // B acknowledged the last fragment: it processed every one
            assertEquals(0, pair.nicB.counters().get(Tests.ENGINE_ERRORS)); // (under B's lock: its state is seen)
            assertFalse(((NicImpl) pair.nicB).placing(), "a protected frame is never placed");
        }
    }

    @Test
    void shouldNotLookWhileASendArrivesIntoPiecesTooShortToHoldAFragment() {
        try (HostileSetup s = victim()) {
            final DataSegment[] pages = new DataSegment[16];
            for (int i = 0; i < pages.length; i++) {
                pages[i] = Loopback.sge(s.lo.mrA, i * 4096L, 4096)[0];
            }
            s.lo.qpA.recv(1, pages, pages.length);
            s.peer.request(Frame.OP_SEND).length(pages.length * 4096).payload(new byte[LARGE_FRAGMENT]).send();
            processed(s, 1);
            assertFalse(placing(s), "no 4 KiB piece holds the next fragment");

            s.peer.request(Frame.OP_SEND).flags(Frame.FLAG_LAST).length(pages.length * 4096).offset(LARGE_FRAGMENT)
                .payload(new byte[pages.length * 4096 - LARGE_FRAGMENT]).send();
            assertEquals(pages.length * 4096, s.expectCompletion(1, WcStatus.SUCCESS).length());

            s.lo.qpA.recv(2, Loopback.sge(s.lo.mrA, 0, MESSAGE), 1);
            s.peer.request(Frame.OP_SEND).msgId(1).length(MESSAGE).payload(new byte[LARGE_FRAGMENT]).send();
            processed(s, 3);
            assertTrue(placing(s), "one piece of 1 MiB holds the next fragment");
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldNotLookWhileAReadResponseArrivesInFragmentsTooShortToPlace() {
        try (HostileSetup s = victim()) {
            s.lo.qpA.read(1, Loopback.sge(s.lo.mrA, 0, MESSAGE), 1, 0x1000, 0x77, 0);
            final HostilePeer.Received read = s.expectRequest(Frame.OP_READ);
            s.peer.response(Frame.OP_READ_RESP).msgId(read.msgId()).length(MESSAGE)
                .payload(new byte[SMALL_FRAGMENT]).send();
            processed(s, 1);
            assertFalse(placing(s), "the next response fragment of 1392 bytes can never be placed");

            s.peer.response(Frame.OP_READ_RESP).msgId(read.msgId()).length(MESSAGE).offset(SMALL_FRAGMENT)
                .payload(new byte[LARGE_FRAGMENT]).send();
            processed(s, 2);
            assertTrue(placing(s), "a response fragment of 16 KiB can be placed");
            s.assertNoEngineErrors();
        }
    }
}
