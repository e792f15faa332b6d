package io.jdet.systest;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A collective group's data path allocates nothing in steady state either: one thread drives three members on the
 * in-process fabric through a mix of collectives (a broadcast, an allreduce, a vector allgather, an alltoall, a
 * barrier), with segments that start inside their regions, and after a warm-up its allocation counter stays where
 * it was (the quietest of a few windows counts: {@link AllocationWindows}).
 */
@Timeout(120)
class CollectiveAllocationTest {
    private static final int MEMBERS = 3;
    private static final int WARMUP = 10_000;
    private static final int MEASURED = 1_000;
    private static final int WINDOWS = 3;
    private static final int BLOCK = 64;

    @Test
    void postingAndPollingCollectivesAllocatesNothing() {
        try (Det det = Det.open(new Configuration().jmx(false)); Arena arena = Arena.ofShared()) {
            final String fabric = "loop:collective-alloc-" + ProcessHandle.current().pid();
            final CompletionQueue[] cqs = new CompletionQueue[MEMBERS];
            final Collective[] cos = new Collective[MEMBERS];
            final DataSegment[] src = new DataSegment[MEMBERS];
            final DataSegment[] dst = new DataSegment[MEMBERS];
            final DataSegment[] reduced = new DataSegment[MEMBERS];
            final DataSegment[] exchanged = new DataSegment[MEMBERS];
            final DataSegment[][] dstV = new DataSegment[MEMBERS][MEMBERS];
            final Nic[] nics = new Nic[MEMBERS];
            for (int i = 0; i < MEMBERS; i++) {
                nics[i] = det.openNic(fabric, null);
                final ProtectionDomain pd = nics[i].allocPd();
                cqs[i] = nics[i].createCq(64, null);
                cos[i] = pd.createCollective(cqs[i]);
                final MemoryRegion mr = pd.regMr(arena.allocate(16 + BLOCK * (2L + 2 * MEMBERS), 64),
                    Access.LOCAL_READ | Access.LOCAL_WRITE);
                src[i] = new DataSegment(mr.address() + 16, BLOCK, mr.lKey());
                dst[i] = new DataSegment(mr.address() + 16 + BLOCK, BLOCK * MEMBERS, mr.lKey());
                reduced[i] = new DataSegment(mr.address() + 16 + BLOCK, BLOCK, mr.lKey());
                exchanged[i] = new DataSegment(mr.address() + 16 + BLOCK * (1L + MEMBERS), BLOCK * MEMBERS, mr.lKey());
                for (int j = 0; j < MEMBERS; j++) {
                    dstV[i][j] = new DataSegment(mr.address() + 16 + BLOCK * (1L + MEMBERS + j), BLOCK, mr.lKey());
                }
            }
            for (int i = 0; i < MEMBERS; i++) {
                cos[i].join(1, 0xA110C + ProcessHandle.current().pid(), MEMBERS, i, nics[0].address(), 0);
            }
            final WorkCompletion[] wc = {new WorkCompletion()};
            final boolean[] done = new boolean[MEMBERS];
            awaitAll(cqs, wc, done);
            final AllocationWindows windows = new AllocationWindows(WARMUP, MEASURED, WINDOWS);
            for (int round = 0; round < windows.rounds(); round++) {
                windows.beforeRound(round);
                final int kind = round % 5;
                for (int i = 0; i < MEMBERS; i++) {
                    switch (kind) {
                        case 0 -> cos[i].bcast(round, round % MEMBERS, src[i], 0);
                        case 1 -> cos[i].allreduce(round, src[i], reduced[i], ReduceOp.SUM, ReduceType.INT64, 0);
                        case 2 -> cos[i].allgatherv(round, src[i], dstV[i], 0);
                        case 3 -> cos[i].alltoall(round, dst[i], exchanged[i], 0);
                        default -> cos[i].barrier(round, 0);
                    }
                }
                awaitAll(cqs, wc, done);
            }
            assertEquals(0, windows.quietest(), "bytes allocated by the driving thread in its quietest " + MEASURED
                + " rounds of " + WINDOWS);
            for (final Collective co : cos) {
                co.close();
            }
        }
    }

    private static void awaitAll(final CompletionQueue[] cqs, final WorkCompletion[] wc, final boolean[] done) {
        java.util.Arrays.fill(done, false);
        int have = 0;
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (have < cqs.length) {
            for (int i = 0; i < cqs.length; i++) {
                if (!done[i] && cqs[i].poll(wc) == 1) {
                    if (wc[0].status() != WcStatus.SUCCESS) {
                        throw new AssertionError("member " + i + ": " + wc[0]);
                    }
                    done[i] = true;
                    have++;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("a collective did not complete within 30 s");
            }
        }
    }
}
