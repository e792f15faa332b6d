package io.jdet.collective;

import io.jdet.CollectiveTuning;
import io.jdet.Configuration;
import io.jdet.MemoryRegion;
import io.jdet.WcType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A collective posted to an idle group starts before the next poll's engine pass: its first round's messages carry
 * the acknowledgements the member owes its peers, which that pass would otherwise send on their own.
 */
class CollectiveStartTest {
    /**
     * 4 slots per peer: every second send is signaled, and a signaled send asks its peer for an immediate ack (one
     * the peer's next pass sends, or its next message carries).
     */
    private static final CollectiveTuning TUNING = CollectiveTuning.DEFAULT.withTimeoutMs(20_000)
        .withSlots(CollectiveTuning.DEFAULT.slotBytes(), 4);

    @Test
    void exchangesCarryTheAcknowledgementsTheirMembersOwe() {
        final int ops = 400;
        // Delayed acks never fall due (each rides the member's next message), so that what is counted does not
        // depend on how fast the exchanges run: only the acks the peer asked for, which the pass sent on their own
        // (200 to 277 per block, loaded machine or not) until the first messages left before it.
        final Configuration config = new Configuration().ackDelayUs(1_000_000).collectives(TUNING);
        try (Group g = new Group(2, config).joined()) {
            final MemoryRegion[] src = {g.region(0, 8), g.region(1, 8)};
            final MemoryRegion[] dst = {g.region(0, 16), g.region(1, 16)};
            int c = exchange(g, src, dst, 0, 300); // the mesh's first traffic (credits) out of the way, code compiled
            // The progress threads still send an asked-for ack at once when the one thread is away for long (a
            // descheduled test thread on a loaded machine: up to 114 in a block with two CPU hogs on 2 vCPUs, 0 to
            // 20 unloaded): the best of up to three blocks.
            long best = Long.MAX_VALUE;
            for (int block = 0; block < 3 && best >= ops / 4; block++) {
                final long before = acksSent(g);
                c = exchange(g, src, dst, c, ops);
                best = Math.min(best, acksSent(g) - before);
            }
            assertTrue(best < ops / 4, best + " acknowledgements sent on their own in " + ops + " exchanges");
            for (int i = 0; i < 2; i++) {
                for (int j = 0; j < 2; j++) {
                    assertEquals(1000L * j + c, dst[i].segment().get(ValueLayout.JAVA_LONG, 8L * j),
                        "member " + i + ", block " + j);
                }
            }
        }
    }

    /** Runs {@code ops} exchanges after the {@code done} ones; returns the count of them all. */
    private static int exchange(final Group g, final MemoryRegion[] src, final MemoryRegion[] dst, final int done,
                                final int ops) {
        for (int c = done + 1; c <= done + ops; c++) {
            for (int i = 0; i < 2; i++) {
                src[i].segment().set(ValueLayout.JAVA_LONG, 0, 1000L * i + c);
                g.cos[i].allgather(c, Group.ds(src[i]), Group.ds(dst[i]), 0);
            }
            g.expectAll(WcType.ALLGATHER, 16);
        }
        return done + ops;
    }

    private static long acksSent(final Group g) {
        return g.nics[0].counters().get("acks.sent") + g.nics[1].counters().get("acks.sent");
    }
}
