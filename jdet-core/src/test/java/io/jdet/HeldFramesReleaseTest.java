package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Frames a queue pair holds beyond a gap sit in its NIC's reorder pool (64 slots for every queue pair of the NIC):
 * a queue pair destroyed while it holds some, without going back to IDLE, must give their slots back, or after two
 * such queue pairs no other queue pair of the NIC could hold a frame again. (Each stream's share of the pool: a
 * lone stream takes at most 32, half of it; responses are held only while a read awaits one.)
 */
class HeldFramesReleaseTest {
    /** The most frames one stream holds beyond a gap: the width of the selective-ack field. */
    private static final int RANGE = 32;

    @Test
    void responsesHeldByADestroyedQueuePairGiveBackTheirSlots() {
        heldFramesOfDestroyedQueuePairsAreReleased(true);
    }

    @Test
    void requestsHeldByADestroyedQueuePairGiveBackTheirSlots() {
        heldFramesOfDestroyedQueuePairsAreReleased(false);
    }

    private static void heldFramesOfDestroyedQueuePairsAreReleased(final boolean responses) {
        try (HostileSetup s = new HostileSetup()) {
            QueuePair qp = s.qp();
            for (int round = 0; round < 2; round++) {
                awaitResponses(s, qp, responses);
                holdAFullRange(s, responses, round);
                qp.close(); // CONNECTED to ERROR: flushed, never reset
                qp = s.lo.pdA.createQp(QpCreate.of(s.lo.cqA, 4, 1));
                s.peer.startStreams(1, 1, 1, 1);
                s.peer.connect(qp);
            }
            awaitResponses(s, qp, responses);
            sendBeyondTheGap(s, responses, 2);
            Tests.await("the third queue pair holds its frame",
                () -> s.counter("rx.stashed") + s.counter("rx.out_of_order") == 2 * RANGE + 1);
            assertEquals(2 * RANGE + 1, s.counter("rx.stashed"), () -> s.lo.nicA.counters().toString());
            assertEquals(0, s.counter("rx.out_of_order"), "dropped for want of a pool slot");
            qp.close();
            s.assertNoEngineErrors();
        }
    }

    /** Responses beyond a gap are held only while one is owed: a read waits for its response. */
    private static void awaitResponses(final HostileSetup s, final QueuePair qp, final boolean responses) {
        if (responses) {
            qp.read(1, Loopback.sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0);
            s.peer.expect(Frame.OP_READ);
        }
    }

    private static void holdAFullRange(final HostileSetup s, final boolean responses, final int round) {
        for (int seq = 2; seq < 2 + RANGE; seq++) {
            sendBeyondTheGap(s, responses, seq);
        }
        Tests.await("the frames beyond the gap held", () -> s.counter("rx.stashed") == (round + 1L) * RANGE);
    }

    /** A frame at {@code seq} of the peer's response or request stream, where 1 is expected and never comes. */
    private static void sendBeyondTheGap(final HostileSetup s, final boolean responses, final int seq) {
        if (responses) {
            s.peer.response(Frame.OP_ATOMIC_RESP).seq(seq).flags(Frame.FLAG_LAST).send();
        } else {
            s.peer.request(Frame.OP_WRITE).seq(seq).flags(Frame.FLAG_LAST).send();
        }
    }
}
