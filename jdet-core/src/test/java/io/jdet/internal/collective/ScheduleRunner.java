package io.jdet.internal.collective;

import io.jdet.CollectiveTuning;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs the schedules {@link Algorithms} builds for every member of a group in one thread, with what the engine
 * promises of a round and nothing more: a round's sends are queued when it starts (and read then), its receives take
 * the next messages from their peers in order (one message each, of exactly the length the receive expects), and
 * its local copies and reductions run once every receive of the round is done (its early copies first), and no
 * transfer of a round may touch its early copies' memory (checked on the addresses, since the engine runs an early
 * copy before some transfers read or land and after others). Messages between two members stay in order. A member
 * never sends to itself (it has no channel to itself). Fresh scratch memory holds garbage.
 */
final class ScheduleRunner {
    private final int p;
    private final Schedule[] schedules;
    private final Request[] requests;
    private final int[] round;
    private final boolean[] started;
    private final boolean[] active;
    private final ArrayDeque<byte[]>[][] wires;
    private int messages;
    private long largest;
    private long bytes;

    @SuppressWarnings("unchecked")
    private ScheduleRunner(final Request[] requests, final CollectiveTuning t, final Arena arena) {
        this.p = requests.length;
        this.requests = requests;
        this.schedules = new Schedule[p];
        this.round = new int[p];
        this.started = new boolean[p];
        this.active = new boolean[p];
        this.wires = new ArrayDeque[p][p];
        for (int i = 0; i < p; i++) {
            for (int j = 0; j < p; j++) {
                wires[i][j] = new ArrayDeque<>();
            }
        }
        for (int r = 0; r < p; r++) {
            final MemorySegment[] scratch = new MemorySegment[1];
            schedules[r] = new Schedule();
            Algorithms.build(schedules[r], requests[r], r, p, t, (s, bytes) -> {
                if (scratch[0] == null || scratch[0].byteSize() < bytes) {
                    scratch[0] = arena.allocate(Math.max(bytes, 8), 8).fill((byte) 0x5A);
                }
                return s.buffer(scratch[0], 0, scratch[0].address(), 0);
            });
        }
    }

    /** Runs the collective of every member to its end; fails on a deadlock or a message nobody took. */
    static ScheduleRunner run(final Request[] requests, final CollectiveTuning t, final Arena arena) {
        final ScheduleRunner g = new ScheduleRunner(requests, t, arena);
        Arrays.fill(g.active, true);
        g.drive();
        g.assertDone();
        return g;
    }

    /** How many messages the members sent in all. */
    int messages() {
        return messages;
    }

    /** How many bytes the members sent in all. */
    long bytes() {
        return bytes;
    }

    /** The length of the longest message. */
    long largest() {
        return largest;
    }

    /** The most rounds of any member. */
    int rounds() {
        int most = 0;
        for (final Schedule s : schedules) {
            most = Math.max(most, s.rounds);
        }
        return most;
    }

    /**
     * Runs every member but {@code late} as far as it can get, and reports whether any of them finished before
     * {@code late} joined in; then runs all of them to their end.
     */
    static boolean anyDoneBefore(final Request[] requests, final int late, final CollectiveTuning t,
                                 final Arena arena) {
        final ScheduleRunner g = new ScheduleRunner(requests, t, arena);
        Arrays.fill(g.active, true);
        g.active[late] = false;
        g.drive();
        boolean early = false;
        for (int r = 0; r < g.p; r++) {
            if (r != late && g.round[r] >= g.schedules[r].rounds) {
                early = true;
            }
        }
        g.active[late] = true;
        g.drive();
        g.assertDone();
        return early;
    }

    Schedule schedule(final int rank) {
        return schedules[rank];
    }

    private void drive() {
        boolean progress = true;
        while (progress) {
            progress = false;
            for (int r = 0; r < p; r++) {
                if (active[r] && round[r] < schedules[r].rounds && step(r)) {
                    progress = true;
                }
            }
        }
    }

    private void assertDone() {
        for (int r = 0; r < p; r++) {
            if (round[r] < schedules[r].rounds) {
                fail("member " + r + " of " + p + " is stuck in round " + round[r] + " of " + schedules[r].rounds);
            }
            for (int j = 0; j < p; j++) {
                assertTrue(wires[r][j].isEmpty(), "a message from " + r + " to " + j + " was never received");
            }
        }
    }

