package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Several threads posting and polling on several queue pairs of the same two NICs; every byte and count checked. */
@Timeout(120)
class ConcurrencyTest {
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Receiver-not-ready is plain flow control here: the sender retries until the receiver catches up. */
    private static final Configuration PATIENT = new Configuration().rnrRetryCount(10_000_000).rnrDelayUs(100);

    @Test
    void shouldDeliverEveryMessageIntactWhenPairsRunInParallel() throws Exception {
        final int pairs = 3;
        final int messages = 600;
        final int depth = 16;
        final int slot = 20_000;
        try (Loopback fixture = Loopback.open(new Loopback.Options().configuration(PATIENT)
            .bufferBytes((long) pairs * depth * slot))) {
            final List<Callable<Void>> tasks = new ArrayList<>();
            for (int p = 0; p < pairs; p++) {
                final Connection c = new Connection(fixture, depth, depth);
                final long base = (long) p * depth * slot;
                final int pairId = p;
                tasks.add(() -> {
                    sender(c, fixture.mrA, base, slot, depth, messages, pairId);
                    return null;
                });
                tasks.add(() -> {
                    receiver(c, fixture.mrB, base, slot, depth, messages, pairId);
                    return null;
                });
            }
            runAll(tasks);
        }
    }

    private static void sender(final Connection c, final MemoryRegion mr, final long base, final int slot,
                               final int depth, final int messages, final int pairId) {
        final WorkCompletion[] wc = completions(depth);
        final DataSegment[] sge = {new DataSegment()};
        int outstanding = 0;
        int completed = 0;
        final long deadline = deadline();
        for (int i = 0; i < messages || completed < messages; ) {
            if (i < messages && outstanding < depth) {
                final long at = base + (long) (i % depth) * slot;
                final int length = length(i, slot);
                fillMessage(mr.segment().asSlice(at, length), pairId, i);
                c.a.send(i, new DataSegment[] {sge[0].set(mr, at, length)}, 1,
                    WrFlags.IMMEDIATE | (i % 3 == 0 ? WrFlags.SOLICITED : 0), i);
                outstanding++;
                i++;
                continue;
            }
            final int n = c.cqA.poll(wc);
            for (int k = 0; k < n; k++) {
                assertEquals(WcStatus.SUCCESS, wc[k].status(), wc[k].toString());
                assertEquals(completed, wc[k].id(), "send completions come in post order");
                completed++;
                outstanding--;
            }
            checkDeadline(deadline, "sender " + pairId + " at " + completed);
            if (n == 0) {
                Thread.yield();
            }
        }
    }

    private static void receiver(final Connection c, final MemoryRegion mr, final long base, final int slot,
                                 final int depth, final int messages, final int pairId) {
        final WorkCompletion[] wc = completions(depth);
        for (int i = 0; i < depth; i++) {
            c.b.recv(i, sge(mr, base + (long) i * slot, slot), 1);
        }
        int received = 0;
        final long deadline = deadline();
        while (received < messages) {
            final int n = c.cqB.poll(wc);
            for (int k = 0; k < n; k++) {
                final WorkCompletion w = wc[k];
                assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
                assertEquals(received, w.id(), "receives complete in post order");
                assertEquals(length(received, slot), w.length());
                assertEquals(received, w.immediate());
                final long at = base + (long) (received % depth) * slot;
                checkMessage(mr.segment().asSlice(at, w.length()), pairId, received);
                final int next = received + depth;
                if (next < messages) {
                    c.b.recv(next, sge(mr, at, slot), 1);
                }
                received++;
            }
            checkDeadline(deadline, "receiver " + pairId + " at " + received);
            if (n == 0) {
                Thread.yield();
            }
        }
    }

