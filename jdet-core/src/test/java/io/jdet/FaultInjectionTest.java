package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertSameBytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every verb over a fabric that loses, duplicates, reorders and corrupts frames: each byte still arrives exactly
 * once, and atomics count exactly (a retransmitted atomic never runs twice).
 */
@Timeout(120)
class FaultInjectionTest {
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int MB = 1 << 20;

    private static Loopback lossy(final long seed) {
        // Go-back-N recovers a lost or reordered frame only by a retransmission timeout, which backs off: a small
        // ceiling keeps this suite fast without changing what is checked.
        final Configuration faulty = new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0.01, seed))
            .minRtoUs(300).maxRtoUs(10_000).rnrRetryCount(1_000_000).rnrDelayUs(200);
        return Loopback.open(new Loopback.Options().configuration(faulty).bufferBytes(4L * MB).depth(32, 32)
            .maxOr(8).maxIr(8));
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3})
    void shouldDeliverEverySendOnceWhenFramesAreLost(final long seed) {
        try (Loopback pair = lossy(seed)) {
            final int messages = 120;
            final int slot = 200_000;
            final int depth = 16;
            Tests.fill(pair.bufA.asSlice(0, 2L * MB), seed);
            for (int i = 0; i < depth; i++) {
                pair.qpB.recv(i, sge(pair.mrB, (long) i * slot, slot), 1);
            }
            int received = 0;
            int sent = 0;
            int acked = 0;
            final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos() * 3;
            while (received < messages || acked < messages) {
                if (sent < messages && sent - acked < depth) {
                    pair.qpA.send(sent, sge(pair.mrA, offset(sent), length(sent, slot)), 1, WrFlags.IMMEDIATE,
                        sent);
                    sent++;
                    continue;
                }
                for (final WorkCompletion wc : poll(pair.cqB)) {
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                    assertEquals(received, wc.id(), "each message once, in order");
                    assertEquals(received, wc.immediate());
                    assertEquals(length(received, slot), wc.length());
                    final long at = (long) (received % depth) * slot;
                    assertSameBytes(pair.bufA.asSlice(offset(received), wc.length()), pair.bufB.asSlice(at,
                        wc.length()));
                    if (received + depth < messages) {
                        pair.qpB.recv(received + depth, sge(pair.mrB, at, slot), 1);
                    }
                    received++;
                }
                for (final WorkCompletion wc : poll(pair.cqA)) {
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                    assertEquals(acked++, wc.id());
                }
                assertTrue(System.nanoTime() - deadline < 0, "timed out at " + received + "/" + acked);
            }
            Tests.assertNoCompletion(pair.cqB, 20);
            assertFaultsInjected(pair);
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {4, 5})
    void shouldPlaceEveryWriteAndReadOnceWhenFramesAreLost(final long seed) {
        try (Loopback pair = lossy(seed)) {
            final int length = MB + 1234;
            Tests.fill(pair.bufA.asSlice(0, length), seed);
            Tests.fill(pair.bufB.asSlice(2L * MB, length), seed + 100);
            final int pieces = 40;
            final int piece = length / pieces;
            pair.qpB.recv(500, sge(pair.mrB, 4L * MB - 64, 8), 1);
            int signaled = 0;
            long lastId = -1;
            for (int i = 0; i < pieces; i++) {
                final int flags = i == pieces - 1 ? WrFlags.IMMEDIATE : i % 4 == 0 ? 0 : WrFlags.SUPPRESSED;
                pair.qpA.write(i, sge(pair.mrA, (long) i * piece, piece), 1, pair.mrB.address() + (long) i * piece,
                    pair.mrB.rKey(), flags, 4242);
                if ((flags & WrFlags.SUPPRESSED) == 0) {
                    signaled++;
                }
                if (i % 10 == 9) {
                    for (final WorkCompletion wc : Tests.pollUntil(pair.cqA, signaled)) {
                        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                        assertTrue(wc.id() > lastId, "in post order");
                        lastId = wc.id();
                    }
                    signaled = 0;
                }
            }
            final WorkCompletion withImmediate = Tests.pollOne(pair.cqB);
            assertEquals(500, withImmediate.id());
            assertEquals(4242, withImmediate.immediate());
            assertEquals(piece, withImmediate.length());
            assertSameBytes(pair.bufA.asSlice(0, (long) pieces * piece), pair.bufB.asSlice(0, (long) pieces * piece));

            pair.qpA.read(100, sge(pair.mrA, 2L * MB, length), 1, pair.mrB.address() + 2L * MB, pair.mrB.rKey(),
                0);
            for (int i = 0; i < 20; i++) {
                pair.qpA.read(101 + i, sge(pair.mrA, 3L * MB + MB / 2 + 1000L * i, 1000), 1,
                    pair.mrB.address() + 2L * MB + 1000L * i, pair.mrB.rKey(), 0);
            }
            final List<WorkCompletion> reads = Tests.pollUntil(pair.cqA, 21);
            for (int i = 0; i < 21; i++) {
                assertEquals(WcStatus.SUCCESS, reads.get(i).status(), reads.get(i).toString());
                assertEquals(100 + i, reads.get(i).id());
            }
            assertEquals(length, reads.get(0).length());
            assertSameBytes(pair.bufB.asSlice(2L * MB, length), pair.bufA.asSlice(2L * MB, length));
            assertSameBytes(pair.bufB.asSlice(2L * MB, 20_000), pair.bufA.asSlice(3L * MB + MB / 2, 20_000));
            assertFaultsInjected(pair);
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {6, 7})
    void shouldCountAtomicsExactlyWhenFramesAreLost(final long seed) {
        try (Loopback pair = lossy(seed)) {
            final int adds = 400;
            pair.bufB.set(LE_LONG, 0, 1000);
            final BitSet originals = new BitSet();
            for (int i = 0; i < adds; i += 8) {
                for (int k = 0; k < 8; k++) {
                    pair.qpA.fetchAdd(i + k, 1, new DataSegment().set(pair.mrA, 8L * k, 8), pair.mrB.address(),
                        pair.mrB.rKey(), 0);
                }
                final List<WorkCompletion> wcs = Tests.pollUntil(pair.cqA, 8);
                for (int k = 0; k < 8; k++) {
                    assertEquals(WcStatus.SUCCESS, wcs.get(k).status(), wcs.get(k).toString());
                    assertEquals(i + k, wcs.get(k).id());
                    final long original = pair.bufA.get(LE_LONG, 8L * k);
                    assertTrue(original >= 1000 && original < 1000 + adds, "original " + original);
                    assertTrue(!originals.get((int) original - 1000), "original " + original + " seen twice");
                    originals.set((int) original - 1000);
                }
            }
            assertEquals(1000 + adds, pair.bufB.get(LE_LONG, 0), "every add applied exactly once");
            assertEquals(adds, originals.cardinality());
            pair.bufB.set(LE_LONG, 8, 0);
            for (int i = 0; i < 100; i++) {
                pair.qpA.compExch(i, i, i + 1, new DataSegment().set(pair.mrA, 0, 8), pair.mrB.address() + 8,
                    pair.mrB.rKey(), 0);
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
                assertEquals(i, pair.bufA.get(LE_LONG, 0), "each swap saw the previous one exactly");
            }
            assertEquals(100, pair.bufB.get(LE_LONG, 8));
            assertFaultsInjected(pair);
        }
    }

    @org.junit.jupiter.api.Test
    void shouldDeliverEverythingWhenTheReceiveRingIsTiny() {
        // eight frames of ring: the link refuses frames and the senders must wait for room, in both directions
        final Configuration tiny = new Configuration().loopRingFrames(8).rnrRetryCount(1_000_000).rnrDelayUs(100);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(tiny).bufferBytes(8L * MB))) {
            Tests.fill(pair.bufA.asSlice(0, 3L * MB), 11);
            Tests.fill(pair.bufB.asSlice(0, MB), 12);
            // A writes A[0, 3 MB) to B[1 MB, 4 MB) and reads B[0, 1 MB) into A[3 MB, 4 MB), while B writes
            // B[0, 1 MB) to A[4 MB, 5 MB)
            pair.qpA.write(2, sge(pair.mrA, 0, 3 * MB), 1, pair.mrB.address() + MB, pair.mrB.rKey(), 0, 0);
            pair.qpA.read(3, sge(pair.mrA, 3L * MB, MB), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            pair.qpB.write(4, sge(pair.mrB, 0, MB), 1, pair.mrA.address() + 4L * MB, pair.mrA.rKey(), 0, 0);
            final List<WorkCompletion> atA = Tests.expectSuccess(pair.cqA, 2);
            assertEquals(2, atA.get(0).id());
            assertEquals(3, atA.get(1).id());
            assertEquals(4, Tests.expectSuccess(pair.cqB, 1).get(0).id());
            assertSameBytes(pair.bufA.asSlice(0, 3L * MB), pair.bufB.asSlice(MB, 3L * MB));
            assertSameBytes(pair.bufB.asSlice(0, MB), pair.bufA.asSlice(3L * MB, MB));
            assertSameBytes(pair.bufB.asSlice(0, MB), pair.bufA.asSlice(4L * MB, MB));
            assertTrue(pair.nicA.counters().get("link.busy") + pair.nicB.counters().get("link.busy") > 0,
                "the ring pushed back");
        }
    }

    @ParameterizedTest(name = "fetch-and-add: {0}")
    @ValueSource(booleans = {true, false})
    void shouldNotRetransmitCompletedRequestWhenItsAcknowledgementIsLate(final boolean atomic) {
        // A delayed ack far beyond the retransmission timeout: only the response itself can acknowledge the request.
        final Configuration lateAcks = new Configuration().ackDelayUs(5_000_000).minRtoUs(100).maxRtoUs(200);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(lateAcks))) {
            for (int i = 0; i < 3; i++) {
                if (atomic) {
                    pair.qpA.fetchAdd(i, 1, new DataSegment().set(pair.mrA, 0, 8), pair.mrB.address(),
                        pair.mrB.rKey(), 0);
                } else {
                    pair.qpA.read(i, sge(pair.mrA, 0, 64), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
                }
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
                Tests.assertNoCompletion(pair.cqA, 5); // several retransmission timeouts pass while polling
            }
            if (atomic) {
                assertEquals(3, pair.bufB.get(LE_LONG, 0));
            }
            assertEquals(QpState.CONNECTED, pair.qpA.query().state());
            assertEquals(QpState.CONNECTED, pair.qpB.query().state());
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {8, 9})
    void shouldKeepBothDirectionsExactWhenBothSidesRunMixedVerbsOverFaults(final long seed) throws Exception {
        try (Loopback pair = lossy(seed)) {
            final Side a = new Side(pair.qpA, pair.cqA, pair.mrA, pair.mrB, 1);
            final Side b = new Side(pair.qpB, pair.cqB, pair.mrB, pair.mrA, 2);
            final java.util.concurrent.CompletableFuture<Void> other = java.util.concurrent.CompletableFuture
                .runAsync(b::run);
            a.run();
            other.get(90, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(Side.ATOMICS, pair.bufB.get(LE_LONG, Side.COUNTER), "A's adds at B");
            assertEquals(Side.ATOMICS, pair.bufA.get(LE_LONG, Side.COUNTER), "B's adds at A");
            assertFaultsInjected(pair);
        }
    }

    /** One end of a bidirectional run: sends to the peer, receives the peer's sends, reads and adds at the peer. */
    private static final class Side {
        static final int MESSAGES = 150;
        static final int READS = 30;
        static final int ATOMICS = 60;
        static final long SOURCE = 0;
        static final long SLOTS = MB;
        static final int SLOT = 64 * 1024;
        static final int DEPTH = 8;
        static final long READ_ZONE = 2L * MB;
        static final long READ_INTO = 3L * MB;
        static final long COUNTER = 3L * MB + MB / 2;
        static final long ORIGINAL = COUNTER + 64;

        final QueuePair qp;
        final CompletionQueue cq;
        final MemoryRegion mine;
        final MemoryRegion peer;
        final long id;

        Side(final QueuePair qp, final CompletionQueue cq, final MemoryRegion mine, final MemoryRegion peer,
             final long id) {
            this.qp = qp;
            this.cq = cq;
            this.mine = mine;
            this.peer = peer;
            this.id = id;
            Tests.fill(mine.segment().asSlice(SOURCE, MB), id);
            Tests.fill(mine.segment().asSlice(READ_ZONE, MB), id + 10); // never written during the run
            mine.segment().set(LE_LONG, COUNTER, 0);
        }

        void run() {
            for (int i = 0; i < DEPTH; i++) {
                qp.recv(i, sge(mine, SLOTS + (long) i * SLOT, SLOT), 1);
            }
            int sent = 0;
            int sendsDone = 0;
            int received = 0;
            int reads = 0;
            int readsDone = 0;
            int adds = 0;
            int addsDone = 0;
            final BitSet originals = new BitSet();
            final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos() * 6;
            final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            while (sendsDone < MESSAGES || received < MESSAGES || readsDone < READS || addsDone < ATOMICS) {
                final int inFlight = sent - sendsDone + reads - readsDone + adds - addsDone;
                if (inFlight < 12) {
                    if (sent < MESSAGES) {
                        qp.send(sent, sge(mine, offset(sent) % (MB - SLOT), messageLength(sent)), 1,
                            WrFlags.IMMEDIATE, sent);
                        sent++;
                    }
                    if (reads < READS && sent % 5 == 0) {
                        qp.read(1_000_000 + reads, sge(mine, READ_INTO + (long) (reads % 4) * 8192, 8192), 1,
                            peer.address() + READ_ZONE + 8192L * reads, peer.rKey(), 0);
                        reads++;
                    }
                    if (adds < ATOMICS && sent % 2 == 0 && adds - addsDone < 1) {
                        qp.fetchAdd(2_000_000 + adds, 1, new DataSegment().set(mine, ORIGINAL, 8),
                            peer.address() + COUNTER, peer.rKey(), 0);
                        adds++;
                    }
                }
                final int n = cq.poll(wc);
                for (int k = 0; k < n; k++) {
                    final WorkCompletion w = wc[k];
                    assertEquals(WcStatus.SUCCESS, w.status(), "side " + id + ": " + w);
                    switch (w.type()) {
                        case SEND -> assertEquals(sendsDone++, w.id());
                        case RECV -> {
                            assertEquals(received, w.id());
                            assertEquals(received, w.immediate());
                            assertEquals(messageLength(received), w.length());
                            final long at = SLOTS + (long) (received % DEPTH) * SLOT;
                            checkPeerMessage(mine.segment().asSlice(at, w.length()), received);
                            if (received + DEPTH < MESSAGES) {
                                qp.recv(received + DEPTH, sge(mine, at, SLOT), 1);
                            }
                            received++;
                        }
                        case RDMA_READ -> {
                            final int r = (int) (w.id() - 1_000_000);
                            assertEquals(readsDone++, r);
                            assertSameBytes(peer.segment().asSlice(READ_ZONE + 8192L * r, 8192),
                                mine.segment().asSlice(READ_INTO + (long) (r % 4) * 8192, 8192));
                        }
                        case FETCH_ADD -> {
                            assertEquals(addsDone++, w.id() - 2_000_000);
                            final long original = mine.segment().get(LE_LONG, ORIGINAL);
                            assertTrue(!originals.get((int) original), "original " + original + " twice");
                            originals.set((int) original);
                        }
                        default -> throw new AssertionError("unexpected " + w);
                    }
                }
                if (n == 0) {
                    Thread.yield();
                }
                assertTrue(System.nanoTime() - deadline < 0, "side " + id + " timed out: sent " + sendsDone
                    + ", received " + received + ", reads " + readsDone + ", adds " + addsDone);
            }
        }

        private void checkPeerMessage(final java.lang.foreign.MemorySegment got, final int message) {
            final long from = offset(message) % (MB - SLOT);
            assertSameBytes(peer.segment().asSlice(SOURCE + from, got.byteSize()), got);
        }

        private static int messageLength(final int message) {
            return message % 7 == 0 ? SLOT : 1 + (message * 2_039) % 5_000;
        }
    }

    private static int length(final int message, final int slot) {
        return message % 10 == 0 ? slot : 1 + (message * 4099) % 3000;
    }

    private static long offset(final int message) {
        return (message * 977L) % MB;
    }

    private static List<WorkCompletion> poll(final CompletionQueue cq) {
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
            new WorkCompletion()};
        final int n = cq.poll(batch);
        if (n == 0) {
            Thread.yield();
        }
        return java.util.Arrays.stream(batch, 0, n).map(Tests::copy).toList();
    }

    /** Asserts that faults were injected and that neither engine caught a failure meanwhile. */
    private static void assertFaultsInjected(final Loopback pair) {
        long faults = 0;
        for (final Map<String, Long> counters : List.of(pair.nicA.counters(), pair.nicB.counters())) {
            faults += counters.get("fault.dropped") + counters.get("fault.duplicated")
                + counters.get("fault.reordered") + counters.get("fault.corrupted");
        }
        assertTrue(faults > 0, "faults were injected: " + pair.nicA.counters() + " " + pair.nicB.counters());
        Tests.assertEngineHealthy(pair.nicA, pair.nicB); // the faults were absorbed by the protocol, not caught
    }
}
