package io.jdet.internal.collective;

import io.jdet.CollectiveTuning;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every collective's schedule, run for every member of groups of 1 to 9 (and 16) by {@link ScheduleRunner}, leaves
 * every member the result the collective promises, on each side of every switch point between algorithms; and the
 * switch points themselves are where the tuning puts them (told apart by the number and size of the messages).
 */
class AlgorithmsTest {
    private static final int MAX_GROUP = 9;
    /** Switch points small enough that every algorithm is reached with a few hundred bytes. */
    private static final CollectiveTuning SMALL = new CollectiveTuning(10_000, 1024, 16, 16_384, 8,
        64, 512, 2, 96, 512, 8, 32, 2, 64, 512);
    private static final CollectiveTuning[] TUNINGS = {CollectiveTuning.DEFAULT, SMALL};

    /** How far into its region every test buffer starts, and how much lies after it. */
    private static final int PAD = 24;
    private static final byte PAD_FILL = 0x3C;

    private final Arena arena = Arena.ofConfined();
    private final java.util.List<MemorySegment> pads = new java.util.ArrayList<>();

    @AfterEach
    void close() {
        try {
            for (final MemorySegment region : pads) {
                for (long i = 0; i < PAD; i++) {
                    assertEquals(PAD_FILL, region.get(ValueLayout.JAVA_BYTE, i), "before a buffer, byte " + i);
                    assertEquals(PAD_FILL, region.get(ValueLayout.JAVA_BYTE, region.byteSize() - 1 - i),
                        "after a buffer, byte " + i + " from the end");
                }
            }
        } finally {
            arena.close();
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * A buffer of {@code bytes} that starts {@link #PAD} bytes into its region, as a caller's segment inside a
     * larger registration does; the pad on both sides is filled with 0x3C, which no algorithm may write.
     */
    private Buf buf(final long bytes) {
        final MemorySegment region = arena.allocate(bytes + 2 * PAD, 8);
        region.fill(PAD_FILL);
        final Buf b = new Buf().set(null, region, PAD, region.address() + PAD, bytes, 0);
        view(b).fill((byte) 0x77);
        pads.add(region);
        return b;
    }

    /** The bytes a buffer names. */
    private static MemorySegment view(final Buf b) {
        return b.region().asSlice(b.offset(), b.length());
    }

    /** A member's own bytes: differ by member, by position, and from the 0x77 and 0x5A fill. */
    private static byte datum(final int rank, final long i) {
        return (byte) (rank * 37 + i * 11 + 1);
    }

    private Buf data(final int rank, final long bytes) {
        final Buf b = buf(bytes);
        for (long i = 0; i < bytes; i++) {
            view(b).set(ValueLayout.JAVA_BYTE, i, datum(rank, i));
        }
        return b;
    }

    private static void assertBytes(final int rank, final long from, final MemorySegment seg, final long at,
                                    final long len, final String what) {
        for (long i = 0; i < len; i++) {
            if (seg.get(ValueLayout.JAVA_BYTE, at + i) != datum(rank, from + i)) {
                fail(what + ": byte " + (at + i) + " is not byte " + (from + i) + " of member " + rank);
            }
        }
    }

    private static boolean powerOfTwo(final int v) {
        return Integer.bitCount(v) == 1;
    }

    private static int[] groups() {
        final int[] g = new int[MAX_GROUP + 1];
        for (int i = 0; i < MAX_GROUP; i++) {
            g[i] = i + 1;
        }
        g[MAX_GROUP] = 16;
        return g;
    }

    // ------------------------------------------------------------------ barrier

    @Test
    void aBarrierLetsNoMemberThroughBeforeTheLastArrives() {
        for (final int p : groups()) {
            for (int late = 0; late < p; late++) {
                final Request[] q = new Request[p];
                for (int r = 0; r < p; r++) {
                    q[r] = ScheduleRunner.request(WcType.BARRIER, 0, null, null);
                }
                assertFalse(ScheduleRunner.anyDoneBefore(q, late, SMALL, arena),
                    "a member of " + p + " finished while member " + late + " had not arrived");
            }
        }
    }

    @Test
    void aBarrierTakesTheLogarithmOfTheGroupInRounds() {
        for (final int p : groups()) {
            final Request[] q = new Request[p];
            for (int r = 0; r < p; r++) {
                q[r] = ScheduleRunner.request(WcType.BARRIER, 0, null, null);
            }
            final ScheduleRunner g = ScheduleRunner.run(q, SMALL, arena);
            final int lg = 32 - Integer.numberOfLeadingZeros(p - 1);
            assertEquals(lg, g.rounds(), "rounds of a barrier of " + p);
            assertEquals(p * lg, g.messages(), "messages of a barrier of " + p);
        }
    }

    // ------------------------------------------------------------------ bcast

    private ScheduleRunner bcast(final int p, final int root, final long n, final CollectiveTuning t) {
        final Request[] q = new Request[p];
        final Buf[] dst = new Buf[p];
        for (int r = 0; r < p; r++) {
            dst[r] = r == root ? data(root, n) : buf(n);
            q[r] = ScheduleRunner.request(WcType.BCAST, root, null, dst[r]);
        }
        final ScheduleRunner g = ScheduleRunner.run(q, t, arena);
        for (int r = 0; r < p; r++) {
            assertBytes(root, 0, view(dst[r]), 0, n, "bcast of " + n + " from " + root + " of " + p + " at " + r);
        }
        return g;
    }

    @Test
    void aBroadcastReachesEveryMember() {
        for (final int p : groups()) {
            for (int root = 0; root < p; root++) {
                for (final long n : new long[] {0, 1, 63, 64, 100, 511, 512, 1000}) {
                    bcast(p, root, n, SMALL);
                }
                bcast(p, root, 5, CollectiveTuning.DEFAULT);
            }
        }
        bcast(9, 4, 20_000, CollectiveTuning.DEFAULT);
        bcast(8, 3, 20_000, CollectiveTuning.DEFAULT);
    }

    @Test
    void aShortBroadcastSendsWholeMessagesAndALongOneSplitsThem() {
        assertEquals(63, bcast(4, 1, 63, SMALL).largest(), "below bcastShortMsg: the binomial tree");
        assertTrue(bcast(4, 1, 64, SMALL).largest() < 64, "at bcastShortMsg: scatter then all-gather");
        final CollectiveTuning four = withBcastMinProcs(4);
        assertEquals(1000, bcast(3, 0, 1000, four).largest(), "below bcastMinProcs: the binomial tree");
        assertTrue(bcast(4, 0, 1000, four).largest() < 1000, "at bcastMinProcs: scatter then all-gather");
    }

    @Test
    void aLongBroadcastAllGathersByRecursiveDoublingBelowBcastLongMsgOnly() {
        final int doubling = bcast(8, 2, 511, SMALL).messages();
        final int ring = bcast(8, 2, 512, SMALL).messages();
        // The root holds every block already: nothing goes back to it in the all-gather (it may have registered
        // its buffer with LOCAL_READ alone), one message fewer in each of the all-gather's rounds.
        assertEquals(7 + 7 * 3, doubling, "scatter (7) then 3 rounds of 7");
        assertEquals(7 + 7 * 7, ring, "scatter (7) then 7 rounds of 7");
        assertEquals(5 + 5 * 5, bcast(6, 0, 200, SMALL).messages(), "six members: scatter (5), then the ring");
    }

    private static CollectiveTuning withBcastMinProcs(final int procs) {
        final CollectiveTuning s = SMALL;
        return new CollectiveTuning(s.timeoutMs(), s.maxSize(), s.depth(), s.slotBytes(), s.slots(),
            s.bcastShortMsg(), s.bcastLongMsg(), procs, s.allgatherShortMsg(), s.allgatherLongMsg(),
            s.alltoallShortMsg(), s.alltoallMediumMsg(), s.alltoallMinProcs(), s.allreduceShortMsg(),
            s.allreduceRingMsg());
    }

    // ------------------------------------------------------------------ scatter, gather

    @Test
    void aScatterGivesEachMemberItsBlock() {
        for (final int p : groups()) {
            for (int root = 0; root < p; root++) {
                for (final long blk : new long[] {0, 1, 3, 16}) {
                    for (final boolean rootKeeps : new boolean[] {true, false}) {
                        final Request[] q = new Request[p];
                        final Buf[] dst = new Buf[p];
                        for (int r = 0; r < p; r++) {
                            dst[r] = r != root || rootKeeps ? buf(blk) : null;
                            q[r] = ScheduleRunner.request(WcType.SCATTER, root, r == root ? data(root, p * blk)
                                : null, dst[r]);
                        }
                        ScheduleRunner.run(q, SMALL, arena);
                        for (int r = 0; r < p; r++) {
                            if (dst[r] != null) {
                                assertBytes(root, r * blk, view(dst[r]), 0, blk, "scatter of " + p + " at " + r);
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void aGatherCollectsEveryMembersBlockAtTheRoot() {
        for (final int p : groups()) {
            for (int root = 0; root < p; root++) {
                for (final long blk : new long[] {0, 1, 3, 16}) {
                    for (final boolean inPlace : new boolean[] {true, false}) {
                        final Request[] q = new Request[p];
                        final Buf dst = buf(p * blk);
                        for (int r = 0; r < p; r++) {
                            final Buf src = r == root && inPlace ? null : data(r, blk);
                            q[r] = ScheduleRunner.request(WcType.GATHER, root, src, r == root ? dst : null);
                        }
                        if (inPlace) {
                            final Buf own = data(root, blk);
                            MemorySegment.copy(view(own), 0, view(dst), root * blk, blk);
                        }
                        ScheduleRunner.run(q, SMALL, arena);
                        for (int j = 0; j < p; j++) {
                            assertBytes(j, 0, view(dst), j * blk, blk, "gather of " + p + " to " + root);
                        }
                    }
                }
            }
        }
    }

    private static long vlen(final int i, final int j) {
        return (i * 5L + j * 3L) % 7;
    }

    @Test
    void aScattervGivesEachMemberItsOwnLength() {
        for (final int p : groups()) {
            for (int root = 0; root < p; root++) {
                for (final boolean rootKeeps : new boolean[] {true, false}) {
                    final Request[] q = new Request[p];
                    final Buf[] dst = new Buf[p];
                    final Buf[] srcV = new Buf[p];
                    for (int j = 0; j < p; j++) {
                        srcV[j] = j == root && !rootKeeps ? null : data(100 + j, vlen(root, j));
                    }
                    for (int r = 0; r < p; r++) {
                        dst[r] = r != root || rootKeeps ? buf(vlen(root, r)) : null;
                        q[r] = ScheduleRunner.request(WcType.SCATTERV, root, null, dst[r]);
                        if (r == root) {
                            q[r].srcV = srcV;
                        }
                    }
                    ScheduleRunner.run(q, SMALL, arena);
                    for (int r = 0; r < p; r++) {
                        if (dst[r] != null) {
                            assertBytes(100 + r, 0, view(dst[r]), 0, vlen(root, r), "scatterv at " + r);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aGathervCollectsEveryMembersOwnLength() {
        for (final int p : groups()) {
            for (int root = 0; root < p; root++) {
                for (final boolean rootSends : new boolean[] {true, false}) {
                    final Request[] q = new Request[p];
                    final Buf[] dstV = new Buf[p];
                    for (int j = 0; j < p; j++) {
                        dstV[j] = j == root && !rootSends ? null : buf(vlen(root, j));
                    }
                    for (int r = 0; r < p; r++) {
                        final Buf src = r == root && !rootSends ? null : data(r, vlen(root, r));
                        q[r] = ScheduleRunner.request(WcType.GATHERV, root, src, null);
                        if (r == root) {
                            q[r].dstV = dstV;
                        }
                    }
                    ScheduleRunner.run(q, SMALL, arena);
                    for (int j = 0; j < p; j++) {
                        if (dstV[j] != null) {
                            assertBytes(j, 0, view(dstV[j]), 0, vlen(root, j), "gatherv from " + j);
                        }
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ allgather

    private ScheduleRunner allgather(final int p, final long blk, final boolean inPlace, final CollectiveTuning t) {
        final Request[] q = new Request[p];
        final Buf[] dst = new Buf[p];
        for (int r = 0; r < p; r++) {
            dst[r] = buf(p * blk);
            final Buf own = data(r, blk);
            if (inPlace) {
                MemorySegment.copy(view(own), 0, view(dst[r]), r * blk, blk);
            }
            q[r] = ScheduleRunner.request(WcType.ALLGATHER, 0, inPlace ? null : own, dst[r]);
        }
        final ScheduleRunner g = ScheduleRunner.run(q, t, arena);
        for (int r = 0; r < p; r++) {
            for (int j = 0; j < p; j++) {
                assertBytes(j, 0, view(dst[r]), j * blk, blk, "allgather of " + p + " x " + blk + " at " + r);
            }
        }
        return g;
    }

    @Test
    void anAllgatherGivesEveryMemberEveryBlock() {
        for (final CollectiveTuning t : TUNINGS) {
            for (final int p : groups()) {
                for (final long blk : new long[] {0, 1, 8, 20, 70, 200}) {
                    allgather(p, blk, false, t);
                    allgather(p, blk, true, t);
                }
            }
        }
    }

    @Test
    void anAllgatherSwitchesAlgorithmAtItsSizes() {
        // four members: recursive doubling (2 rounds of 4) below allgatherLongMsg, the ring (3 rounds of 4) from it
        assertEquals(8, allgather(4, 127, false, SMALL).messages());
        assertEquals(12, allgather(4, 128, false, SMALL).messages());
        // five members: Bruck (3 rounds of 5) below allgatherShortMsg, the ring (4 rounds of 5) from it
        final CollectiveTuning t = new CollectiveTuning(10_000, 1024, 16, 16_384, 8, 64, 512, 2, 100, 512, 8, 32, 2,
            64, 512);
        final ScheduleRunner bruck = allgather(5, 19, true, t);
        assertEquals(15, bruck.messages());
        assertEquals(5 * 4 * 19, bruck.bytes(), "each member receives each other block once");
        assertEquals(20, allgather(5, 20, true, t).messages());
    }

    @Test
    void anAllgathervGivesEveryMemberEveryPieceOfItsOwnLength() {
        for (final CollectiveTuning t : TUNINGS) {
            for (final int p : groups()) {
                for (final boolean inPlace : new boolean[] {true, false}) {
                    final Request[] q = new Request[p];
                    final Buf[][] dstV = new Buf[p][p];
                    for (int r = 0; r < p; r++) {
                        for (int j = 0; j < p; j++) {
                            dstV[r][j] = buf(vlen(j, 1) * 9);
                        }
                        final Buf own = data(r, vlen(r, 1) * 9);
                        if (inPlace) {
                            MemorySegment.copy(view(own), 0, view(dstV[r][r]), 0, own.length());
                        }
                        q[r] = ScheduleRunner.request(WcType.ALLGATHERV, 0, inPlace ? null : own, null);
                        q[r].dstV = dstV[r];
                    }
                    ScheduleRunner.run(q, t, arena);
                    for (int r = 0; r < p; r++) {
                        for (int j = 0; j < p; j++) {
                            assertBytes(j, 0, view(dstV[r][j]), 0, vlen(j, 1) * 9, "allgatherv at " + r);
                        }
                    }
                }
            }
        }
    }

    @Test
    void anAllgathervChoosesItsAlgorithmByTheTotalOfItsPieces() {
        // five members, pieces of 19 or 20 bytes: Bruck (3 rounds of 5) below allgatherShortMsg, the ring from it
        final CollectiveTuning t = new CollectiveTuning(10_000, 1024, 16, 16_384, 8, 64, 512, 2, 100, 512, 8, 32, 2,
            64, 512);
        for (final long piece : new long[] {19, 20}) {
            final Request[] q = new Request[5];
            for (int r = 0; r < 5; r++) {
                final Buf[] dstV = new Buf[5];
                for (int j = 0; j < 5; j++) {
                    dstV[j] = buf(piece);
                }
                q[r] = ScheduleRunner.request(WcType.ALLGATHERV, 0, data(r, piece), null);
                q[r].dstV = dstV;
            }
            assertEquals(piece == 19 ? 15 : 20, ScheduleRunner.run(q, t, arena).messages(), "pieces of " + piece);
        }
    }

    @Test
    void aScheduleBuiltAgainHoldsOnlyTheNewCollective() {
        final Schedule s = new Schedule();
        final Request first = ScheduleRunner.request(WcType.BCAST, 0, null, buf(100));
        Algorithms.build(s, first, 0, 4, SMALL, (x, bytes) -> 0);
        final Request barrier = ScheduleRunner.request(WcType.BARRIER, 0, null, null);
        Algorithms.build(s, barrier, 0, 4, SMALL, (x, bytes) -> 0);
        assertEquals(2, s.rounds);
        assertEquals(4, s.ops, "two rounds of a send and a receive");
        assertEquals(0, s.buffers);
        assertEquals(0, s.blocks);
    }

    // ------------------------------------------------------------------ alltoall

    private ScheduleRunner alltoall(final int p, final long blk, final CollectiveTuning t) {
        final Request[] q = new Request[p];
        final Buf[] dst = new Buf[p];
        for (int r = 0; r < p; r++) {
            dst[r] = buf(p * blk);
            q[r] = ScheduleRunner.request(WcType.ALLTOALL, 0, data(r, p * blk), dst[r]);
        }
        final ScheduleRunner g = ScheduleRunner.run(q, t, arena);
        for (int r = 0; r < p; r++) {
            for (int j = 0; j < p; j++) {
                assertBytes(j, r * blk, view(dst[r]), j * blk, blk, "alltoall of " + p + " x " + blk + " at " + r);
            }
        }
        return g;
    }

    @Test
    void anAlltoallGivesEveryMemberItsBlockOfEveryOther() {
        for (final CollectiveTuning t : TUNINGS) {
            for (final int p : groups()) {
                for (final long blk : new long[] {0, 1, 8, 9, 32, 33, 300}) {
                    alltoall(p, blk, t);
                }
            }
        }
    }

    @Test
    void anAlltoallSwitchesAlgorithmAtItsSizes() {
        // Bruck (3 rounds of 5 messages) up to alltoallShortMsg, from alltoallMinProcs members
        assertEquals(15, alltoall(5, 8, SMALL).messages());
        assertEquals(20, alltoall(5, 9, SMALL).messages());
        final CollectiveTuning five = new CollectiveTuning(10_000, 1024, 16, 16_384, 8, 64, 512, 2, 96, 512, 8, 32,
            5, 64, 512);
        assertEquals(15, alltoall(5, 8, five).messages());
        assertEquals(12, alltoall(4, 8, five).messages(), "below alltoallMinProcs: all at once");
        // all at once (one round) up to alltoallMediumMsg, pairwise (a round per partner) above it
        assertEquals(1, alltoall(5, 32, SMALL).rounds());
        assertEquals(4, alltoall(5, 33, SMALL).rounds());
        assertEquals(3, alltoall(4, 33, SMALL).rounds());
    }

    @Test
    void anAlltoallvGivesEveryMemberItsPieceOfEveryOther() {
        for (final int p : groups()) {
            final Request[] q = new Request[p];
            final Buf[][] dstV = new Buf[p][p];
            for (int r = 0; r < p; r++) {
                final Buf[] srcV = new Buf[p];
                for (int j = 0; j < p; j++) {
                    srcV[j] = data(r * 16 + j, vlen(r, j));
                    dstV[r][j] = buf(vlen(j, r));
                }
                q[r] = ScheduleRunner.request(WcType.ALLTOALLV, 0, null, null);
                q[r].srcV = srcV;
                q[r].dstV = dstV[r];
            }
            ScheduleRunner.run(q, SMALL, arena);
            for (int r = 0; r < p; r++) {
                for (int j = 0; j < p; j++) {
                    assertBytes(j * 16 + r, 0, view(dstV[r][j]), 0, vlen(j, r), "alltoallv at " + r + " from " + j);
                }
            }
        }
    }

    // ------------------------------------------------------------------ reductions

    private static long element(final int rank, final int i) {
        return (rank * 7_919L + i * 104_729L) % 1_000 - 500 + ((long) rank << 40);
    }

    private static double real(final int rank, final int i) {
        return (rank * 13 + i * 7) % 50 - 20;
    }

    private Buf elements(final int rank, final int count, final ReduceType type) {
        final Buf b = buf(count * 8L);
        for (int i = 0; i < count; i++) {
            if (type == ReduceType.INT64) {
                view(b).setAtIndex(ValueLayout.JAVA_LONG, i, element(rank, i));
            } else {
                view(b).setAtIndex(ValueLayout.JAVA_DOUBLE, i, real(rank, i));
            }
        }
        return b;
    }

    private static void assertReduced(final int p, final ReduceOp op, final ReduceType type, final Buf got,
                                      final int count, final String what) {
        for (int i = 0; i < count; i++) {
            if (type == ReduceType.INT64) {
                long want = element(0, i);
                for (int r = 1; r < p; r++) {
                    final long v = element(r, i);
                    want = switch (op) {
                        case SUM -> want + v;
                        case MIN -> Math.min(want, v);
                        case MAX -> Math.max(want, v);
                        case BAND -> want & v;
                        case BOR -> want | v;
                        case BXOR -> want ^ v;
                    };
                }
                assertEquals(want, view(got).getAtIndex(ValueLayout.JAVA_LONG, i), what + ", element " + i);
            } else {
                double want = real(0, i);
                for (int r = 1; r < p; r++) {
                    final double v = real(r, i);
                    want = switch (op) {
                        case SUM -> want + v;
                        case MIN -> Math.min(want, v);
                        case MAX -> Math.max(want, v);
                        default -> throw new AssertionError(op);
                    };
                }
                assertEquals(want, view(got).getAtIndex(ValueLayout.JAVA_DOUBLE, i), what + ", element " + i);
            }
        }
    }

    private ScheduleRunner allreduce(final int p, final int count, final ReduceOp op, final ReduceType type,
                                     final boolean inPlace, final CollectiveTuning t) {
        final Request[] q = new Request[p];
        final Buf[] dst = new Buf[p];
        for (int r = 0; r < p; r++) {
            final Buf mine = elements(r, count, type);
            dst[r] = inPlace ? mine : buf(count * 8L);
            q[r] = ScheduleRunner.reduction(WcType.ALLREDUCE, 0, inPlace ? null : mine, dst[r], op, type);
        }
        final ScheduleRunner g = ScheduleRunner.run(q, t, arena);
        for (int r = 0; r < p; r++) {
            assertReduced(p, op, type, dst[r], count, "allreduce " + op + " of " + p + " x " + count + " at " + r);
        }
        return g;
    }

    @Test
    void anAllreduceGivesEveryMemberTheReductionOfAll() {
        for (final int p : groups()) {
            for (final int count : new int[] {1, 3, 8, 20, 70}) {
                for (final ReduceOp op : ReduceOp.values()) {
                    allreduce(p, count, op, ReduceType.INT64, (count & 1) == 0, SMALL);
                }
                allreduce(p, count, ReduceOp.SUM, ReduceType.FLOAT64, false, SMALL);
                allreduce(p, count, ReduceOp.MIN, ReduceType.FLOAT64, true, SMALL);
                allreduce(p, count, ReduceOp.MAX, ReduceType.FLOAT64, false, SMALL);
            }
            allreduce(p, 300, ReduceOp.SUM, ReduceType.INT64, false, CollectiveTuning.DEFAULT);
        }
    }

    @Test
    void anAllreduceSwitchesAlgorithmAtItsSizes() {
        // recursive doubling sends the whole vector: below allreduceShortMsg (64 bytes), or fewer elements than
        // members
        assertEquals(56, allreduce(4, 7, ReduceOp.SUM, ReduceType.INT64, false, SMALL).largest());
        assertTrue(allreduce(4, 8, ReduceOp.SUM, ReduceType.INT64, false, SMALL).largest() < 64);
        final CollectiveTuning longer = new CollectiveTuning(10_000, 1024, 16, 16_384, 8, 64, 512, 2, 96, 512, 8,
            32, 2, 8, 512);
        assertEquals(24, allreduce(4, 3, ReduceOp.SUM, ReduceType.INT64, false, longer).largest());
        assertTrue(allreduce(4, 4, ReduceOp.SUM, ReduceType.INT64, false, longer).largest() < 32);
        // four members: Rabenseifner (2 + 2 rounds) below allreduceRingMsg (512 bytes), the ring (3 + 3) from it
        assertEquals(4, allreduce(4, 63, ReduceOp.SUM, ReduceType.INT64, true, SMALL).rounds());
        assertEquals(6, allreduce(4, 64, ReduceOp.SUM, ReduceType.INT64, true, SMALL).rounds());
    }

    /**
     * The API lets an all-reduce's src overlap its dst (only scatter, gather and all-to-all refuse it): the copy of
     * src into dst must not run while a send still reads src, since it changes src's bytes (a send by rendezvous, or
     * one posted in several pumps, reads them late). Both by src 8 bytes after dst and 8 bytes before it.
     */
    @Test
    void anAllreduceWhoseSourceOverlapsItsDestinationReducesTheSource() {
        for (final CollectiveTuning t : TUNINGS) {
            for (final int p : groups()) {
                for (final int count : new int[] {1, 3, 20, 70}) {
                    for (final int shift : new int[] {8, -8}) {
                        final Request[] q = new Request[p];
                        final Buf[] dst = new Buf[p];
                        for (int r = 0; r < p; r++) {
                            final Buf both = buf(count * 8L + 8);
                            final long srcAt = both.offset() + Math.max(shift, 0);
                            final long dstAt = both.offset() + Math.max(-shift, 0);
                            final Buf mine = new Buf().set(null, both.region(), srcAt,
                                both.region().address() + srcAt, count * 8L, 0);
                            dst[r] = new Buf().set(null, both.region(), dstAt, both.region().address() + dstAt,
                                count * 8L, 0);
                            for (int i = 0; i < count; i++) {
                                view(mine).setAtIndex(ValueLayout.JAVA_LONG, i, element(r, i));
                            }
                            q[r] = ScheduleRunner.reduction(WcType.ALLREDUCE, 0, mine, dst[r], ReduceOp.SUM,
                                ReduceType.INT64);
                        }
                        ScheduleRunner.run(q, t, arena);
                        for (int r = 0; r < p; r++) {
                            assertReduced(p, ReduceOp.SUM, ReduceType.INT64, dst[r], count,
                                "allreduce of " + p + " x " + count + ", src " + shift + " bytes after dst, at " + r);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aReduceLeavesTheReductionOfAllAtTheRoot() {
        for (final int p : groups()) {
            for (int root = 0; root < p; root++) {
                for (final int count : new int[] {1, 5}) {
                    for (final ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MIN, ReduceOp.BXOR}) {
                        for (final boolean inPlace : new boolean[] {true, false}) {
                            final Request[] q = new Request[p];
                            Buf dst = null;
                            for (int r = 0; r < p; r++) {
                                final Buf mine = elements(r, count, ReduceType.INT64);
                                if (r == root) {
                                    dst = inPlace ? mine : buf(count * 8L);
                                    q[r] = ScheduleRunner.reduction(WcType.REDUCE, root, inPlace ? null : mine, dst,
                                        op, ReduceType.INT64);
                                } else {
                                    q[r] = ScheduleRunner.reduction(WcType.REDUCE, root, mine, null, op,
                                        ReduceType.INT64);
                                }
                            }
                            ScheduleRunner.run(q, SMALL, arena);
                            assertReduced(p, op, ReduceType.INT64, dst, count, "reduce " + op + " of " + p + " to "
                                + root);
                        }
                    }
                }
            }
        }
    }

    @Test
    void aTypeWithoutASchedulePostedIsAnInternalError() {
        final Request q = ScheduleRunner.request(WcType.SEND, 0, null, null);
        final Schedule s = new Schedule();
        final IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> Algorithms.build(s, q, 0, 2, SMALL, (x, bytes) -> 0));
        assertTrue(e.getMessage().contains("SEND"));
    }
}
