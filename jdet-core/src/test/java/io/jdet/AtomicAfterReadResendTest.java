package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * PROTOCOL 6.7: "a read answered before an atomic never returns what the atomic wrote". The atomic now runs as its
 * response is first sent, once the earlier read's frames left once; but a read response frame that is lost is
 * resent from the memory as it is then, after the atomic ran, so the read still returns what the atomic wrote.
 */
@Timeout(60)
class AtomicAfterReadResendTest {
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test
    void aResentReadResponseMustNotCarryWhatALaterAtomicWrote() {
        final Configuration c = new Configuration().minRtoUs(20_000).maxRtoUs(20_000).ackTimeoutMs(10_000);
        try (HostileSetup s = new HostileSetup(c)) {
            s.lo.bufA.set(ValueLayout.JAVA_LONG, 0, 7);
            // a read of the word, then a fetch-and-add on it; the peer acknowledges no response (the first read
            // response is "lost")
            s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(8)
                .rspAck(0).send();
            s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(8)
                .operands(1L << 40, 0).rspAck(0).send();
            final HostilePeer.Received first = s.peer.expect(Frame.OP_READ_RESP);
            assertEquals(7, first.frame().get(LE_LONG, Frame.HEADER_LENGTH), "the first answer of the read");
            // the read's response is lost: only its resend reaches the requester
            final HostilePeer.Received resent = s.peer.expect("the read's response resent",
                r -> r.opcode() == Frame.OP_READ_RESP && r.seq() == first.seq());
            final long original = s.peer.received().stream().filter(r -> r.opcode() == Frame.OP_ATOMIC_RESP)
                .findFirst().map(HostilePeer.Received::operand1).orElse(-1L);
            assertEquals(7, resent.frame().get(LE_LONG, Frame.HEADER_LENGTH),
                "the read (before the add) returned what the later add wrote; the add reported original "
                    + original);
            s.peer.ack(); // the read's response arrived at last: the add runs, once, on 7
            assertEquals(7, s.peer.expect(Frame.OP_ATOMIC_RESP).operand1());
            assertEquals(7 + (1L << 40), s.lo.bufA.get(ValueLayout.JAVA_LONG, 0));
        }
    }
}
