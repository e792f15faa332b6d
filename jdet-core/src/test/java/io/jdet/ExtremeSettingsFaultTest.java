package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Exactly-once delivery at the edges of the allowed settings (the smallest window and frame, the smallest ring,
 * RTOs that fire spuriously, no ack delay or an endless one, no RNR delay with a late receiver, one read or atomic
 * at a time, a send queue of one, sequence numbers and message ids that wrap), each over a fabric that loses,
 * duplicates, reorders and corrupts frames. Both ends run a mixed stream of sends, writes (with and without
 * immediate), reads and atomics, some FENCED, some zero-length; every byte is checked at its place, every
 * completion in post order with its status, length and immediate, and no engine may catch a failure.
 */
@Timeout(120)
class ExtremeSettingsFaultTest {
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** The frame header and trailer that a frame's payload leaves room for (PROTOCOL.md section 5). */
    private static final int OVERHEAD = 80;

    /** What one run uses. */
    static final class Scenario {
        Configuration configuration = new Configuration();
        double loss = 0.05;
        double dup = 0.05;
        double reorder = 0.05;
        double corrupt = 0.01;
        long seed = 1;
        int sqDepth = 16;
        int rqDepth = 16;
        int maxOr = 4;
        int maxIr = 4;
        int ops = 120;
        int maxFrames = 4;
        boolean lateReceiver;
        boolean fenced = true;
        boolean bothWays = true;
        boolean suppress;
        String nic;
        int mtu;
        Long psnA;
        Long psnB;
        long deadlineMs = 60_000;

        Scenario config(final java.util.function.UnaryOperator<Configuration> f) {
            configuration = f.apply(configuration);
            return this;
        }

        Scenario seed(final long s) {
            seed = s;
            return this;
        }

        Scenario queues(final int sq, final int rq, final int or, final int ir) {
            sqDepth = sq;
            rqDepth = rq;
            maxOr = or;
            maxIr = ir;
            return this;
        }
    }

    enum Kind { SEND, WRITE, READ, FETCH_ADD, COMP_EXCH }

    /** One work request a side posts. */
    record Op(int index, Kind kind, int length, boolean immediate, int flags, long src, long dst) {
    }

    /** One end: its queue pair, its memory and the stream of work it posts at the peer. */
    static final class Side {
        final String name;
        final QueuePair qp;
        final CompletionQueue cq;
        final MemoryRegion mine;
        MemoryRegion peerMr;
        Side peer;
        final List<Op> ops = new ArrayList<>();
        final MemorySegment mem;
        // zones of this side's memory
        long srcZone;
        long srcLen;
        long recvZone;
        long recvSlot;
        long writeZone; // the peer writes here
        long writeLen;
        long readZone; // the peer reads from here
        long readLen;
        long readInto; // my reads land here
        long readIntoLen;
        long counters; // the peer's atomics target these
        long originals; // my atomics' originals
        int posted;
        int completed;
        final ArrayDeque<Op> signaled = new ArrayDeque<>();
        // what the peer sends me, in order
        final List<Op> incoming = new ArrayList<>();
        int recvsPosted;
        int received;
        final BitSet fetchOriginals = new BitSet();
        int fetchAdds;
        int compExchs;

        Side(final String name, final QueuePair qp, final CompletionQueue cq, final MemoryRegion mine) {
            this.name = name;
            this.qp = qp;
            this.cq = cq;
            this.mine = mine;
            this.mem = mine.segment();
        }
    }

