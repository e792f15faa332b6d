package io.jdet;

import io.jdet.testing.LazyMemory;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.jdet.testing.Tests.assertSameBytes;
import static io.jdet.testing.Tests.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Messages of the largest length a work request can carry, {@code Integer.MAX_VALUE} bytes (DET's limit is 2^31;
 * a Java length stops one byte short), where a frame count or an offset computed in {@code int} overflows.
 *
 * <p>Neither end needs 2 GiB of real memory: the 2 GiB side is {@link LazyMemory} (only the pages written take
 * memory; the rest read as the zero page), and the other side scatters or gathers through a list of data segments
 * that overlap in a small buffer, except for the first 2 MiB and the last 4 MiB, which land apart and are checked
 * byte for byte.
 */
@Timeout(120)
class LargeMessageTest {
    private static final int LENGTH = Integer.MAX_VALUE;
    private static final int HEAD = 2 << 20;
    private static final int TAIL = 4 << 20;
    private static final int SGES = 256;
    private static final int MIDDLE_PIECES = SGES - 2;
    /** Each middle piece but the last; they all overlap at the same place. */
    private static final int MIDDLE = (int) (((long) LENGTH - HEAD - TAIL + MIDDLE_PIECES - 1) / MIDDLE_PIECES);
    private static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(100);

    @Test
    void shouldDeliverEveryByteWhenReadIsIntegerMaxValueLong() {
        try (Loopback pair = Loopback.open(new Loopback.Options().bufferBytes(64).sges(SGES))) {
            final MemorySegment source = LazyMemory.map(LENGTH, pair.arena);
            fill(source.asSlice(0, HEAD), 1);
            fill(source.asSlice(LENGTH - TAIL, TAIL), 2);
            final MemoryRegion remote = pair.pdB.regMr(source, Access.LOCAL_READ | Access.REMOTE_READ);
            final MemorySegment target = pair.arena.allocate((long) HEAD + MIDDLE + TAIL, 64);
            final MemoryRegion local = pair.pdA.regMr(target, Access.LOCAL_WRITE);

            pair.qpA.read(7, spread(local), SGES, remote.address(), remote.rKey(), 0);

            final WorkCompletion wc = Tests.pollUntil(pair.cqA, 1, TRANSFER_TIMEOUT).get(0);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(LENGTH, wc.length());
            assertSameBytes(source.asSlice(0, HEAD), target.asSlice(0, HEAD));
            assertSameBytes(source.asSlice(LENGTH - TAIL, TAIL), target.asSlice(HEAD + MIDDLE, TAIL));
            assertNoEngineErrors(pair);
        }
    }

    @Test
    void shouldDeliverEveryByteWhenSendIsIntegerMaxValueLong() {
        try (Loopback pair = Loopback.open(new Loopback.Options().bufferBytes(64).sges(SGES))) {
            final long bytes = (long) HEAD + MIDDLE + TAIL;
            final MemorySegment source = pair.arena.allocate(bytes, 64);
            fill(source, 3);
            final MemorySegment target = pair.arena.allocate(bytes, 64);
            final MemoryRegion from = pair.pdA.regMr(source, Access.LOCAL_READ);
            final MemoryRegion into = pair.pdB.regMr(target, Access.LOCAL_WRITE);

            pair.qpB.recv(1, spread(into), SGES);
            pair.qpA.send(2, spread(from), SGES, 0, 0);

            final WorkCompletion received = Tests.pollUntil(pair.cqB, 1, TRANSFER_TIMEOUT).get(0);
            assertEquals(WcStatus.SUCCESS, received.status(), received.toString());
            assertEquals(LENGTH, received.length());
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            // The head and the tail lie apart at both ends: each must hold the bytes of the same place at the other.
            assertSameBytes(source.asSlice(0, HEAD), target.asSlice(0, HEAD));
            assertSameBytes(source.asSlice(HEAD + MIDDLE, TAIL), target.asSlice(HEAD + MIDDLE, TAIL));
            assertNoEngineErrors(pair);
        }
    }

    /**
     * The 256 data segments of an {@code Integer.MAX_VALUE}-byte message over a region of HEAD + MIDDLE + TAIL
     * bytes: the head, then the middle pieces all at the same place, then the tail.
     */
    private static DataSegment[] spread(final MemoryRegion region) {
        final DataSegment[] sges = new DataSegment[SGES];
        sges[0] = new DataSegment().set(region, 0, HEAD);
        long left = (long) LENGTH - HEAD - TAIL;
        for (int i = 1; i <= MIDDLE_PIECES; i++) {
            final int n = (int) Math.min(MIDDLE, left);
            sges[i] = new DataSegment().set(region, HEAD, n);
            left -= n;
        }
        assertEquals(0, left);
        sges[SGES - 1] = new DataSegment().set(region, HEAD + MIDDLE, TAIL);
        return sges;
    }

    static void assertNoEngineErrors(final Loopback pair) {
        for (final Nic nic : List.of(pair.nicA, pair.nicB)) {
            final Map<String, Long> counters = nic.counters();
            assertEquals(0L, counters.get("engine.errors"), nic + ": " + counters);
        }
    }
}
