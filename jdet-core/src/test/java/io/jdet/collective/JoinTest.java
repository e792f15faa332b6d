package io.jdet.collective;

import io.jdet.Collective;
import io.jdet.CollectiveTuning;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Group formation, from an audit: groups whose tags differ only in the arrangement of their parts join through
 * one root NIC at once (their roots listened on one connection manager service, and the second failed with
 * EEXIST); a join that cannot set up its own memory fails as this member's own error (LOCAL_OP_ERR), and a member
 * whose root goes away during the join reports a lost connection (RETRY_EXCEEDED), as the Collective javadoc says
 * (both were REMOTE_OP_ERR).
 */
@Timeout(90)
class JoinTest {
    private static Configuration quick() {
        return new Configuration().ackTimeoutMs(300).collectives(CollectiveTuning.DEFAULT.withTimeoutMs(2000));
    }

    @Test
    void shouldJoinTwoGroupsWhoseTagsDifferOnlyInTheOrderOfTheirParts() {
        final long a = 0x123L << 24 | 0x456;
        final long b = 0x456L << 24 | 0x123;
        try (Group g = new Group(2, quick().collectives(CollectiveTuning.DEFAULT.withTimeoutMs(20_000)))) {
            final Collective[] second = {g.pds[0].createCollective(g.cqs[0]), g.pds[1].createCollective(g.cqs[1])};
            try {
                for (int i = 0; i < 2; i++) {
                    g.cos[i].join(10 + i, a, 2, i, g.nics[0].address(), 0);
                    second[i].join(20 + i, b, 2, i, g.nics[0].address(), 0);
                }
                for (int round = 0; round < 2; round++) {
                    for (final WorkCompletion wc : each(g.cqs, 30_000)) {
                        assertEquals(WcType.JOIN, wc.type(), wc.toString());
                        assertEquals(WcStatus.SUCCESS, wc.status(), wc + " " + g.cos[0] + " " + second[0]);
                    }
                }
            } finally {
                second[0].close();
                second[1].close();
            }
        }
    }

    @Test
    void shouldFailAJoinThatCannotRegisterItsOwnMemoryAsThisMembersOwnError() {
        try (Group g = new Group(2, quick().maxRegisteredBytes(64 * 1024))) {
            for (int i = 0; i < 2; i++) {
                g.cos[i].join(1, g.tag, 2, i, g.nics[0].address(), 0);
            }
            for (final WorkCompletion wc : each(g.cqs, 20_000)) {
                assertEquals(WcStatus.LOCAL_OP_ERR, wc.status(), wc.toString());
            }
        }
    }

    @Test
    void shouldReportALostConnectionWhenTheRootLeavesDuringTheJoin() throws InterruptedException {
        try (Group g = new Group(3, quick())) {
            g.cos[0].join(1, g.tag, 3, 0, g.nics[0].address(), 0);
            g.cos[1].join(1, g.tag, 3, 1, g.nics[0].address(), 0); // rank 2 never comes: the join waits
            Thread.sleep(200);
            g.cos[0].close();
            final WorkCompletion wc = each(new CompletionQueue[] {g.cqs[1]}, 20_000)[0];
            assertEquals(WcStatus.RETRY_EXCEEDED, wc.status(), wc.toString());
        }
    }

    /** One completion from each queue, within {@code ms}. */
    private static WorkCompletion[] each(final CompletionQueue[] cqs, final long ms) {
        final WorkCompletion[] got = new WorkCompletion[cqs.length];
        int have = 0;
        final long deadline = System.nanoTime() + ms * 1_000_000L;
        while (have < cqs.length) {
            for (int i = 0; i < cqs.length; i++) {
                final WorkCompletion[] w = {new WorkCompletion()};
                if (got[i] == null && cqs[i].poll(w) == 1) {
                    got[i] = w[0];
                    have++;
                }
            }
            if (System.nanoTime() > deadline) {
                fail("no completion within " + ms + " ms: " + java.util.Arrays.toString(got));
            }
            Thread.onSpinWait();
        }
        return got;
    }
}