    private static void plan(final Scenario s, final Side side, final int maxPayload, final long seed,
                             final int ops) {
        final SplittableRandom random = new SplittableRandom(seed);
        final int longest = s.maxFrames * maxPayload;
        long write = 0;
        long readInto = 0;
        int run = 0;
        for (int i = 0; i < ops; i++) {
            final Kind kind = switch (random.nextInt(10)) {
                case 0, 1, 2, 3 -> Kind.SEND;
                case 4, 5, 6 -> Kind.WRITE;
                case 7, 8 -> Kind.READ;
                default -> random.nextBoolean() ? Kind.FETCH_ADD : Kind.COMP_EXCH;
            };
            int length = switch (random.nextInt(8)) {
                case 0 -> 0;
                case 1 -> 1;
                case 2 -> maxPayload - 1;
                case 3 -> maxPayload;
                case 4 -> maxPayload + 1;
                case 5 -> longest;
                default -> random.nextInt(longest + 1);
            };
            if (kind == Kind.FETCH_ADD || kind == Kind.COMP_EXCH) {
                length = 8;
            }
            final boolean immediate = kind == Kind.SEND ? random.nextBoolean()
                : kind == Kind.WRITE && random.nextInt(3) == 0;
            final boolean quiet = s.suppress && s.sqDepth >= 4 && i < ops - 1 && run < 2 && random.nextInt(3) == 0;
            run = quiet ? run + 1 : 0;
            final int flags = (immediate ? WrFlags.IMMEDIATE : 0)
                | (s.fenced && random.nextInt(4) == 0 ? WrFlags.FENCED : 0) | (quiet ? WrFlags.SUPPRESSED : 0);
            long src = 0;
            long dst = 0;
            switch (kind) {
                case SEND -> src = random.nextLong(side.srcLen - length + 1);
                case WRITE -> {
                    src = random.nextLong(side.srcLen - length + 1);
                    dst = write;
                    write += length + 8;
                }
                case READ -> {
                    src = random.nextLong(side.readLen - length + 1); // at the peer
                    dst = readInto;
                    readInto += length + 8;
                }
                default -> {
                }
            }
            side.ops.add(new Op(i, kind, length, immediate, flags, src, dst));
        }
    }

    private static void layout(final Side side, final int ops, final int longest) {
        // srcZone, readZone: fixed patterns; recv slots: one per op; write zone: each op's length + 8
        long at = 0;
        side.srcZone = at;
        side.srcLen = 4L * longest + 4096;
        at += side.srcLen;
        side.readZone = at;
        side.readLen = 4L * longest + 4096;
        at += side.readLen;
        side.recvSlot = longest + 64;
        side.recvZone = at;
        at += side.recvSlot * ops;
        side.writeZone = at;
        side.writeLen = (long) (longest + 8) * ops;
        at += side.writeLen;
        side.readInto = at;
        side.readIntoLen = (long) (longest + 8) * ops;
        at += side.readIntoLen;
        at = (at + 63) & ~63L;
        side.counters = at;
        at += 64;
        side.originals = at;
        at += 8L * ops;
    }

    static long bytesNeeded(final int ops, final int longest) {
        return 2 * (4L * longest + 4096) + (long) (longest + 64) * ops + 2L * (longest + 8) * ops + 64 + 8L * ops
            + 4096;
    }

