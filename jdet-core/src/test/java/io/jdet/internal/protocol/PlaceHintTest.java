package io.jdet.internal.protocol;

import io.jdet.internal.verbs.NicImpl;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Loopback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Once a long message arrives over UDP, the link keeps looking for fragments to receive straight into place across
 * the short frames that come between two long messages (a collective's acknowledgements, grants and first
 * fragments), and stops after {@link ProtocolNic#PLACE_MISSES} looks in a row found none, so that a stream of short
 * messages goes back to the batch receive.
 */
@Timeout(30)
class PlaceHintTest {

    @Test
    void theLinkKeepsLookingAcrossSevenShortFramesAndStopsAtTheEighth() {
        try (Loopback pair = Loopback.open(new Loopback.Options().nic("udp:127.0.0.1"));
             Arena arena = Arena.ofConfined()) {
            final NicImpl nic = (NicImpl) pair.nicB; // idle: no frame arrives to move the hint meanwhile
            final ProtocolNic engine = nic;
            final MemorySegment ack = arena.allocate(Frame.HEADER_LENGTH);
            Frame.writeBase(ack, Frame.OP_ACK, 0, 0, pair.qpB.number(), pair.qpA.number(), 0, 0, 0, 0);
            final FrameGather target = new FrameGather(1);
            final long peer = 1;
            assertFalse(nic.placing(), "nothing long arrived yet");
            engine.longMessageContinues();
            for (int look = 1; look < ProtocolNic.PLACE_MISSES; look++) {
                assertEquals(0, nic.placement(ack, Frame.HEADER_LENGTH, peer, target));
                assertTrue(nic.placing(), "still looking after " + look + " short frames");
            }
            assertEquals(0, nic.placement(ack, Frame.HEADER_LENGTH, peer, target));
            assertFalse(nic.placing(), "stopped after " + ProtocolNic.PLACE_MISSES);
            assertTrue(ProtocolNic.PLACE_MISSES >= 8, "more than a collective exchange puts between two messages");
            engine.longMessageContinues();
            assertTrue(nic.placing(), "the next long message starts looking again");
        }
    }
}
