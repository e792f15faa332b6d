package io.jdet.perf.rig;

import io.jdet.perf.PerfException;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rig against an in-memory transport, and the rig's helpers. */
class RigTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    /** One end of an in-memory ping-pong: a counter it writes to send and one it watches to receive. */
    private static final class MemoryPingPong implements PingPong {
        private final AtomicLong outbox;
        private final AtomicLong inbox;
        private long polls;

        MemoryPingPong(final AtomicLong outbox, final AtomicLong inbox) {
            this.outbox = outbox;
            this.inbox = inbox;
        }

        @Override
        public void send(final long seq) {
            outbox.set(seq);
        }

        @Override
        public void receive(final long seq) {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (inbox.get() != seq) {
                polls++;
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the peer did not answer " + seq + " within 10 s");
                }
                Thread.onSpinWait();
            }
        }

        @Override
        public long polls() {
            return polls;
        }

        @Override
        public void close() {
        }
    }

    /** An in-memory stream that records its bursts and counts what the receiver took. */
    private static final class MemoryStream implements Stream {
        final List<long[]> bursts = new ArrayList<>();
        final AtomicLong delivered = new AtomicLong();

        @Override
        public void burst(final long firstSeq, final int count) {
            bursts.add(new long[] {firstSeq, count});
            delivered.addAndGet(count);
        }

        @Override
        public void receive(final long total, final int burst, final StopSignal stop) {
        }

        @Override
        public long polls() {
            return bursts.size();
        }

        @Override
        public void close() {
        }
    }

    @Test
    void shouldRecordOneOneWayTimePerMeasuredRoundTrip() throws Exception {
        final AtomicLong ping = new AtomicLong(-1);
        final AtomicLong pong = new AtomicLong(-1);
        final MemoryPingPong responder = new MemoryPingPong(pong, ping);
        final CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> LatencyRig.respond(responder, 0, 1500));
        final Histogram histogram = LatencyRig.newHistogram();
        final long ns = assertTimeoutPreemptively(DEADLINE,
            () -> LatencyRig.initiate(new MemoryPingPong(ping, pong), 500, 1000, histogram));
        echo.get(30, TimeUnit.SECONDS);
        assertEquals(1000, histogram.getTotalCount());
        assertTrue(ns > 0);
        assertTrue(histogram.getMinValue() >= 1);
        assertTrue(histogram.getMaxValue() <= ns, "a one-way time above the whole run");
    }

    @Test
    void shouldSendPhasesInWholeBursts() {
        final MemoryStream stream = new MemoryStream();
        assertTrue(BandwidthRig.send(stream, 0, 20, 10) > 0);
        assertTrue(BandwidthRig.send(stream, 20, 45, 10) > 0);
        final List<String> bursts = stream.bursts.stream().map(b -> b[0] + "+" + b[1]).toList();
        assertEquals(List.of("0+10", "10+10", "20+10", "30+10", "40+10", "50+10", "60+5"), bursts);
        assertEquals(65, stream.delivered.get());
        assertThrows(IllegalArgumentException.class, () -> BandwidthRig.send(stream, 15, 45, 10));
    }

    @Test
    void shouldTimeOutASpinnerWithoutProgressAndStopItOnAbort() {
        final Spinner spinner = new Spinner(TimeUnit.MILLISECONDS.toNanos(20), new Abort()).waitingFor("Godot");
        final PerfException timeout = assertTimeoutPreemptively(DEADLINE, () -> assertThrows(PerfException.class,
            () -> {
                while (true) {
                    spinner.idle();
                }
            }));
        assertTrue(timeout.getMessage().contains("timed out after 20 ms waiting for Godot"), timeout::getMessage);

        final Abort abort = new Abort();
        final Spinner aborted = new Spinner(TimeUnit.HOURS.toNanos(1), abort);
        abort.raise();
        assertThrows(PerfException.class, () -> {
            for (int i = 0; i < 10_000; i++) {
                aborted.idle();
            }
        });
    }

    @Test
    void shouldStopASpinnerWhenThePeerSignals() {
        final AtomicBoolean signaled = new AtomicBoolean();
        final Spinner spinner = new Spinner(TimeUnit.HOURS.toNanos(1), new Abort()).watching(new StopSignal() {
            @Override
            public boolean stopRequested() {
                return signaled.get();
            }

            @Override
            public boolean awaitStop(final long timeoutNs) {
                return signaled.get();
            }
        });
        for (int i = 0; i < 10_000; i++) {
            spinner.idle();
        }
        signaled.set(true);
        assertThrows(PerfException.class, () -> {
            for (int i = 0; i < 10_000; i++) {
                spinner.idle();
            }
        });
    }

    @Test
    void shouldCloseWhatAWatchdogGuardsWhenNothingProgresses() throws Exception {
        final AtomicBoolean closed = new AtomicBoolean();
        try (Watchdog watchdog = Watchdog.guard(TimeUnit.MILLISECONDS.toNanos(50), new Abort(),
            () -> closed.set(true))) {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!closed.get() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(closed.get());
            assertTrue(watchdog.fired());
        }
        final AtomicBoolean untouched = new AtomicBoolean();
        try (Watchdog watchdog = Watchdog.guard(TimeUnit.HOURS.toNanos(1), new Abort(), () -> untouched.set(true))) {
            watchdog.pet();
            assertFalse(watchdog.fired());
        }
        assertFalse(untouched.get());
    }

    @Test
    void shouldMakeMessagesThatDifferFromTheirNeighbours() {
        try (Arena arena = Arena.ofConfined()) {
            final Pattern pattern = new Pattern(arena, 1000);
            final MemorySegment buffer = arena.allocate(3000);
            pattern.fill(buffer, 100, 1000, 42);
            assertTrue(pattern.matches(buffer, 100, 1000, 42));
            assertFalse(pattern.matches(buffer, 100, 1000, 43));
            assertFalse(pattern.matches(buffer, 101, 999, 42));
            assertTrue(pattern.matchesPiece(buffer, 600, 500, 500, 42));
            assertFalse(pattern.matchesPiece(buffer, 600, 501, 499, 42));
            for (long seq = 0; seq < 2000; seq++) {
                assertNotEquals(0, Pattern.marker(seq));
                assertNotEquals(Pattern.marker(seq), Pattern.marker(seq + 1));
            }
        }
    }
}
