package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Threads that each own a queue pair of the same NIC (at both ends), posting and polling at once while the link
 * loses, duplicates and reorders frames: sends, RDMA writes and receives race through one engine, and completions
 * are taken while other threads' engine passes add to the queues. Every byte must arrive exactly once, and every
 * work request complete exactly once, in post order.
 */
@Timeout(120)
class ThreadsPerQpTest {
    private static final int CONNECTIONS = 4;
    private static final int MESSAGES = 300;
    private static final int DEPTH = 16;
    private static final int SLOT = 8192;
    /** Each connection's share of a buffer: receive slots, then one distinct area per RDMA write. */
    private static final long SHARE = (long) DEPTH * SLOT + (long) MESSAGES * SLOT;

    private static Loopback lossy(final long seed) {
        final Configuration faulty = new Configuration().faults(new FaultPlan(0.03, 0.02, 0.02, 0.01, seed))
            .minRtoUs(300).maxRtoUs(10_000).rnrRetryCount(1_000_000).rnrDelayUs(200);
        return Loopback.open(new Loopback.Options().configuration(faulty).bufferBytes(CONNECTIONS * SHARE));
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 12})
    void shouldDeliverEveryByteOnceWhenThreadsDriveTheirOwnQueuePairsUnderLoss(final long seed) throws Exception {
        try (Loopback fixture = lossy(seed)) {
            final List<Callable<Void>> tasks = new ArrayList<>();
            for (int c = 0; c < CONNECTIONS; c++) {
                final CompletionQueue cqA = fixture.nicA.createCq(DEPTH * 2, null);
                final CompletionQueue cqB = fixture.nicB.createCq(DEPTH * 2, null);
                final QueuePair a = fixture.pdA.createQp(new QpCreate(cqA, cqA, DEPTH, DEPTH, 1, 1, 4, 4));
                final QueuePair b = fixture.pdB.createQp(new QpCreate(cqB, cqB, DEPTH, DEPTH, 1, 1, 4, 4));
                Loopback.connect(a, fixture.nicB, b);
                Loopback.connect(b, fixture.nicA, a);
                final int stream = c;
                final long base = c * SHARE;
                tasks.add(() -> {
                    sender(fixture, a, cqA, base, stream);
                    return null;
                });
                tasks.add(() -> {
                    receiver(fixture, b, cqB, base, stream);
                    return null;
                });
            }
            runAll(tasks);
            for (int c = 0; c < CONNECTIONS; c++) {
                for (int i = 0; i < MESSAGES; i++) {
                    if (isWrite(i)) {
                        final long at = writeArea(c * SHARE, i);
                        check(fixture.bufB.asSlice(at, length(i)), c, i);
                    }
                }
            }
            Tests.assertEngineHealthy(fixture.nicA, fixture.nicB);
        }
    }

    /** Posts every message (a send, or an RDMA write into its own area), each completion checked once, in order. */
    private static void sender(final Loopback fixture, final QueuePair qp, final CompletionQueue cq, final long base,
                               final int stream) {
        final WorkCompletion[] wc = completions(4);
        final DataSegment[] sge = {new DataSegment()};
        final long deadline = deadline();
        int posted = 0;
        int completed = 0;
        while (completed < MESSAGES) {
            if (posted < MESSAGES && posted - completed < DEPTH) {
                final int i = posted;
                final long at = base + (long) (i % DEPTH) * SLOT;
                fill(fixture.bufA.asSlice(at, length(i)), stream, i);
                sge[0].set(fixture.mrA, at, length(i));
                if (isWrite(i)) {
                    qp.write(i, sge, 1, fixture.mrB.address() + writeArea(base, i), fixture.mrB.rKey(), 0, 0);
                } else {
                    qp.send(i, sge, 1, WrFlags.IMMEDIATE, i);
                }
                posted++;
                continue;
            }
            final int n = cq.poll(wc);
            for (int k = 0; k < n; k++) {
                assertEquals(WcStatus.SUCCESS, wc[k].status(), wc[k].toString());
                assertEquals(completed, wc[k].id(), "stream " + stream + ": completions once each, in post order");
                assertEquals(isWrite(completed) ? WcType.RDMA_WRITE : WcType.SEND, wc[k].type());
                completed++;
            }
            checkDeadline(deadline, "sender " + stream + " at " + completed);
            if (n == 0) {
                Thread.yield();
            }
        }
        assertEquals(0, cq.poll(wc), "no completion beyond the work posted");
    }

    /** Receives every send once, in order, and checks its bytes. */
    private static void receiver(final Loopback fixture, final QueuePair qp, final CompletionQueue cq,
                                 final long base, final int stream) {
        final WorkCompletion[] wc = completions(4);
        for (int r = 0; r < DEPTH; r++) {
            qp.recv(r, sge(fixture.mrB, base + (long) r * SLOT, SLOT), 1);
        }
        final int sends = sendCount();
        final long deadline = deadline();
        int received = 0;
        int message = 0;
        while (received < sends) {
            final int n = cq.poll(wc);
            for (int k = 0; k < n; k++) {
                final WorkCompletion w = wc[k];
                assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
                assertEquals(WcType.RECV, w.type());
                assertEquals(received, w.id(), "stream " + stream + ": receives complete once each, in order");
                while (isWrite(message)) {
                    message++;
                }
                assertEquals(message, w.immediate(), "stream " + stream + ": every send once, in order");
                assertEquals(length(message), w.length());
                final long at = base + (long) (received % DEPTH) * SLOT;
                check(fixture.bufB.asSlice(at, w.length()), stream, message);
                if (received + DEPTH < sends) {
                    qp.recv(received + DEPTH, sge(fixture.mrB, at, SLOT), 1);
                }
                received++;
                message++;
            }
            checkDeadline(deadline, "receiver " + stream + " at " + received);
            if (n == 0) {
                Thread.yield();
            }
        }
        assertEquals(0, cq.poll(wc), "no receive beyond the sends");
    }

    private static boolean isWrite(final int message) {
        return message % 4 == 3;
    }

    private static int sendCount() {
        int sends = 0;
        for (int i = 0; i < MESSAGES; i++) {
            sends += isWrite(i) ? 0 : 1;
        }
        return sends;
    }

    private static long writeArea(final long base, final int message) {
        return base + (long) DEPTH * SLOT + (long) message * SLOT;
    }

    /** 1 B to two frames and more: single-frame and multi-frame messages interleave. */
    private static int length(final int message) {
        return 1 + (message * 7919) % SLOT;
    }

    private static void fill(final MemorySegment into, final int stream, final int message) {
        Tests.fill(into, (long) stream << 32 | message);
    }

    private static void check(final MemorySegment got, final int stream, final int message) {
        final MemorySegment expected = MemorySegment.ofArray(new byte[(int) got.byteSize()]);
        fill(expected, stream, message);
        final long at = expected.mismatch(got);
        if (at != -1) {
            fail("stream " + stream + " message " + message + " differs at byte " + at);
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
