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
    private static final CollectiveTuning TUNING = CollectiveTuning.DEFAULT.withTimeoutMs(20_000);

    @Test
    void exchangesCarryTheAcknowledgementsTheirMembersOwe() {
        final int ops = 400;
        try (Group g = new Group(2, new Configuration().collectives(TUNING)).joined()) {
            final MemoryRegion[] src = {g.region(0, 8), g.region(1, 8)};
            final MemoryRegion[] dst = {g.region(0, 16), g.region(1, 16)};
            exchange(g, src, dst, 300); // the mesh's first traffic (credits) out of the way, and the code compiled
            final long before = acksSent(g);
            exchange(g, src, dst, ops);
            final long standalone = acksSent(g) - before;
            // Each member's next message carries the acknowledgements it owes (one its peer asked for, or one whose
            // delay ran out while the member was away). With the poll's engine pass first, each of those left on its
            // own: 405 and 433 in two runs of this test, against 30 to 97 in three with the first messages first (the
            // rest are delayed acks that fell due while the one thread polled the other member).
            assertTrue(standalone < ops / 2, standalone + " acknowledgements sent on their own in " + ops
                + " exchanges");
            for (int i = 0; i < 2; i++) {
                for (int j = 0; j < 2; j++) {
                    assertEquals(1000L * j + ops, dst[i].segment().get(ValueLayout.JAVA_LONG, 8L * j),
                        "member " + i + ", block " + j);
                }
            }
        }
    }

    private static void exchange(final Group g, final MemoryRegion[] src, final MemoryRegion[] dst, final int ops) {
        for (int c = 1; c <= ops; c++) {
            for (int i = 0; i < 2; i++) {
                src[i].segment().set(ValueLayout.JAVA_LONG, 0, 1000L * i + c);
                g.cos[i].allgather(c, Group.ds(src[i]), Group.ds(dst[i]), 0);
            }
            g.expectAll(WcType.ALLGATHER, 16);
        }
    }

    private static long acksSent(final Group g) {
        return g.nics[0].counters().get("acks.sent") + g.nics[1].counters().get("acks.sent");
    }
}
