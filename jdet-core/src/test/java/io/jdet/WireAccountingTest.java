package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the victim's control frames carry and what its counters report, checked against the frames a
 * {@link HostilePeer} actually received: every ACK names the last request and response received in order and the
 * requests held beyond a gap; a DISCONNECT carries the same acknowledgements; and {@code frames.sent},
 * {@code bytes.sent}, {@code acks.sent}, {@code naks.sent} and {@code disconnects.sent} count exactly what went on
 * the fabric.
 */
@Timeout(60)
class WireAccountingTest {

    private static HostilePeer.Out send(final HostileSetup s, final byte[] payload) {
        return s.peer.request(Frame.OP_SEND).flags(Frame.FLAG_LAST | Frame.FLAG_FORCE_ACK).length(payload.length)
            .payload(payload);
    }

    @Test
    void shouldAcknowledgeRequestsHeldBeyondAGapSelectivelyAndAtOnce() {
        try (HostileSetup s = new HostileSetup(new Configuration().ackDelayUs(1_000_000))) {
            for (int i = 0; i < 3; i++) {
                s.qp().recv(i, Loopback.sge(s.lo.mrA, 16L * i, 16), 1);
            }
            final int first = send(s, new byte[] {1}).msgId(0).send();
            final HostilePeer.Out second = send(s, new byte[] {2}).msgId(1); // held back: the gap
            final int third = send(s, new byte[] {3}).msgId(2).send();
            final HostilePeer.Received held = s.peer.expect("an ACK naming the held request",
                r -> r.opcode() == Frame.OP_ACK && Frame.sack(r.frame()) != 0);
            assertEquals(first, Frame.reqAck(held.frame()), held.toString());
            assertEquals(1, Frame.sack(held.frame()), "bit 0: request ack + 2 = " + third);
            assertEquals(1, s.counter("rx.stashed"));
            second.send();
            final HostilePeer.Received all = s.peer.expect("an ACK of all three",
                r -> r.opcode() == Frame.OP_ACK && Frame.reqAck(r.frame()) == third);
            assertEquals(0, Frame.sack(all.frame()), all.toString());
            final List<WorkCompletion> wcs = Tests.pollUntil(s.lo.cqA, 3);
            for (int i = 0; i < 3; i++) {
                assertEquals(i, wcs.get(i).id());
                assertEquals(i + 1, s.lo.bufA.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 16L * i));
            }
            s.assertConnected();
        }
    }

    @Test
    void shouldCountExactlyTheFramesItPutOnTheFabric() {
        // No retransmission timer within the test: every frame is sent once.
        try (HostileSetup s = new HostileSetup(new Configuration().minRtoUs(3_000_000).maxRtoUs(3_000_000))) {
            s.qp().recv(0, Loopback.sge(s.lo.mrA, 0, 64), 1);
            int peerFrames = 0;
            send(s, new byte[] {1, 2, 3}).send();
            peerFrames++;
            s.peer.expect(Frame.OP_ACK);
            s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(100).send();
            peerFrames++;
            s.peer.expect(Frame.OP_READ_RESP);
            s.qp().send(1, Loopback.sge(s.lo.mrA, 0, 40), 1, 0, 0);
            s.peer.expect(Frame.OP_SEND);
            s.peer.ack();
            peerFrames++;
            Tests.pollUntil(s.lo.cqA, 2);
            // A write to no region: refused with a NAK that acknowledges the send and the read before it.
            final int refused = s.peer.request(Frame.OP_WRITE).address(8).key(0x12345).length(1)
                .flags(Frame.FLAG_LAST).payload(new byte[1]).send();
            peerFrames++;
            final HostilePeer.Received nak = s.peer.expect(Frame.OP_NAK);
            assertEquals(refused, nak.seq());
            assertEquals(refused - 1, Frame.reqAck(nak.frame()), nak.toString());
            assertEquals(0, Frame.rspAck(nak.frame()), "the peer sent no response");
            Loopback.awaitState(s.qp(), QpState.ERROR);

            final List<HostilePeer.Received> got = s.peer.received();
            final java.util.Map<String, Long> c = s.lo.nicA.counters();
            assertEquals(got.size(), c.get("frames.sent"), c.toString());
            assertEquals(count(got, Frame.OP_ACK), c.get("acks.sent"), c.toString());
            assertEquals(count(got, Frame.OP_NAK), c.get("naks.sent"), c.toString());
            assertEquals(got.stream().mapToLong(HostilePeer.Received::payloadLength).sum(), c.get("bytes.sent"));
            assertEquals(140, c.get("bytes.sent"), "100 read, 40 sent");
            assertEquals(peerFrames, c.get("frames.received"), c.toString());
            assertEquals(0, c.get("frames.retransmitted"), c.toString());
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldAcknowledgeWhatItReceivedInTheDisconnectAndCountIt() {
        try (HostileSetup s = new HostileSetup()) {
            s.qp().recv(0, Loopback.sge(s.lo.mrA, 0, 64), 1);
            final int request = send(s, new byte[] {1, 2, 3}).send();
            Tests.pollUntil(s.lo.cqA, 1);
            s.qp().read(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            final HostilePeer.Received read = s.peer.expect(Frame.OP_READ);
            final int response = s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId())
                .length(8).payload(new byte[8]).send();
            Tests.pollUntil(s.lo.cqA, 1);
            s.qp().modify(new QpModify().state(QpState.DISCONNECT));
            final HostilePeer.Received d = s.peer.expect(Frame.OP_DISCONNECT);
            assertEquals(request, Frame.reqAck(d.frame()), d.toString());
            assertEquals(response, Frame.rspAck(d.frame()), d.toString());
            final java.util.Map<String, Long> c = s.lo.nicA.counters();
            assertEquals(1, c.get("disconnects.sent"), c.toString());
            assertEquals(s.peer.received().size(), c.get("frames.sent"), c.toString());
            s.assertNoEngineErrors();
        }
    }

    private static long count(final List<HostilePeer.Received> frames, final int opcode) {
        return frames.stream().filter(r -> r.opcode() == opcode).count();
    }
}
