package io.jdet.perf.jdet;

import io.jdet.Configuration;
import io.jdet.perf.TestKind;
import io.jdet.perf.rig.Abort;
import io.jdet.perf.rig.BandwidthRig;
import io.jdet.perf.rig.LatencyRig;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.Spinner;
import io.jdet.perf.rig.StopSignal;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The measured loops allocate nothing in steady state: the measuring thread's allocated bytes over many round trips
 * or messages stay below one byte per operation (a one-off allocation is tolerated, a per-operation one is not).
 * This covers the perf tool's loops and the verbs they call.
 */
class AllocationTest {
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private record Pair(JdetPeer peerA, JdetPeer peerB, JdetQp a, JdetQp b) implements AutoCloseable {
        static Pair open(final TestKind kind, final int size, final int burst, final long total) {
            final Configuration configuration = new Configuration();
            final JdetPeer peerA = JdetPeer.open("loop:alloc", configuration, false);
            final JdetPeer peerB = JdetPeer.open("loop:alloc", configuration, false);
            final QpShape shape = QpShape.of(kind, size, burst, total, false);
            final Abort abort = new Abort();
            final JdetQp a = new JdetQp(peerA, shape, false, 4, new Spinner(TIMEOUT_NS, abort));
            final JdetQp b = new JdetQp(peerB, shape, false, 4, new Spinner(TIMEOUT_NS, abort));
            a.connect(b.localInfo());
            b.connect(a.localInfo());
            return new Pair(peerA, peerB, a, b);
        }

        @Override
        public void close() {
            a.close();
            b.close();
            peerA.close();
            peerB.close();
        }
    }

    @Test
    void shouldNotAllocatePerRoundTripInTheSendPingPong() throws Exception {
        final int warmup = 20_000;
        final int measured = 20_000;
        try (Arena arena = Arena.ofShared(); Pair pair = Pair.open(TestKind.LAT_SEND, 64, 1, warmup + measured)) {
            final Pattern pattern = new Pattern(arena, 64);
            final JdetPingPong initiator = new JdetPingPong(pair.a(), true, pattern);
            final JdetPingPong responder = new JdetPingPong(pair.b(), true, pattern);
            final CompletableFuture<Void> echo = CompletableFuture.runAsync(
                () -> LatencyRig.respond(responder, 0, warmup + measured));
            final Histogram histogram = LatencyRig.newHistogram();
            LatencyRig.initiate(initiator, 0, warmup, histogram);
            final long before = THREADS.getCurrentThreadAllocatedBytes();
            for (long seq = warmup; seq < warmup + measured; seq++) {
                initiator.roundTrip(seq);
            }
            final long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
            echo.get(60, TimeUnit.SECONDS);
            assertTrue(allocated < measured, allocated + " bytes allocated over " + measured + " round trips");
        }
    }

    @Test
    void shouldNotAllocatePerMessageInBurstWrites() throws Exception {
        final int burst = 100;
        final int warmup = 20_000;
        final int measured = 20_000;
        try (Arena arena = Arena.ofShared();
             Pair pair = Pair.open(TestKind.BW_WRITE, 256, burst, warmup + measured)) {
            final Pattern pattern = new Pattern(arena, 256);
            final JdetStream sender = new JdetStream(pair.a(), false, pattern);
            final JdetStream target = new JdetStream(pair.b(), false, pattern);
            final AtomicBoolean done = new AtomicBoolean();
            final CompletableFuture<Void> serve = CompletableFuture.runAsync(
                () -> target.receive(warmup + measured, burst, new StopSignal() {
                    @Override
                    public boolean stopRequested() {
                        return done.get();
                    }

                    @Override
                    public boolean awaitStop(final long timeoutNs) {
                        return done.get();
                    }
                }));
            BandwidthRig.send(sender, 0, warmup, burst);
            final long before = THREADS.getCurrentThreadAllocatedBytes();
            for (long seq = warmup; seq < warmup + measured; seq += burst) {
                sender.burst(seq, burst);
            }
            final long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
            done.set(true);
            serve.get(60, TimeUnit.SECONDS);
            assertTrue(allocated < measured, allocated + " bytes allocated over " + measured + " writes");
        }
    }
}