    /** Runs a scenario to the end, checking everything on the way; fails with both NICs' counters. */
    static void run(final Scenario s) {
        final int mtu = s.mtu != 0 ? s.mtu : s.configuration.loopMtu();
        final int maxPayload = mtu - OVERHEAD;
        final int longest = s.maxFrames * maxPayload;
        final Configuration c = s.configuration.clone()
            .faults(new FaultPlan(s.loss, s.dup, s.reorder, s.corrupt, s.seed));
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c)
            .bufferBytes(bytesNeeded(s.ops, longest)).depth(s.sqDepth, Math.max(1, s.rqDepth)).cqSize(1024)
            .maxOr(s.maxOr).maxIr(s.maxIr).nic(s.nic == null ? null : s.nic.equals("shm") ? Tests.uniqueShmGroup("x")
                : s.nic).connect(false))) {
            final long psnA = s.psnA != null ? s.psnA : pair.qpA.query().localPsn();
            final long psnB = s.psnB != null ? s.psnB : pair.qpB.query().localPsn();
            final QpModify toB = new QpModify().connect(pair.nicB.address(), pair.qpB.number(), psnB);
            final QpModify toA = new QpModify().connect(pair.nicA.address(), pair.qpA.number(), psnA);
            if (s.psnA != null) {
                toB.localPsn(psnA);
            }
            if (s.psnB != null) {
                toA.localPsn(psnB);
            }
            pair.qpA.modify(toB);
            pair.qpB.modify(toA);
            assertEquals(psnA, pair.qpA.query().localPsn());
            assertEquals(psnB, pair.qpB.query().localPsn());
            final Side a = new Side("A", pair.qpA, pair.cqA, pair.mrA);
            final Side b = new Side("B", pair.qpB, pair.cqB, pair.mrB);
            a.peer = b;
            b.peer = a;
            a.peerMr = pair.mrB;
            b.peerMr = pair.mrA;
            for (final Side side : List.of(a, b)) {
                layout(side, s.ops, longest);
                Tests.fill(side.mem, s.seed * 31 + side.name.charAt(0));
                side.mem.asSlice(side.counters, 16).fill((byte) 0);
            }
            plan(s, a, maxPayload, s.seed * 7 + 1, s.ops);
            plan(s, b, maxPayload, s.seed * 7 + 2, s.bothWays ? s.ops : 0);
            // expected images: copies of the memory before the run
            final byte[] beforeA = a.mem.toArray(ValueLayout.JAVA_BYTE);
            final byte[] beforeB = b.mem.toArray(ValueLayout.JAVA_BYTE);
            for (final Side side : List.of(a, b)) {
                for (final Op op : side.peer.ops) {
                    if (op.kind == Kind.SEND || op.kind == Kind.WRITE && op.immediate) {
                        side.incoming.add(op);
                    }
                }
            }
            final SplittableRandom lateness = new SplittableRandom(s.seed);
            final long deadline = System.nanoTime() + s.deadlineMs * 1_000_000L;
            final WorkCompletion[] batch = new WorkCompletion[16];
            for (int i = 0; i < batch.length; i++) {
                batch[i] = new WorkCompletion();
            }
            while (!done(a) || !done(b)) {
                boolean progress = false;
                for (final Side side : List.of(a, b)) {
                    progress |= postRecvs(s, side, lateness);
                    progress |= postOps(s, side);
                    final int n = side.cq.poll(batch);
                    for (int k = 0; k < n; k++) {
                        check(side, batch[k]);
                    }
                    progress |= n > 0;
                }
                if (!progress) {
                    Thread.onSpinWait();
                }
                if (System.nanoTime() - deadline > 0) {
                    fail("hang: A posted " + a.posted + "/" + a.ops.size() + " completed " + a.completed
                        + " received " + a.received + "/" + a.incoming.size() + "; B posted " + b.posted + "/"
                        + b.ops.size() + " completed " + b.completed + " received " + b.received + "/"
                        + b.incoming.size() + "; A " + pair.qpA.query().state() + " B " + pair.qpB.query().state()
                        + "\nA " + pair.nicA.counters() + "\nB " + pair.nicB.counters());
                }
            }
            Tests.assertNoCompletion(pair.cqA, 5);
            Tests.assertNoCompletion(pair.cqB, 5);
            verifyMemory(a, beforeA);
            verifyMemory(b, beforeB);
            assertEquals(QpState.CONNECTED, pair.qpA.query().state());
            assertEquals(QpState.CONNECTED, pair.qpB.query().state());
            for (final Map<String, Long> counters : List.of(pair.nicA.counters(), pair.nicB.counters())) {
                assertEquals(0L, counters.get(Tests.ENGINE_ERRORS), "engine errors: " + counters);
            }
            if (System.getenv("EXTREME_VERBOSE") != null) {
                System.out.println(s.seed + " A " + pair.nicA.counters() + "\nB " + pair.nicB.counters());
            }
        }
    }

    private static boolean done(final Side side) {
        return side.completed == side.ops.size() && side.received == side.incoming.size();
    }

    private static boolean postRecvs(final Scenario s, final Side side, final SplittableRandom lateness) {
        boolean any = false;
        while (side.recvsPosted < side.incoming.size() && side.recvsPosted - side.received < s.rqDepth) {
            if (s.lateReceiver && lateness.nextInt(50) != 0) {
                return any; // post only now and then, so that most sends find no receive at first
            }
            final long at = side.recvZone + side.recvSlot * side.recvsPosted;
            side.qp.recv(side.recvsPosted, sge(side.mine, at, (int) side.recvSlot), 1);
            side.recvsPosted++;
            any = true;
        }
        return any;
    }

    private static boolean postOps(final Scenario s, final Side side) {
        boolean any = false;
        while (side.posted < side.ops.size() && side.posted - side.completed < s.sqDepth) {
            final Op op = side.ops.get(side.posted);
            final long id = op.index;
            final MemoryRegion peer = side.peerMr;
            switch (op.kind) {
                case SEND -> side.qp.send(id, sge(side.mine, side.srcZone + op.src, op.length), 1, op.flags,
                    immediateOf(side, op));
                case WRITE -> side.qp.write(id, sge(side.mine, side.srcZone + op.src, op.length), 1,
                    peer.address() + side.peer.writeZone + op.dst, peer.rKey(), op.flags, immediateOf(side, op));
                case READ -> side.qp.read(id, sge(side.mine, side.readInto + op.dst, op.length), 1,
                    peer.address() + side.peer.readZone + op.src, peer.rKey(), op.flags);
                case FETCH_ADD -> side.qp.fetchAdd(id, 1, new DataSegment().set(side.mine,
                    side.originals + 8L * op.index, 8), peer.address() + side.peer.counters, peer.rKey(), op.flags);
                case COMP_EXCH -> {
                    final int nth = side.compExchs++;
                    side.qp.compExch(id, nth, nth + 1, new DataSegment().set(side.mine,
                        side.originals + 8L * op.index, 8), peer.address() + side.peer.counters + 8, peer.rKey(),
                        op.flags);
                }
                default -> throw new AssertionError();
            }
            side.signaled.add(op);
            side.posted++;
            any = true;
        }
        return any;
    }

    private static int immediateOf(final Side side, final Op op) {
        return op.immediate ? 0x5A000000 ^ (side.name.charAt(0) << 16) ^ op.index : 0;
    }

    private static void check(final Side side, final WorkCompletion wc) {
        final String what = side.name + ": " + wc;
        assertEquals(WcStatus.SUCCESS, wc.status(), what);
        if (wc.type() == WcType.RECV) {
            assertTrue(side.received < side.incoming.size(), "an extra receive completion " + what);
            final Op op = side.incoming.get(side.received);
            assertEquals(side.received, wc.id(), "receives in order " + what);
            assertEquals(op.length, wc.length(), "length of " + op + " " + what);
            assertEquals(immediateOf(side.peer, op), wc.immediate(), "immediate of " + op + " " + what);
            assertEquals(op.immediate, (wc.flags() & WcFlags.IMMEDIATE) != 0, "immediate flag " + what);
            if (op.kind == Kind.SEND) {
                final long at = side.recvZone + side.recvSlot * side.received;
                final MemorySegment got = side.mem.asSlice(at, op.length);
                final MemorySegment sent = side.peer.mem.asSlice(side.peer.srcZone + op.src, op.length);
                final long mismatch = sent.mismatch(got);
                assertEquals(-1, mismatch, "send " + op + " differs at " + mismatch + " " + what);
            }
            side.received++;
            return;
        }
        assertTrue(!side.signaled.isEmpty(), "an extra completion " + what);
        while ((side.signaled.peek().flags & WrFlags.SUPPRESSED) != 0 && side.signaled.peek().index != wc.id()) {
            final Op quiet = side.signaled.poll(); // reaped by this completion
            checkResult(side, quiet, what);
            side.completed++;
            assertTrue(!side.signaled.isEmpty(), "an extra completion " + what);
        }
        final Op op = side.signaled.poll();
        assertEquals(op.index, wc.id(), "completions in post order " + what);
        final WcType type = switch (op.kind) {
            case SEND -> WcType.SEND;
            case WRITE -> WcType.RDMA_WRITE;
            case READ -> WcType.RDMA_READ;
            case FETCH_ADD -> WcType.FETCH_ADD;
            case COMP_EXCH -> WcType.COMP_EXCH;
        };
        assertEquals(type, wc.type(), what);
        if (op.kind == Kind.READ || op.kind == Kind.FETCH_ADD || op.kind == Kind.COMP_EXCH) {
            assertEquals(op.length, wc.length(), "length " + op + " " + what);
        }
        checkResult(side, op, what);
        side.completed++;
    }

    private static void checkResult(final Side side, final Op op, final String what) {
        switch (op.kind) {
            case READ -> {
                final MemorySegment got = side.mem.asSlice(side.readInto + op.dst, op.length);
                final MemorySegment there = side.peer.mem.asSlice(side.peer.readZone + op.src, op.length);
                final long mismatch = there.mismatch(got);
                assertEquals(-1, mismatch, "read " + op + " differs at " + mismatch + " " + what);
            }
            case FETCH_ADD -> {
                final long original = side.mem.get(LE_LONG, side.originals + 8L * op.index);
                assertTrue(original >= 0 && original < side.ops.size() && !side.fetchOriginals.get((int) original),
                    "fetch-and-add original " + original + " (seen " + side.fetchOriginals + ") " + what);
                side.fetchOriginals.set((int) original);
                side.fetchAdds++;
            }
            case COMP_EXCH -> {
                final long original = side.mem.get(LE_LONG, side.originals + 8L * op.index);
                int nth = 0;
                for (final Op o : side.ops.subList(0, op.index)) {
                    nth += o.kind == Kind.COMP_EXCH ? 1 : 0;
                }
                assertEquals(nth, original, "compare-and-swap " + nth + " saw the previous one exactly " + what);
            }
            default -> {
            }
        }
    }

    /** Builds the image each side's memory must hold, and compares all of it. */
    private static void verifyMemory(final Side side, final byte[] before) {
        final byte[] expected = before.clone();
        final Side peer = side.peer;
        int received = 0;
        int fetchAdds = 0;
        int compExchs = 0;
        for (final Op op : peer.ops) {
            switch (op.kind) {
                case SEND -> {
                    MemorySegment.copy(peer.mem, ValueLayout.JAVA_BYTE, peer.srcZone + op.src, expected,
                        (int) (side.recvZone + side.recvSlot * received), op.length);
                    received++;
                }
                case WRITE -> {
                    MemorySegment.copy(peer.mem, ValueLayout.JAVA_BYTE, peer.srcZone + op.src, expected,
                        (int) (side.writeZone + op.dst), op.length);
                    received += op.immediate ? 1 : 0;
                }
                case FETCH_ADD -> fetchAdds++;
                case COMP_EXCH -> compExchs++;
                default -> {
                }
            }
        }
        final MemorySegment image = MemorySegment.ofArray(expected);
        image.set(LE_LONG, side.counters, fetchAdds);
        image.set(LE_LONG, side.counters + 8, compExchs);
        for (final Op op : side.ops) {
            if (op.kind == Kind.READ) {
                MemorySegment.copy(peer.mem, peer.readZone + op.src, image, side.readInto + op.dst, op.length);
            } else if (op.kind == Kind.FETCH_ADD || op.kind == Kind.COMP_EXCH) {
                image.set(LE_LONG, side.originals + 8L * op.index, side.mem.get(LE_LONG,
                    side.originals + 8L * op.index)); // checked at completion
            }
        }
        final long mismatch = image.mismatch(side.mem);
        assertEquals(-1, mismatch, side.name + "'s memory differs at " + mismatch + " (recv zone "
            + side.recvZone + ", write zone " + side.writeZone + ", read-into zone " + side.readInto
            + ", counters " + side.counters + ")");
    }

    /** The request sequence number whose first message id is {@code messageId} (PROTOCOL.md section 5). */
    static int isnForMessageId(final int messageId) {
        // messageId = (isn - 1) * 0x9E3779B9 mod 2^32
        int inverse = 0x9E37_79B9; // Newton's iteration for the inverse of an odd number mod 2^32
        for (int i = 0; i < 5; i++) {
            inverse *= 2 - 0x9E37_79B9 * inverse;
        }
        final int isn = messageId * inverse + 1;
        assertEquals(messageId, (isn - 1) * 0x9E37_79B9);
        return isn;
    }

    static long psn(final int request, final int response) {
        return (request & 0xFFFF_FFFFL) | (long) response << 32;
    }

    private static Scenario base(final long seed) {
        return new Scenario().seed(seed).config(c -> c.minRtoUs(300).maxRtoUs(10_000).rnrRetryCount(1_000_000)
            .rnrDelayUs(200));
    }

    private static Scenario with(final Scenario s, final java.util.function.Consumer<Scenario> f) {
        f.accept(s);
        return s;
    }

    static final Map<String, java.util.function.LongFunction<Scenario>> SCENARIOS = new java.util.LinkedHashMap<>();

    static {
        SCENARIOS.put("defaults", seed -> base(seed));
        SCENARIOS.put("suppressed", seed -> with(base(seed), s -> s.suppress = true));
        SCENARIOS.put("window4mtu512", seed -> with(base(seed).config(c -> c.windowFrames(4).loopMtu(512)),
            s -> s.maxFrames = 30));
        SCENARIOS.put("window4mtu512suppressed", seed -> with(base(seed).config(c -> c.windowFrames(4)
            .loopMtu(512)), s -> {
                s.maxFrames = 12;
                s.suppress = true;
            }));
        SCENARIOS.put("window1024mtu512", seed -> with(base(seed).config(c -> c.windowFrames(1024).loopMtu(512)),
            s -> s.maxFrames = 60));
        SCENARIOS.put("mtu65507", seed -> with(base(seed).config(c -> c.loopMtu(65_507)), s -> {
            s.maxFrames = 3;
            s.ops = 60;
        }));
        SCENARIOS.put("psnWrap", seed -> with(base(seed).config(c -> c.windowFrames(4).loopMtu(512)), s -> {
            s.psnA = psn(-5, -3);
            s.psnB = psn(-7, -2);
            s.maxFrames = 6;
        }));
        SCENARIOS.put("psnWrapWide", seed -> with(base(seed).config(c -> c.windowFrames(1024).loopMtu(512)), s -> {
            s.psnA = psn(-40, -100);
            s.psnB = psn(-1, 0);
            s.maxFrames = 6;
        }));
        SCENARIOS.put("psnWrapSacks", seed -> with(base(seed).config(c -> c.windowFrames(64).loopMtu(512)), s -> {
            s.psnA = psn(-20, -10);
            s.psnB = psn(-33, -31);
            s.maxFrames = 20;
            s.reorder = 0.2;
        }));
        SCENARIOS.put("msgIdWrap", seed -> with(base(seed), s -> {
            s.psnA = psn(isnForMessageId(-3), 12345);
            s.psnB = psn(isnForMessageId(-1), -1);
        }));
        SCENARIOS.put("ackDelay0", seed -> base(seed).config(c -> c.ackDelayUs(0)));
        SCENARIOS.put("ackDelayMax", seed -> base(seed).config(c -> c.ackDelayUs(Integer.MAX_VALUE)));
        SCENARIOS.put("ackDelayMaxWindow4", seed -> with(base(seed).config(c -> c.ackDelayUs(Integer.MAX_VALUE)
            .windowFrames(4).loopMtu(512)), s -> s.maxFrames = 9));
        SCENARIOS.put("rto10", seed -> base(seed).config(c -> c.minRtoUs(10).maxRtoUs(10).timerPeriodUs(50)));
        SCENARIOS.put("rto10window4", seed -> with(base(seed).config(c -> c.minRtoUs(10).maxRtoUs(10)
            .timerPeriodUs(50).windowFrames(4).loopMtu(512)), s -> s.maxFrames = 10));
        SCENARIOS.put("rto10noFaults", seed -> with(base(seed).config(c -> c.minRtoUs(10).maxRtoUs(10)
            .timerPeriodUs(50).ackDelayUs(1000)), s -> {
                s.loss = 0;
                s.dup = 0;
                s.reorder = 0;
                s.corrupt = 0;
            }));
        SCENARIOS.put("rnr0late", seed -> with(base(seed).config(c -> c.rnrDelayUs(0)), s -> s.lateReceiver = true));
        SCENARIOS.put("rnr0lateWindow4", seed -> with(base(seed).config(c -> c.rnrDelayUs(0).windowFrames(4)
            .loopMtu(512)), s -> {
                s.lateReceiver = true;
                s.maxFrames = 8;
            }));
        SCENARIOS.put("or1ir1", seed -> base(seed).queues(16, 16, 1, 1));
        SCENARIOS.put("or1ir1unfenced", seed -> with(base(seed).queues(16, 16, 1, 1), s -> s.fenced = false));
        SCENARIOS.put("sq1", seed -> base(seed).queues(1, 1, 1, 1));
        SCENARIOS.put("sq1window4mtu512", seed -> with(base(seed).queues(1, 1, 1, 1).config(c -> c.windowFrames(4)
            .loopMtu(512)), s -> s.maxFrames = 20));
        SCENARIOS.put("ring8", seed -> with(base(seed).config(c -> c.loopRingFrames(8)), s -> s.maxFrames = 8));
        SCENARIOS.put("ring8mtu512", seed -> with(base(seed).config(c -> c.loopRingFrames(8).loopMtu(512)
            .windowFrames(1024)), s -> s.maxFrames = 40));
        SCENARIOS.put("rto10ackDelayMax", seed -> base(seed).config(c -> c.minRtoUs(10).maxRtoUs(10)
            .timerPeriodUs(50).ackDelayUs(Integer.MAX_VALUE)));
        SCENARIOS.put("rtoFixedLarge", seed -> with(base(seed).config(c -> c.minRtoUs(2000).maxRtoUs(2000)), s -> {
            s.loss = 0.02;
            s.ops = 60;
        }));
        SCENARIOS.put("timerMax", seed -> with(base(seed).config(c -> c.timerPeriodUs(1_000_000).ackDelayUs(5)),
            s -> s.ops = 60));
        SCENARIOS.put("timerMaxNoFaults", seed -> with(base(seed).config(c -> c.timerPeriodUs(1_000_000)
            .ackDelayUs(5)), s -> {
                s.ops = 60;
                s.loss = 0;
                s.dup = 0;
                s.reorder = 0;
                s.corrupt = 0;
            }));
        SCENARIOS.put("timerMaxLossOnly", seed -> with(base(seed).config(c -> c.timerPeriodUs(1_000_000)
            .ackDelayUs(5)), s -> {
                s.ops = 60;
                s.dup = 0;
                s.reorder = 0;
                s.corrupt = 0;
            }));
        SCENARIOS.put("shmSmallest", seed -> with(base(seed).config(c -> c.shmMtu(512).shmRingFrames(8)
            .windowFrames(4)), s -> {
                s.nic = "shm";
                s.mtu = 512;
                s.maxFrames = 10;
            }));
        SCENARIOS.put("shmWrap", seed -> with(base(seed).config(c -> c.shmMtu(512).shmRingFrames(8)
            .windowFrames(1024).minRtoUs(10).maxRtoUs(10).timerPeriodUs(50)), s -> {
                s.nic = "shm";
                s.mtu = 512;
                s.maxFrames = 20;
                s.psnA = psn(-5, -3);
                s.psnB = psn(-7, -2);
            }));
        SCENARIOS.put("udpWindow4Wrap", seed -> with(base(seed).config(c -> c.windowFrames(4).ackDelayUs(0)), s -> {
                s.nic = "udp:127.0.0.1";
                s.mtu = 65_000;
                s.maxFrames = 3;
                s.ops = 60;
                s.psnA = psn(-5, -3);
                s.psnB = psn(-7, -2);
            }));
        SCENARIOS.put("udpRto10sq1", seed -> with(base(seed).config(c -> c.minRtoUs(10).maxRtoUs(10)
            .timerPeriodUs(50)).queues(1, 1, 1, 1), s -> {
                s.nic = "udp:127.0.0.1";
                s.mtu = 65_000;
                s.maxFrames = 2;
                s.ops = 60;
            }));
        SCENARIOS.put("dupAll", seed -> with(base(seed).config(c -> c.windowFrames(4).loopMtu(512).minRtoUs(10)
            .maxRtoUs(10).timerPeriodUs(50)), s -> {
                s.loss = 0;
                s.dup = 1.0;
                s.reorder = 0.3;
                s.corrupt = 0;
                s.maxFrames = 8;
            }));
        SCENARIOS.put("dupAllWrap", seed -> with(base(seed).config(c -> c.loopMtu(512).ackDelayUs(0)), s -> {
                s.loss = 0.1;
                s.dup = 1.0;
                s.reorder = 0.5;
                s.corrupt = 0.02;
                s.maxFrames = 8;
                s.psnA = psn(-5, -3);
                s.psnB = psn(-7, -2);
                s.queues(8, 8, 1, 1);
            }));
        SCENARIOS.put("corruptHeavy", seed -> with(base(seed).config(c -> c.loopMtu(512)), s -> {
                s.corrupt = 0.3;
                s.maxFrames = 8;
            }));
        SCENARIOS.put("lossHeavy", seed -> with(base(seed).config(c -> c.loopMtu(512).windowFrames(4)
            .maxRtoUs(2000)), s -> {
                s.loss = 0.4;
                s.maxFrames = 5;
                s.ops = 40;
            }));
        SCENARIOS.put("heavyFaults", seed -> with(base(seed).config(c -> c.windowFrames(4).loopMtu(512)), s -> {
            s.loss = 0.2;
            s.dup = 0.2;
            s.reorder = 0.2;
            s.corrupt = 0.05;
            s.maxFrames = 6;
        }));
        SCENARIOS.put("heavyFaultsWrap", seed -> with(base(seed).config(c -> c.loopMtu(512)), s -> {
            s.loss = 0.2;
            s.dup = 0.2;
            s.reorder = 0.3;
            s.corrupt = 0.05;
            s.maxFrames = 12;
            s.psnA = psn(-50, -7);
            s.psnB = psn(-9, -60);
            s.suppress = true;
        }));
    }

    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.MethodSource("names")
    void scenario(final String name) {
        final long seeds = Long.parseLong(System.getenv().getOrDefault("EXTREME_SEEDS", "2"));
        final long from = Long.parseLong(System.getenv().getOrDefault("EXTREME_FROM", "1"));
        for (long seed = from; seed < from + seeds; seed++) {
            final long sd = seed;
            try {
                final long t0 = System.nanoTime();
                run(SCENARIOS.get(name).apply(seed));
                if (System.getenv("EXTREME_VERBOSE") != null) {
                    System.out.println(name + " seed " + seed + " " + (System.nanoTime() - t0) / 1_000_000 + " ms");
                }
            } catch (final AssertionError | RuntimeException e) {
                throw new AssertionError(name + " seed " + sd + ": " + e.getMessage(), e);
            }
        }
    }

    /** The scenarios a plain build runs (about 5 s in all); EXTREME_ONLY (a regex) picks from all of them. */
    private static final List<String> QUICK = List.of("psnWrap", "psnWrapWide", "psnWrapSacks", "msgIdWrap",
        "window4mtu512suppressed", "window1024mtu512", "mtu65507", "ring8mtu512", "sq1window4mtu512",
        "rnr0lateWindow4", "or1ir1", "rto10window4", "ackDelayMaxWindow4", "dupAllWrap", "heavyFaultsWrap",
        "lossHeavy", "timerMax", "shmWrap", "udpWindow4Wrap");

    /**
     * The scenarios to run. Environment knobs for longer hunts: EXTREME_ONLY (regex over every scenario's name),
     * EXTREME_SEEDS (seeds per scenario, default 2), EXTREME_FROM (first seed), EXTREME_VERBOSE (times, counters).
     *
     * @return their names
     */
    static java.util.stream.Stream<String> names() {
        final String only = System.getenv("EXTREME_ONLY");
        return only == null ? QUICK.stream() : SCENARIOS.keySet().stream().filter(n -> n.matches(only));
    }
}
