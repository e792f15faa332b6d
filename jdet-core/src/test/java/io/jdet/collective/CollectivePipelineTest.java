package io.jdet.collective;

import io.jdet.CollectiveTuning;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.MemoryRegion;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Several collectives in flight at once (the group's depth), eager and rendezvous messages to the same peer one
 * after another, members polled at very different rates: each collective's bytes land where they belong.
 */
class CollectivePipelineTest {
    @ParameterizedTest(name = "p={0} threshold={1}")
    @CsvSource({"2,17", "3,17", "4,17", "3,1", "5,100", "4,65536"})
    void pipelinedMixedCollectivesLandWhereTheyBelong(final int p, final long threshold) {
        final CollectiveTuning t = CollectiveTuning.DEFAULT.withTimeoutMs(20_000).withSlots(64, 2)
            .withRendezvousBytes(threshold);
        final int[] sizes = {8, 16, 17, 64, 200, 1000, 65_536, 70_000};
        final int ops = 12;
        try (Group g = new Group(p, new Configuration().collectives(t)).joined()) {
            for (int iter = 0; iter < 3; iter++) {
                final MemoryRegion[][] bufs = new MemoryRegion[p][ops];
                final MemoryRegion[][] srcs = new MemoryRegion[p][ops];
                final int[][] len = new int[ops][p];
                for (int c = 0; c < ops; c++) {
                    for (int j = 0; j < p; j++) {
                        len[c][j] = sizes[(c * 5 + j * 3 + iter) % sizes.length];
                    }
                }
                for (int i = 0; i < p; i++) {
                    for (int c = 0; c < ops; c++) {
                        final int root = c % p;
                        if (c % 2 == 0) { // broadcast of the root's length
                            final int n = len[c][0];
                            bufs[i][c] = g.region(i, n);
                            if (i == root) {
                                fill(bufs[i][c].segment(), c, root);
                            }
                            g.cos[i].bcast(c, root, Group.ds(bufs[i][c]), 0);
                        } else { // allgatherv: member j's block has len[c][j] bytes
                            long total = 0;
                            for (int j = 0; j < p; j++) {
                                total += len[c][j];
                            }
                            bufs[i][c] = g.region(i, total);
                            srcs[i][c] = g.region(i, len[c][i]);
                            fill(srcs[i][c].segment(), c, i);
                            final DataSegment[] dst = new DataSegment[p];
                            long off = 0;
                            for (int j = 0; j < p; j++) {
                                dst[j] = Group.ds(bufs[i][c], off, len[c][j]);
                                off += len[c][j];
                            }
                            g.cos[i].allgatherv(c, Group.ds(srcs[i][c]), dst, 0);
                        }
                    }
                }
                final int[] got = new int[p];
                final WorkCompletion[] one = {new WorkCompletion()};
                final long deadline = System.nanoTime() + 60_000_000_000L;
                long tick = 0;
                while (true) {
                    boolean all = true;
                    for (int i = 0; i < p; i++) {
                        final int every = i == 0 ? 1 : i * 5 + 1;
                        if (got[i] < ops && tick % every == 0 && g.cqs[i].poll(one) == 1) {
                            assertEquals(WcStatus.SUCCESS, one[0].status(), "member " + i + ": " + one[0] + " "
                                + g.cos[i]);
                            assertEquals(got[i], one[0].id(), "member " + i + " completes in order");
                            got[i]++;
                        }
                        all &= got[i] == ops;
                    }
                    if (all) {
                        break;
                    }
                    tick++;
                    if (System.nanoTime() > deadline) {
                        fail("no progress: " + java.util.Arrays.toString(got));
                    }
                }
                for (int i = 0; i < p; i++) {
                    for (int c = 0; c < ops; c++) {
                        final MemorySegment m = bufs[i][c].segment();
                        if (c % 2 == 0) {
                            check(m, 0, len[c][0], c, c % p, "member " + i + " bcast " + c);
                        } else {
                            long off = 0;
                            for (int j = 0; j < p; j++) {
                                check(m, off, len[c][j], c, j, "member " + i + " allgatherv " + c + " block " + j);
                                off += len[c][j];
                            }
                        }
                    }
                }
            }
        }
    }

    private static byte val(final int c, final int rank, final long k) {
        return (byte) (c * 13 + rank * 31 + k * 7 + 1);
    }

    private static void fill(final MemorySegment m, final int c, final int rank) {
        for (long k = 0; k < m.byteSize(); k++) {
            m.set(ValueLayout.JAVA_BYTE, k, val(c, rank, k));
        }
    }

    private static void check(final MemorySegment m, final long off, final long n, final int c, final int rank,
                              final String what) {
        for (long k = 0; k < n; k++) {
            if (m.get(ValueLayout.JAVA_BYTE, off + k) != val(c, rank, k)) {
                fail(what + ": byte " + k + " of " + n);
            }
        }
    }
}
