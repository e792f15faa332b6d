package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RDMA atomics end to end: exact against local CPU atomics on the same word, never run twice for a resent request,
 * through windows, pipelined up to max_or against max_ir under faults, and in sequence order after a read.
 */
@Timeout(120)
class AtomicsTest {
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    @Test
    void shouldCountExactlyWhenLocalCpuAddsRaceRemoteFetchAdds() throws Exception {
        try (Loopback pair = Loopback.open(new Loopback.Options().maxOr(8).maxIr(8).depth(64, 16))) {
            final long at = 4096;
            pair.bufB.set(ValueLayout.JAVA_LONG, at, 0);
            final int local = 2_000_000;
            final int remote = 4_000;
            final CompletableFuture<Void> cpu = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < local; i++) {
                    WORD.getAndAdd(pair.bufB, at, 1L);
                }
            });
            int posted = 0;
            int done = 0;
            while (done < remote) {
                while (posted < remote && posted - done < 8) {
                    pair.qpA.fetchAdd(posted, 1L << 32, new DataSegment().set(pair.mrA, 8L * (posted % 8), 8),
                        pair.mrB.address() + at, pair.mrB.rKey(), 0);
                    posted++;
                }
                for (final WorkCompletion wc : Tests.pollUntil(pair.cqA, 1)) {
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                    done++;
                }
            }
            cpu.get(60, TimeUnit.SECONDS);
            assertEquals((long) remote << 32 | local, (long) WORD.getVolatile(pair.bufB, at));
        }
    }

    @Test
    void shouldSwapExactlyWhenLocalCpuAddsRaceRemoteCompareAndSwap() throws Exception {
        try (Loopback pair = Loopback.open(new Loopback.Options().maxOr(8).maxIr(8))) {
            final long at = 4096;
            pair.bufB.set(ValueLayout.JAVA_LONG, at, 0);
            final int local = 1_000_000;
            final int remote = 2_000;
            final CompletableFuture<Void> cpu = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < local; i++) {
                    WORD.getAndAdd(pair.bufB, at, 1L);
                }
            });
            final DataSegment result = new DataSegment().set(pair.mrA, 0, 8);
            long expected = 0;
            for (int i = 0; i < remote; i++) {
                while (true) {
                    pair.qpA.compExch(i, expected, expected + (1L << 32), result, pair.mrB.address() + at,
                        pair.mrB.rKey(), 0);
                    assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
                    final long original = pair.bufA.get(LE_LONG, 0);
                    if (original == expected) {
                        expected += 1L << 32;
                        break;
                    }
                    expected = original;
                }
            }
            cpu.get(60, TimeUnit.SECONDS);
            assertEquals((long) remote << 32 | local, (long) WORD.getVolatile(pair.bufB, at));
        }
    }

    /** A resent atomic request (same sequence number) is not run again; its response carries the first result. */
    @Test
    void shouldNotRunAResentAtomicAgain() {
        try (HostileSetup s = new HostileSetup()) {
            s.lo.bufA.set(ValueLayout.JAVA_LONG, 0, 100);
            final int seq = s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(8).operands(5, 0).rspAck(0).send();
            assertEquals(100, s.peer.expect(Frame.OP_ATOMIC_RESP).operand1());
            // the same request again, its response not acknowledged
            s.peer.request(Frame.OP_FETCH_ADD).seq(seq).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(8).operands(5, 0).rspAck(0).send();
            // and again after its response is acknowledged
            s.peer.request(Frame.OP_FETCH_ADD).seq(seq).address(s.lo.bufA.address()).key(s.lo.mrA.rKey())
                .length(8).operands(5, 0).send();
            s.peer.ack();
            final HostilePeer.Received r = s.peer.expect(Frame.OP_ACK);
            assertEquals(seq, r.reqAck());
            assertEquals(105, s.lo.bufA.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(1, s.counter("atomics.executed"));
            s.assertConnected();
        }
    }

    /** A type 2 zero-based window: atomics address from the window start and stop at its end. */
    @Test
    void shouldRunAtomicsThroughAZeroBasedType2WindowAndRefuseBeyondIt() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int key = (mw.rKey() & ~0xFF) | ((mw.rKey() + 1) & 0xFF);
            pair.qpB.bindType2(1, mw, key, pair.mrB, pair.mrB.address() + 2048, 64,
                Access.REMOTE_ATOMIC | Access.ZERO_BASED, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            pair.bufB.set(LE_LONG, 2048 + 56, 7);
            pair.qpA.fetchAdd(2, 3, new DataSegment().set(pair.mrA, 0, 8), 56, key, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            assertEquals(7, pair.bufA.get(LE_LONG, 0));
            assertEquals(10, pair.bufB.get(LE_LONG, 2048 + 56));
            pair.qpA.fetchAdd(3, 3, new DataSegment().set(pair.mrA, 0, 8), 64, key, 0);
            assertEquals(WcStatus.BOUNDS_ERR, Tests.pollOne(pair.cqA).status());
            assertEquals(0, pair.bufB.get(LE_LONG, 2048 + 64));
        }
    }

    /** A window granting only REMOTE_READ refuses atomics. */
    @Test
    void shouldRefuseAtomicThroughType1WindowWithReadOnly() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final int key = pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address() + 1024, 64, Access.REMOTE_READ, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            pair.bufB.set(LE_LONG, 1024, 7);
            pair.qpA.fetchAdd(2, 3, new DataSegment().set(pair.mrA, 0, 8), pair.mrB.address() + 1024, key, 0);
            assertEquals(WcStatus.ACCESS_ERR, Tests.pollOne(pair.cqA).status());
            assertEquals(7, pair.bufB.get(LE_LONG, 1024));
        }
    }

    /** Atomics pipelined up to max_or: each original exact, in order, with a responder max_ir equal to it. */
    @Test
    void shouldPipelineMaxOrAtomicsAgainstEqualMaxIr() {
        try (Loopback pair = Loopback.open(new Loopback.Options().maxOr(2).maxIr(2).depth(64, 16))) {
            pair.bufB.set(LE_LONG, 0, 0);
            for (int round = 0; round < 50; round++) {
                for (int k = 0; k < 16; k++) {
                    pair.qpA.fetchAdd(k, 1, new DataSegment().set(pair.mrA, 8L * k, 8), pair.mrB.address(),
                        pair.mrB.rKey(), k == 15 ? 0 : WrFlags.SUPPRESSED);
                }
                final List<WorkCompletion> wcs = Tests.pollUntil(pair.cqA, 1);
                assertEquals(WcStatus.SUCCESS, wcs.get(0).status(), wcs.get(0).toString());
                for (int k = 0; k < 16; k++) {
                    assertEquals(round * 16L + k, pair.bufA.get(LE_LONG, 8L * k));
                }
            }
            assertEquals(800, pair.bufB.get(LE_LONG, 0));
        }
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "seed {0}")
    @org.junit.jupiter.params.provider.ValueSource(longs = {21, 22, 23, 24, 25, 26})
    void shouldCountExactlyWithMaxOrEqualMaxIrUnderHeavyFaults(final long seed) {
        final Configuration faulty = new Configuration().faults(new FaultPlan(0.1, 0.1, 0.1, 0.02, seed))
            .minRtoUs(300).maxRtoUs(5_000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(faulty).maxOr(2).maxIr(2)
            .depth(64, 16))) {
            pair.bufB.set(LE_LONG, 0, 0);
            final java.util.BitSet seen = new java.util.BitSet();
            final int total = 300;
            int posted = 0;
            int done = 0;
            final long deadline = System.nanoTime() + java.time.Duration.ofSeconds(60).toNanos();
            while (done < total) {
                while (posted < total && posted - done < 6) {
                    if (posted % 3 == 2) {
                        pair.qpA.read(posted, Loopback.sge(pair.mrA, 4096 + 64L * (posted % 6), 64), 1,
                            pair.mrB.address() + 1024, pair.mrB.rKey(), 0);
                    } else {
                        pair.qpA.fetchAdd(posted, 1, new DataSegment().set(pair.mrA, 8L * (posted % 6), 8),
                            pair.mrB.address(), pair.mrB.rKey(), 0);
                    }
                    posted++;
                }
                final WorkCompletion[] wc = {new WorkCompletion()};
                if (pair.cqA.poll(wc) == 1) {
                    assertEquals(WcStatus.SUCCESS, wc[0].status(), wc[0].toString());
                    assertEquals(done, wc[0].id());
                    if (done % 3 != 2) {
                        final long original = pair.bufA.get(LE_LONG, 8L * (done % 6));
                        assertTrue(!seen.get((int) original), "original " + original + " twice");
                        seen.set((int) original);
                    }
                    done++;
                } else {
                    Thread.yield();
                }
                assertTrue(System.nanoTime() - deadline < 0, "timed out at " + done);
            }
            assertEquals(200, pair.bufB.get(LE_LONG, 0));
            Tests.assertEngineHealthy(pair.nicA, pair.nicB);
        }
    }

    /**
     * Requests run strictly in sequence order (ibverbs.md 5.1; only a later SEND or RDMA WRITE may overtake an earlier
     * RDMA READ): a read followed by a fetch-and-add on a word the read covers must return the word as it was
     * before the add, the value the add itself reports as original. A read takes its data as each response frame
     * leaves, and the response window (4 frames here) holds most of this read's frames back until the peer acks: an
     * atomic run as it arrived had changed the word before the read's last frame took it.
     */
    @Test
    void shouldReturnTheValueBeforeALaterAtomicFromAnEarlierRead() {
        final Configuration small = new Configuration().loopMtu(1024).windowFrames(4)
            .minRtoUs(2_000_000).maxRtoUs(2_000_000);
        try (HostileSetup s = new HostileSetup(small)) {
            final int length = 16_000;
            final long word = length - 8;
            s.lo.bufA.set(ValueLayout.JAVA_LONG, word, 7);
            s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(length)
                .rspAck(0).send();
            s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address() + word).key(s.lo.mrA.rKey()).length(8)
                .operands(1L << 40, 0).rspAck(0).send();
            final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
            Long seen = null;
            Long original = null;
            while (seen == null || original == null) {
                assertTrue(System.nanoTime() - deadline < 0, "the responses never came");
                s.peer.expect("a response", r -> r.opcode() == Frame.OP_READ_RESP
                    || r.opcode() == Frame.OP_ATOMIC_RESP);
                for (final HostilePeer.Received r : s.peer.received()) {
                    if (r.opcode() == Frame.OP_ATOMIC_RESP) {
                        original = r.operand1();
                    } else if (r.opcode() == Frame.OP_READ_RESP && r.offset() <= word
                        && word + 8 <= (long) r.offset() + r.payloadLength()) {
                        seen = r.frame().get(LE_LONG, Frame.HEADER_LENGTH + word - r.offset());
                    }
                }
                s.peer.ack(); // lets the response window move on
            }
            assertEquals(7, original, "the add ran once, on 7");
            assertEquals(7 + (1L << 40), s.lo.bufA.get(ValueLayout.JAVA_LONG, word));
            assertEquals(7, seen, "the read ran before the add: it returns the word as it was before the add");
        }
    }

    /**
     * An atomic behind a read whose frames left as references to the memory (the in-process link lends payloads of
     * 2 KiB and more until the receiver takes them) must not change what those frames carry: it runs only once the
     * peer has acknowledged the read's response, so nothing it wrote can be in a read frame, first sent or resent.
     */
    @Test
    void shouldNotChangeALentReadResponseWithALaterAtomic() throws InterruptedException {
        final Configuration lends = new Configuration().loopMtu(8192).windowFrames(16);
        try (HostileSetup s = new HostileSetup(lends)) {
            final int length = 16_000; // two response frames of more than 2 KiB each
            final long word = length - 8;
            s.lo.bufA.set(ValueLayout.JAVA_LONG, word, 7);
            s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(length)
                .rspAck(0).send();
            s.peer.request(Frame.OP_FETCH_ADD).address(s.lo.bufA.address() + word).key(s.lo.mrA.rKey()).length(8)
                .operands(1L << 40, 0).rspAck(0).send();
            Thread.sleep(50); // the peer has taken nothing yet: the read's frames wait in the ring, lent
            assertEquals(0, s.counter("atomics.executed"), "the atomic ran before the read was acknowledged");
            final HostilePeer.Received last = s.peer.expect("the read's frame with the word",
                r -> r.opcode() == Frame.OP_READ_RESP && r.offset() <= word
                    && word + 8 <= (long) r.offset() + r.payloadLength());
            assertEquals(7, last.frame().get(LE_LONG, Frame.HEADER_LENGTH + word - last.offset()),
                "the read was answered before the add ran");
            s.peer.ack();
            assertEquals(7, s.peer.expect(Frame.OP_ATOMIC_RESP).operand1());
            assertEquals(7 + (1L << 40), s.lo.bufA.get(ValueLayout.JAVA_LONG, word));
        }
    }

    /**
     * An atomic accepted behind a read still being answered runs only when its turn comes; if its key was revoked
     * meanwhile (its region deregistered), it does not run, and fails as a request arriving then would.
     */
    @Test
    void shouldNotRunAnAtomicWhoseKeyWasRevokedBeforeItsTurn() {
        final Configuration small = new Configuration().loopMtu(1024).windowFrames(4)
            .minRtoUs(2_000_000).maxRtoUs(2_000_000);
        try (HostileSetup s = new HostileSetup(small)) {
            final MemorySegment counter = s.lo.arena.allocate(64, 64);
            counter.set(ValueLayout.JAVA_LONG, 0, 5);
            final MemoryRegion other = s.lo.pdA.regMr(counter, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC);
            s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(s.lo.mrA.rKey()).length(16_000)
                .rspAck(0).send();
            s.peer.request(Frame.OP_FETCH_ADD).address(counter.address()).key(other.rKey()).length(8)
                .operands(1, 0).rspAck(0).send();
            s.peer.expect(Frame.OP_READ_RESP); // both requests are in: the read's first frames went out
            assertEquals(0, s.counter("atomics.executed"), "the atomic waits for the read's frames");
            other.close();
            final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
            HostilePeer.Received nak = null;
            while (nak == null) {
                assertTrue(System.nanoTime() - deadline < 0, "no NAK for the revoked atomic");
                s.peer.ack();
                for (final HostilePeer.Received r : s.peer.received()) {
                    assertTrue(r.opcode() != Frame.OP_ATOMIC_RESP, "the revoked atomic was answered: " + r);
                    if (r.opcode() == Frame.OP_NAK) {
                        nak = r;
                    }
                }
            }
            assertEquals(0, s.counter("atomics.executed"));
            assertEquals(5, counter.get(ValueLayout.JAVA_LONG, 0), "no add landed");
        }
    }
}