    @Test
    void shouldCompleteEveryRequestOnceWhenThreadsShareOneQueuePair() throws Exception {
        final int threads = 4;
        final int writesEach = 500;
        final int chunk = 256;
        try (Loopback pair = Loopback.open(new Loopback.Options().depth(threads * writesEach, 4)
            .cqSize(threads * writesEach).bufferBytes((long) threads * writesEach * chunk))) {
            final List<Callable<Void>> tasks = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int thread = t;
                tasks.add(() -> {
                    final DataSegment[] sge = {new DataSegment()};
                    for (int i = 0; i < writesEach; i++) {
                        final long offset = ((long) thread * writesEach + i) * chunk;
                        fillMessage(pair.bufA.asSlice(offset, chunk), thread, i);
                        pair.qpA.write((long) thread << 32 | i, new DataSegment[] {sge[0].set(pair.mrA, offset,
                            chunk)}, 1, pair.mrB.address() + offset, pair.mrB.rKey(), 0, 0);
                    }
                    return null;
                });
            }
            // two pollers share the completion queue: each completion is taken exactly once
            final ConcurrentHashMap<Long, Boolean> seen = new ConcurrentHashMap<>();
            final AtomicInteger taken = new AtomicInteger();
            final int total = threads * writesEach;
            for (int t = 0; t < 2; t++) {
                tasks.add(() -> {
                    final WorkCompletion[] wc = completions(16);
                    final long deadline = deadline();
                    while (taken.get() < total) {
                        final int n = pair.cqA.poll(wc);
                        for (int k = 0; k < n; k++) {
                            assertEquals(WcStatus.SUCCESS, wc[k].status(), wc[k].toString());
                            if (seen.put(wc[k].id(), Boolean.TRUE) != null) {
                                fail("completion " + wc[k] + " taken twice");
                            }
                            taken.incrementAndGet();
                        }
                        checkDeadline(deadline, "polling at " + taken.get());
                        if (n == 0) {
                            Thread.yield();
                        }
                    }
                    return null;
                });
            }
            runAll(tasks);
            assertEquals(total, seen.size());
            Tests.assertSameBytes(pair.bufA, pair.bufB);
            Tests.assertEngineHealthy(pair.nicA, pair.nicB);
        }
    }

    @Test
    void shouldCountExactlyWhenAtomicsRaceFromSeveralQueuePairs() throws Exception {
        final int connections = 4;
        final int addsEach = 400;
        final int swapsEach = 100;
        try (Loopback fixture = Loopback.open(new Loopback.Options().maxOr(8).maxIr(8))) {
            final long counter = fixture.mrB.address() + 64;
            final long swapped = fixture.mrB.address() + 128;
            fixture.bufB.set(LE_LONG, 64, 0);
            fixture.bufB.set(LE_LONG, 128, 0);
            final List<Callable<Void>> tasks = new ArrayList<>();
            final List<BitSet> originals = new ArrayList<>();
            for (int t = 0; t < connections; t++) {
                final Connection c = new Connection(fixture, 16, 1);
                final long local = 4096L * (t + 1);
                final BitSet seen = new BitSet();
                originals.add(seen);
                tasks.add(() -> {
                    final WorkCompletion[] wc = completions(1);
                    final DataSegment result = new DataSegment().set(fixture.mrA, local, 8);
                    for (int i = 0; i < addsEach; i++) {
                        c.a.fetchAdd(i, 1, result, counter, fixture.mrB.rKey(), 0);
                        awaitOne(c.cqA, wc);
                        assertEquals(WcType.FETCH_ADD, wc[0].type());
                        seen.set((int) fixture.bufA.get(LE_LONG, local));
                    }
                    // increments by compare-and-swap: retry until the value read is the value replaced
                    for (int i = 0; i < swapsEach; i++) {
                        long expected = 0;
                        while (true) {
                            c.a.compExch(i, expected, expected + 1, result, swapped, fixture.mrB.rKey(), 0);
                            awaitOne(c.cqA, wc);
                            final long original = fixture.bufA.get(LE_LONG, local);
                            if (original == expected) {
                                break;
                            }
                            expected = original;
                        }
                    }
                    return null;
                });
            }
            runAll(tasks);
            assertEquals((long) connections * addsEach, fixture.bufB.get(LE_LONG, 64));
            assertEquals((long) connections * swapsEach, fixture.bufB.get(LE_LONG, 128));
            final BitSet all = new BitSet();
            int sum = 0;
            for (final BitSet seen : originals) {
                sum += seen.cardinality();
                all.or(seen);
            }
            assertEquals(connections * addsEach, sum, "every fetch-and-add saw its own original value");
            assertEquals(connections * addsEach, all.cardinality());
            assertEquals(connections * addsEach, all.nextClearBit(0), "the originals are 0 .. n-1");
            Tests.assertEngineHealthy(fixture.nicA, fixture.nicB);
        }
    }

    @Test
    void shouldDeliverWhenReceiverBlocksOnEventsInsteadOfPolling() throws Exception {
        final int messages = 400;
        final int depth = 8;
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(PATIENT))) {
            for (int i = 0; i < depth; i++) {
                pair.qpB.recv(i, sge(pair.mrB, 1024L * i, 1024), 1);
            }
            final Callable<Void> receiver = () -> {
                final WorkCompletion[] wc = completions(4);
                final EventRecord record = new EventRecord();
                int received = 0;
                int waits = 0;
                while (received < messages) {
                    pair.cqB.arm(CqArm.NEXT_SIGNALED, 0); // arm, poll, then wait: no completion is missed
                    final int n = pair.cqB.poll(wc);
                    for (int k = 0; k < n; k++) {
                        assertEquals(WcStatus.SUCCESS, wc[k].status(), wc[k].toString());
                        assertEquals(received, wc[k].id());
                        assertEquals(received, wc[k].immediate());
                        final long at = 1024L * (received % depth);
                        assertEquals(received, pair.bufB.get(ValueLayout.JAVA_INT, at));
                        if (received + depth < messages) {
                            pair.qpB.recv(received + depth, sge(pair.mrB, at, 1024), 1);
                        }
                        received++;
                    }
                    if (n == 0) {
                        // blocked here, B's frames are served by its NIC's progress thread
                        pair.eventsB.waitOn(TimeUnit.SECONDS.toMicros(10), record);
                        assertEquals(EventCode.CQ_COMPLETION, record.code(), record.toString());
                        waits++;
                    }
                }
                assertTrue(waits > 0, "the receiver never blocked");
                return null;
            };
            final Callable<Void> sender = () -> {
                final WorkCompletion[] wc = completions(4);
                final long deadline = deadline();
                int completed = 0;
                for (int i = 0; i < messages || completed < messages; ) {
                    if (i < messages && i - completed < depth) {
                        final long at = 64L * (i % depth);
                        pair.bufA.set(ValueLayout.JAVA_INT, at, i);
                        pair.qpA.send(i, sge(pair.mrA, at, 4), 1, WrFlags.IMMEDIATE, i);
                        i++;
                        continue;
                    }
                    final int n = pair.cqA.poll(wc);
                    for (int k = 0; k < n; k++) {
                        assertEquals(WcStatus.SUCCESS, wc[k].status(), wc[k].toString());
                        completed++;
                    }
                    checkDeadline(deadline, "sender at " + completed);
                    if (n == 0) {
                        Thread.yield();
                    }
                }
                return null;
            };
            runAll(List.of(receiver, sender));
            Tests.assertEngineHealthy(pair.nicA, pair.nicB);
        }
    }

    @Test
    void shouldHandEachEventToOneWaiterWhenSeveralWait() throws Exception {
        try (Det det = Det.open()) {
            final EventQueue events = det.createEvent(null);
            final int waiters = 4;
            final int total = 2000;
            final ConcurrentHashMap<Integer, Boolean> seen = new ConcurrentHashMap<>();
            final List<Callable<Void>> tasks = new ArrayList<>();
            for (int w = 0; w < waiters; w++) {
                tasks.add(() -> {
                    final EventRecord record = new EventRecord();
                    while (true) {
                        events.waitOn(TimeUnit.SECONDS.toMicros(20), record);
                        final int value = (Integer) record.handle();
                        if (value < 0) {
                            return null;
                        }
                        assertTrue(seen.put(value, Boolean.TRUE) == null, "event " + value + " taken twice");
                    }
                });
            }
            tasks.add(() -> {
                for (int i = 0; i < total; i++) {
                    events.generate(i);
                }
                for (int w = 0; w < waiters; w++) {
                    events.generate(-1);
                }
                return null;
            });
            runAll(tasks);
            assertEquals(total, seen.size());
        }
    }

    /** One more queue pair on each NIC of a fixture, with completion queues of its own, connected. */
    private static final class Connection {
        final CompletionQueue cqA;
        final CompletionQueue cqB;
        final QueuePair a;
        final QueuePair b;

        Connection(final Loopback fixture, final int depth, final int sges) {
            cqA = fixture.nicA.createCq(depth * 2, null);
            cqB = fixture.nicB.createCq(depth * 2, null);
            a = fixture.pdA.createQp(new QpCreate(cqA, cqA, depth, depth, sges, sges, 8, 8));
            b = fixture.pdB.createQp(new QpCreate(cqB, cqB, depth, depth, sges, sges, 8, 8));
            Loopback.connect(a, fixture.nicB, b);
            Loopback.connect(b, fixture.nicA, a);
        }
    }

    private static void runAll(final List<Callable<Void>> tasks) throws Exception {
        final ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
        try {
            final List<Future<Void>> futures = new ArrayList<>();
            for (final Callable<Void> task : tasks) {
                futures.add(pool.submit(task));
            }
            for (final Future<Void> future : futures) {
                future.get(90, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), "worker threads did not stop");
        }
    }

    private static void awaitOne(final CompletionQueue cq, final WorkCompletion[] wc) {
        final long deadline = deadline();
        while (cq.poll(wc) == 0) {
            checkDeadline(deadline, "a completion");
            Thread.yield();
        }
        assertEquals(WcStatus.SUCCESS, wc[0].status(), wc[0].toString());
    }

    private static int length(final int message, final int slot) {
        return message % 50 == 49 ? slot : 1 + (message * 7919) % 4096;
    }

    private static void fillMessage(final MemorySegment into, final int stream, final int message) {
        Tests.fill(into, (long) stream << 32 | message);
    }

    private static void checkMessage(final MemorySegment got, final int stream, final int message) {
        final MemorySegment expected = MemorySegment.ofArray(new byte[(int) got.byteSize()]);
        fillMessage(expected, stream, message);
        final long at = expected.mismatch(got);
        if (at != -1) {
            fail("stream " + stream + " message " + message + " differs at byte " + at);
        }
    }

    private static WorkCompletion[] completions(final int n) {
        final WorkCompletion[] wc = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            wc[i] = new WorkCompletion();
        }
        return wc;
    }

    private static long deadline() {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    }

    private static void checkDeadline(final long deadline, final String what) {
        if (System.nanoTime() - deadline > 0) {
            fail("timed out: " + what);
        }
    }
}
