package io.jdet.collective;

import io.jdet.CollectiveTuning;
import io.jdet.Configuration;
import io.jdet.MemoryRegion;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The acknowledgement that ends a rendezvous rides on the receiver's next message to the writer when the next step
 * sends one: a 2-member all-reduce by recursive halving and doubling is two rendezvous exchanges, and the second
 * one's advertisement carries the first one's ack, since a member's second step no longer waits for its own first
 * writes to be acknowledged. Before, each of the four rendezvous of an operation drew an ack on its own (800 in 200
 * operations); now the last step's two do, and the first step's ride (353).
 */
class CollectiveRendezvousAcksTest {
    /** Every message by rendezvous. */
    private static final CollectiveTuning TUNING = CollectiveTuning.DEFAULT.withTimeoutMs(20_000)
        .withRendezvousBytes(1);
    private static final int COUNT = 1024;

    @Test
    void aStepsAdvertisementCarriesTheLastStepsAcknowledgement() {
        final int ops = 200;
        // Delayed acks never fall due, so only the acks a writer waits for are counted: 4 an operation before, 2 at
        // most now (those of the last step, which nothing of the step follows).
        final Configuration config = new Configuration().ackDelayUs(1_000_000).collectives(TUNING);
        try (Group g = new Group(2, config).joined()) {
            final MemoryRegion[] src = {g.region(0, 8L * COUNT), g.region(1, 8L * COUNT)};
            final MemoryRegion[] dst = {g.region(0, 8L * COUNT), g.region(1, 8L * COUNT)};
            int c = allreduce(g, src, dst, 0, 100);
            // The progress threads send an asked-for ack at once when the one thread is away for long (a descheduled
            // test thread on a loaded machine): the best of up to three blocks.
            long best = Long.MAX_VALUE;
            for (int block = 0; block < 3 && best >= 3L * ops; block++) {
                final long before = acksSent(g);
                c = allreduce(g, src, dst, c, ops);
                best = Math.min(best, acksSent(g) - before);
            }
            assertTrue(best < 3L * ops, best + " acknowledgements sent on their own in " + ops + " all-reduces");
            for (int i = 0; i < 2; i++) {
                for (int e = 0; e < COUNT; e++) {
                    assertEquals(2L * c + e + 1, dst[i].segment().getAtIndex(ValueLayout.JAVA_LONG, e),
                        "member " + i + ", element " + e);
                }
            }
        }
    }

    /** Runs {@code ops} all-reduces after the {@code done} ones; returns the count of them all. */
    private static int allreduce(final Group g, final MemoryRegion[] src, final MemoryRegion[] dst, final int done,
                                 final int ops) {
        for (int c = done + 1; c <= done + ops; c++) {
            for (int i = 0; i < 2; i++) {
                for (int e = 0; e < COUNT; e++) {
                    src[i].segment().setAtIndex(ValueLayout.JAVA_LONG, e, i == 0 ? c : c + e + 1);
                }
                g.cos[i].allreduce(c, Group.ds(src[i]), Group.ds(dst[i]), ReduceOp.SUM, ReduceType.INT64, 0);
            }
            g.expectAll(WcType.ALLREDUCE, 8L * COUNT);
        }
        return done + ops;
    }

    private static long acksSent(final Group g) {
        return g.nics[0].counters().get("acks.sent") + g.nics[1].counters().get("acks.sent");
    }
}