    private boolean step(final int r) {
        final Schedule s = schedules[r];
        final int from = s.roundStart[round[r]];
        final int to = s.roundStart[round[r] + 1];
        boolean progress = false;
        if (!started[r]) {
            started[r] = true;
            progress = true;
            checkEarlyCopies(r, s, from, to);
            for (int op = from; op < to; op++) {
                if (s.kind[op] == Schedule.SEND) {
                    assertNotEquals(r, s.peer[op], "member " + r + " sends to itself");
                    final byte[] m = gather(s, op);
                    wires[r][s.peer[op]].add(m);
                    messages++;
                    largest = Math.max(largest, m.length);
                    bytes += m.length;
                }
            }
        }
        final int[] needed = new int[p];
        for (int op = from; op < to; op++) {
            if (s.kind[op] == Schedule.RECV) {
                assertNotEquals(r, s.peer[op], "member " + r + " receives from itself");
                needed[s.peer[op]]++;
            }
        }
        for (int j = 0; j < p; j++) {
            if (wires[j][r].size() < needed[j]) {
                return progress;
            }
        }
        for (int op = from; op < to; op++) {
            if (s.kind[op] == Schedule.RECV) {
                scatter(s, op, wires[s.peer[op]][r].poll());
            }
        }
        // The early copies run while the round's transfers are in flight: here after them (the sends read their
        // bytes at the round's start, the receives are in place), so that a send of the copy's destination, or a
        // receive into either end of it, gives a wrong result.
        for (int op = from; op < to; op++) {
            final int src = s.first[op];
            if (s.kind[op] == Schedule.EARLY_COPY) {
                MemorySegment.copy(s.segs[s.blockBuf[src]], s.blockOff[src], s.segs[s.blockBuf[src + 1]],
                    s.blockOff[src + 1], s.total[op]);
            }
        }
        for (int op = from; op < to; op++) {
            final int src = s.first[op];
            if (s.kind[op] == Schedule.COPY) {
                MemorySegment.copy(s.segs[s.blockBuf[src]], s.blockOff[src], s.segs[s.blockBuf[src + 1]],
                    s.blockOff[src + 1], s.total[op]);
            } else if (s.kind[op] == Schedule.REDUCE) {
                final Request q = requests[r];
                Reduction.apply(q.op, q.reduceType, s.segs[s.blockBuf[src]], s.blockOff[src],
                    s.segs[s.blockBuf[src + 1]], s.blockOff[src + 1], s.total[op]);
            }
        }
        round[r]++;
        started[r] = false;
        return true;
    }

    /**
     * The rule of an early copy, checked on the memory itself: no send of its round reads its destination, no receive
     * of its round writes either end. Running the copy at one point of the round (as {@link #step} does) catches only
     * the violations that order exposes: the engine may run it before a send reads (a rendezvous, a zero-copy send, a
     * message posted over several pumps) and before a receive lands (a rendezvous write, a late chunk), or after.
     */
    private void checkEarlyCopies(final int r, final Schedule s, final int from, final int to) {
        for (int c = from; c < to; c++) {
            if (s.kind[c] != Schedule.EARLY_COPY) {
                continue;
            }
            final int src = s.first[c];
            final long len = s.total[c];
            final long srcAt = at(s, src);
            final long dstAt = at(s, src + 1);
            for (int op = from; op < to; op++) {
                if (s.kind[op] != Schedule.SEND && s.kind[op] != Schedule.RECV) {
                    continue;
                }
                for (int b = s.first[op]; b < s.first[op] + s.count[op]; b++) {
                    final long lo = at(s, b);
                    final long hi = lo + s.blockLen[b];
                    final boolean writesSrc = s.kind[op] == Schedule.RECV && lo < srcAt + len && srcAt < hi;
                    final boolean touchesDst = lo < dstAt + len && dstAt < hi;
                    if (writesSrc || touchesDst) {
                        fail("member " + r + " of " + p + ": a " + (s.kind[op] == Schedule.SEND ? "send" : "receive")
                            + " of round " + round[r] + " " + (writesSrc ? "writes the source" : s.kind[op]
                            == Schedule.SEND ? "reads the destination" : "writes the destination")
                            + " of an early copy of the round");
                    }
                }
            }
        }
    }

    /** Where block {@code b} starts in memory. */
    private static long at(final Schedule s, final int b) {
        return s.segs[s.blockBuf[b]].address() + s.blockOff[b];
    }

    private static byte[] gather(final Schedule s, final int op) {
        final byte[] out = new byte[Math.toIntExact(s.total[op])];
        int at = 0;
        for (int b = s.first[op]; b < s.first[op] + s.count[op]; b++) {
            MemorySegment.copy(s.segs[s.blockBuf[b]], java.lang.foreign.ValueLayout.JAVA_BYTE, s.blockOff[b], out,
                at, s.blockLen[b]);
            at += s.blockLen[b];
        }
        assertEquals(out.length, at, "the blocks of a message add up to its total");
        return out;
    }

    private static void scatter(final Schedule s, final int op, final byte[] in) {
        assertEquals(s.total[op], in.length, "a receive expects the length its peer sends");
        int at = 0;
        for (int b = s.first[op]; b < s.first[op] + s.count[op]; b++) {
            MemorySegment.copy(in, at, s.segs[s.blockBuf[b]], java.lang.foreign.ValueLayout.JAVA_BYTE,
                s.blockOff[b], s.blockLen[b]);
            at += s.blockLen[b];
        }
        assertEquals(in.length, at, "the blocks of a receive add up to its total");
    }

    /** A request of one member. */
    static Request request(final io.jdet.WcType type, final int root, final Buf src, final Buf dst) {
        final Request q = new Request();
        q.type = type;
        q.root = root;
        q.src = src;
        q.dst = dst;
        return q;
    }

    /** A reduction request of one member. */
    static Request reduction(final io.jdet.WcType type, final int root, final Buf src, final Buf dst,
                             final ReduceOp op, final ReduceType rt) {
        final Request q = request(type, root, src, dst);
        q.op = op;
        q.reduceType = rt;
        return q;
    }
}
