package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The NIC's reorder pool (64 frames held beyond gaps, shared by its queue pairs) stays shared: a connected peer
 * that leaves gaps on purpose, sending 32 requests and 32 responses beyond them, cannot take every slot, because a
 * response is held only while a read or atomic awaits one and a stream holds fewer frames than the pool has free
 * (beyond a minimum of 8). Another connection's out-of-order frame is then still held for selective repair rather
 * than dropped until its sender's retransmission timeout (an audit: the hog held all 64, for good).
 */
@Timeout(60)
class ReorderPoolShareTest {
    @Test
    void shouldLeaveAnotherConnectionRoomToHoldAFrameBeyondItsGap() {
        try (Loopback lo = Loopback.open(new Loopback.Options().connect(false));
             HostilePeer hog = HostilePeer.on(lo.nicA); HostilePeer honest = HostilePeer.on(lo.nicA)) {
            hog.connect(lo.qpA);
            final QueuePair other = lo.pdA.createQp(new QpCreate(lo.cqA, lo.cqA, 64, 64, 4, 4, 4, 4));
            honest.connect(other);
            other.recv(1, Loopback.sge(lo.mrA, 0, 64), 1);
            for (int seq = 2; seq <= 33; seq++) {
                hog.request(Frame.OP_SEND).seq(seq).length(1 << 20).offset(0).payload(new byte[16]).send();
                hog.response(Frame.OP_READ_RESP).seq(seq).msgId(0).length(8).payload(new byte[8]).send();
            }
            Tests.await("the hog's frames taken in", () -> stashed(lo) + outOfOrder(lo) == 64);
            assertTrue(stashed(lo) <= 32, "held for the hog: " + stashed(lo) + " (no read awaits a response)");
            final long held = stashed(lo);
            final long dropped = outOfOrder(lo);
            honest.request(Frame.OP_SEND).seq(2).flags(Frame.FLAG_LAST).length(8).payload(new byte[8]).send();
            Tests.await("the honest frame taken in", () -> stashed(lo) + outOfOrder(lo) == held + dropped + 1);
            assertEquals(held + 1, stashed(lo), "the other connection's frame beyond its gap is held");
            assertEquals(QpState.CONNECTED, other.query().state());
            Tests.assertEngineHealthy(lo.nicA);
        }
    }

    /** Two streams of requests beyond their gaps: the first may take 32 slots, the second only 16 of the rest. */
    @Test
    void shouldKeepRoomWhenOnePeerFillsTwoQueuePairs() {
        try (Loopback lo = Loopback.open(new Loopback.Options().connect(false));
             HostilePeer hog = HostilePeer.on(lo.nicA); HostilePeer hog2 = HostilePeer.on(lo.nicA);
             HostilePeer honest = HostilePeer.on(lo.nicA)) {
            hog.connect(lo.qpA);
            hog2.connect(lo.pdA.createQp(new QpCreate(lo.cqA, lo.cqA, 64, 64, 4, 4, 4, 4)));
            final QueuePair other = lo.pdA.createQp(new QpCreate(lo.cqA, lo.cqA, 64, 64, 4, 4, 4, 4));
            honest.connect(other);
            other.recv(1, Loopback.sge(lo.mrA, 0, 64), 1);
            for (int seq = 2; seq <= 33; seq++) {
                hog.request(Frame.OP_SEND).seq(seq).length(1 << 20).offset(0).payload(new byte[16]).send();
            }
            Tests.await("the first stream's frames taken in", () -> stashed(lo) + outOfOrder(lo) == 32);
            for (int seq = 2; seq <= 33; seq++) {
                hog2.request(Frame.OP_SEND).seq(seq).length(1 << 20).offset(0).payload(new byte[16]).send();
            }
            Tests.await("the hog's frames taken in", () -> stashed(lo) + outOfOrder(lo) == 64);
            assertEquals(48, stashed(lo), "32 for the first stream, 16 (half of what was left) for the second");
            honest.request(Frame.OP_SEND).seq(2).flags(Frame.FLAG_LAST).length(8).payload(new byte[8]).send();
            Tests.await("the honest frame taken in", () -> stashed(lo) + outOfOrder(lo) == 65);
            assertEquals(49, stashed(lo), "the other connection's frame beyond its gap is held");
            Tests.assertEngineHealthy(lo.nicA);
        }
    }

    private static long stashed(final Loopback lo) {
        return lo.nicA.counters().get("rx.stashed");
    }

    private static long outOfOrder(final Loopback lo) {
        return lo.nicA.counters().get("rx.out_of_order");
    }
}
