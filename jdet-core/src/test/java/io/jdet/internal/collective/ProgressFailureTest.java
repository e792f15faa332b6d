package io.jdet.internal.collective;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CollectiveTuning;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A throwable inside a member's progress (here an {@link OutOfMemoryError} from its scratch memory, as
 * {@code Arena.allocate} raises) fails the group: the poll that ran it does not throw, the collective completes with
 * LOCAL_OP_ERR, never later with a SUCCESS it did not earn, and the other member fails instead of waiting forever.
 */
@Timeout(60)
class ProgressFailureTest {
    private static final int P = 2;

    @Test
    void anErrorInsideProgressFailsTheGroupAndNeverCompletesTheCollectiveSuccessfully() {
        final Configuration c = new Configuration().jmx(false).ackTimeoutMs(300)
            .collectives(CollectiveTuning.DEFAULT.withTimeoutMs(2000));
        try (Det det = Det.open(c); Arena arena = Arena.ofShared()) {
            final EventQueue events = det.createEvent(null);
            final Nic[] nics = new Nic[P];
            final ProtectionDomain[] pds = new ProtectionDomain[P];
            final CompletionQueue[] cqs = new CompletionQueue[P];
            final Collective[] cos = new Collective[P];
            for (int i = 0; i < P; i++) {
                nics[i] = det.openNic("loop:progress-failure", events);
                pds[i] = nics[i].allocPd();
                cqs[i] = nics[i].createCq(64, null);
                cos[i] = pds[i].createCollective(cqs[i]);
            }
            for (int i = 0; i < P; i++) {
                cos[i].join(1, 0x5EED_0001L, P, i, nics[0].address(), 0);
            }
            for (final WorkCompletion wc : awaitAll(cqs)) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            ((CollectiveImpl) cos[1]).scratchSource = (schedule, bytes) -> {
                throw new OutOfMemoryError("simulated: no memory for " + bytes + " bytes of scratch");
            };
            final MemoryRegion[] mr = new MemoryRegion[P];
            for (int i = 0; i < P; i++) {
                mr[i] = pds[i].regMr(arena.allocate(64, 8), Access.LOCAL_READ | Access.LOCAL_WRITE);
                mr[i].segment().set(ValueLayout.JAVA_LONG, 0, 10 + i);
            }
            cos[0].reduce(3, 0, null, new DataSegment(mr[0].address(), 64, mr[0].lKey()), ReduceOp.SUM,
                ReduceType.INT64, 0);
            cos[1].reduce(3, 0, new DataSegment(mr[1].address(), 64, mr[1].lKey()), null, ReduceOp.SUM,
                ReduceType.INT64, 0);
            final WorkCompletion[] got = awaitAll(cqs); // a poll that threw would fail the test here
            assertEquals(WcType.REDUCE, got[1].type());
            assertEquals(WcStatus.LOCAL_OP_ERR, got[1].status(), got[1].toString());
            assertNotEquals(WcStatus.SUCCESS, got[0].status(), "the root's sum lacks member 1: " + got[0]);
            final EventRecord rec = new EventRecord();
            boolean coError = false;
            while (events.pending() > 0) {
                events.waitOn(0, rec);
                coError |= rec.code() == EventCode.CO_ERROR && rec.handle() == cos[1];
            }
            assertTrue(coError, "member 1 raised CO_ERROR");
            for (final Collective co : cos) {
                co.close();
            }
        }
    }

    private static WorkCompletion[] awaitAll(final CompletionQueue[] cqs) {
        final WorkCompletion[] got = new WorkCompletion[cqs.length];
        final long deadline = System.nanoTime() + 20_000_000_000L;
        int have = 0;
        while (have < cqs.length) {
            for (int i = 0; i < cqs.length; i++) {
                final WorkCompletion[] one = {new WorkCompletion()};
                if (got[i] == null && cqs[i].poll(one) == 1) {
                    got[i] = one[0];
                    have++;
                }
            }
            if (System.nanoTime() > deadline) {
                fail("only " + have + " of " + cqs.length + " members completed");
            }
        }
        return got;
    }
}
