package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Long RDMA writes, sends and read responses over UDP are received straight into their target (one copy per byte,
 * the kernel's), and stay exact: every byte in place, the immediate delivered, into several pieces too, through loss,
 * duplication, reordering and corruption; a sealed connection never places (its frames are opened before any byte
 * is touched).
 */
@Timeout(120)
class PlacedMessagesTest {
    private static final int MIB = 1 << 20;
    private static final int BUFFER = 8 * MIB;
    private static final int SERVICE = 0x91A;

    private static Loopback pair(final Configuration configuration, final boolean connect) {
        return Loopback.open(new Loopback.Options().configuration(configuration).nic("udp:127.0.0.1")
            .bufferBytes(BUFFER).connect(connect));
    }

    private static long counter(final Nic nic, final String name) {
        return nic.counters().getOrDefault(name, 0L);
    }

    private static void fill(final MemorySegment s, final SplittableRandom random) {
        long i = 0;
        for (; i + 8 <= s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
        for (; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
    }

    /** Writes {@code count} messages of {@code length} random bytes from A to B, each checked at B. */
    private static void writeAndCheck(final Loopback pair, final int count, final int length, final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        for (int k = 0; k < count; k++) {
            final long from = (long) random.nextInt(BUFFER / 2 - length + 1);
            final long to = (long) random.nextInt(BUFFER - length + 1);
            fill(pair.bufA.asSlice(from, length), random);
            pair.qpA.write(k, Loopback.sge(pair.mrA, from, length), 1, pair.mrB.address() + to, pair.mrB.rKey(), 0, 0);
            final List<WorkCompletion> done = Tests.expectSuccess(pair.cqA, 1);
            assertEquals(WcType.RDMA_WRITE, done.get(0).type());
            assertEquals(-1L, pair.bufA.asSlice(from, length).mismatch(pair.bufB.asSlice(to, length)),
                "write " + k + " of " + length + " bytes arrived whole");
        }
    }

    @Test
    void shouldPlaceTheFragmentsOfLongWritesExactly() {
        try (Loopback pair = pair(new Configuration(), true)) {
            writeAndCheck(pair, 12, MIB, 1);
            writeAndCheck(pair, 6, 3 * MIB + 12_345, 2);
            writeAndCheck(pair, 20, 20_000, 3); // short: not placed, still exact
            final long placed = counter(pair.nicB, "link.rx.placed");
            writeAndCheck(pair, 20, 65_536, 4); // a write's first fragment names its own target: never placed
            assertEquals(placed, counter(pair.nicB, "link.rx.placed"));
            assertTrue(counter(pair.nicB, "link.rx.placed") > 0, "some fragments were placed");
            assertEquals(0, counter(pair.nicB, Tests.ENGINE_ERRORS));
        }
    }

    /** Sends {@code count} messages of {@code length} random bytes from A into receives of {@code pieces} at B. */
    private static void sendAndCheck(final Loopback pair, final int count, final int length, final int pieces,
                                     final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        for (int k = 0; k < count; k++) {
            final MemorySegment src = pair.bufA.asSlice(0, length);
            fill(src, random);
            final DataSegment[] into = new DataSegment[pieces];
            final int piece = length / pieces + 1;
            for (int i = 0; i < pieces; i++) {
                into[i] = Loopback.sge(pair.mrB, 1000 + (long) i * (piece + 4096), piece)[0]; // gaps between pieces
            }
            pair.qpB.recv(200 + k, into, pieces);
            pair.qpA.send(k, Loopback.sge(pair.mrA, 0, length), 1, 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            final WorkCompletion arrived = Tests.expectSuccess(pair.cqB, 1).get(0);
            assertEquals(WcType.RECV, arrived.type());
            assertEquals(length, arrived.length());
            for (int i = 0, at = 0; at < length; i++) {
                final int n = Math.min(piece, length - at);
                assertEquals(-1L, src.asSlice(at, n).mismatch(pair.bufB.asSlice(1000 + (long) i * (piece + 4096), n)),
                    "send " + k + ", piece " + i + " arrived whole");
                at += n;
            }
        }
    }

    /**
     * Reads {@code count} messages of {@code length} random bytes of B into A, the read's memory in one piece or
     * two.
     */
    private static void readAndCheck(final Loopback pair, final int count, final int length, final boolean split,
                                     final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        for (int k = 0; k < count; k++) {
            final long from = (long) random.nextInt(BUFFER / 2 - length + 1);
            fill(pair.bufB.asSlice(from, length), random);
            final int first = split ? length / 2 + random.nextInt(1000) : length;
            final DataSegment[] into = {Loopback.sge(pair.mrA, 0, first)[0],
                Loopback.sge(pair.mrA, first + 8192L, length - first)[0]};
            pair.qpA.read(300 + k, into, split ? 2 : 1, pair.mrB.address() + from, pair.mrB.rKey(), 0);
            assertEquals(WcType.RDMA_READ, Tests.expectSuccess(pair.cqA, 1).get(0).type());
            assertEquals(-1L, pair.bufB.asSlice(from, first).mismatch(pair.bufA.asSlice(0, first)), "read " + k);
            assertEquals(-1L, pair.bufB.asSlice(from + first, length - first)
                .mismatch(pair.bufA.asSlice(first + 8192L, length - first)), "read " + k + ", second piece");
        }
    }

    @Test
    void shouldPlaceTheFragmentsOfLongReadResponsesExactly() {
        try (Loopback pair = pair(new Configuration(), true)) {
            readAndCheck(pair, 8, 2 * MIB + 99, true, 31);
            final long placed = counter(pair.nicA, "link.rx.placed");
            assertTrue(placed > 0, "response fragments were placed");
            readAndCheck(pair, 20, 262_144, false, 32);
            assertTrue(counter(pair.nicA, "link.rx.placed") >= placed + 70,
                "first fragments too (4 placed a read with them, at most 3 without)");
            assertEquals(0, counter(pair.nicA, Tests.ENGINE_ERRORS));
        }
    }

    @Test
    void shouldPlaceTheFragmentsOfLongSendsExactly() {
        try (Loopback pair = pair(new Configuration(), true)) {
            sendAndCheck(pair, 8, MIB, 1, 21);
            final long placedIntoOnePiece = counter(pair.nicB, "link.rx.placed");
            assertTrue(placedIntoOnePiece > 0, "fragments of sends were placed");
            sendAndCheck(pair, 8, 2 * MIB + 777, 3, 22); // fragments across a piece's end are copied
            final long placedIntoPieces = counter(pair.nicB, "link.rx.placed");
            assertTrue(placedIntoPieces > placedIntoOnePiece);
            // 256 KiB: three full frames and a short one, the first fragment placed into the receive it consumes too
            sendAndCheck(pair, 20, 262_144, 1, 23);
            assertTrue(counter(pair.nicB, "link.rx.placed") >= placedIntoPieces + 70,
                "first fragments too (4 placed a send with them, at most 3 without)");
            final long placedLong = counter(pair.nicB, "link.rx.placed");
            sendAndCheck(pair, 20, 65_536, 1, 24); // a full frame and a short one: neither is placed
            assertEquals(placedLong, counter(pair.nicB, "link.rx.placed"));
            assertEquals(0, counter(pair.nicB, Tests.ENGINE_ERRORS));
        }
    }

    @Test
    void shouldDeliverTheImmediateOfAPlacedWrite() {
        try (Loopback pair = pair(new Configuration(), true)) {
            final SplittableRandom random = new SplittableRandom(4);
            for (int k = 0; k < 4; k++) {
                final int length = 2 * MIB + random.nextInt(100_000);
                final MemorySegment src = pair.bufA.asSlice(0, length);
                fill(src, random);
                pair.qpB.recv(100 + k, Loopback.sge(pair.mrB, 0, 8), 1);
                pair.qpA.write(k, Loopback.sge(pair.mrA, 0, length), 1, pair.mrB.address() + 64, pair.mrB.rKey(),
                    WrFlags.IMMEDIATE, 0x5000 + k);
                Tests.expectSuccess(pair.cqA, 1);
                final WorkCompletion arrived = Tests.expectSuccess(pair.cqB, 1).get(0);
                assertEquals(WcType.RECV, arrived.type());
                assertEquals(WcFlags.IMMEDIATE, arrived.flags());
                assertEquals(0x5000 + k, arrived.immediate());
                assertEquals(length, arrived.length());
                assertEquals(-1L, src.mismatch(pair.bufB.asSlice(64, length)), "write " + k + " arrived whole");
            }
            assertTrue(counter(pair.nicB, "link.rx.placed") > 0);
        }
    }

    @Test
    void shouldStayExactThroughLossDuplicationReorderingAndCorruption() {
        final Configuration faults = new Configuration().faults(new FaultPlan(0.03, 0.03, 0.03, 0.03, 11))
            .minRtoUs(500);
        try (Loopback pair = pair(faults, true)) {
            writeAndCheck(pair, 16, MIB, 5);
            writeAndCheck(pair, 4, 4 * MIB - 1, 6);
            sendAndCheck(pair, 8, MIB + 5, 2, 8);
            sendAndCheck(pair, 16, 65_536, 1, 10);
            readAndCheck(pair, 8, MIB + 3, true, 9);
            readAndCheck(pair, 16, 65_536, false, 12);
            assertTrue(counter(pair.nicA, "link.rx.placed") > 0, "response fragments were placed under faults too");
            assertTrue(counter(pair.nicB, "link.rx.placed") > 0, "fragments were placed under faults too");
            assertTrue(counter(pair.nicB, "link.rx.bad_crc") > 0, "corrupted frames were dropped");
            assertEquals(0, counter(pair.nicB, Tests.ENGINE_ERRORS));
        }
    }

    @Test
    void shouldNeverPlaceOnASealedConnection() {
        try (Loopback pair = pair(new Configuration(), false)) {
            pair.nicA.connectionManager().security(Security.of(Security.Mode.AUTH));
            pair.nicB.connectionManager().security(Security.of(Security.Mode.AUTH));
            try (ConnectionListener listener = pair.nicB.connectionManager().listen(SERVICE)) {
                final CompletableFuture<Void> accepted = CompletableFuture.runAsync(
                    () -> listener.take(10_000).accept(pair.qpB, null, 10_000));
                pair.nicA.connectionManager().connect(pair.nicB.address(), SERVICE, pair.qpA, null, 10_000);
                accepted.join();
            }
            writeAndCheck(pair, 6, MIB, 7);
            assertEquals(0, counter(pair.nicB, "link.rx.placed"), "a sealed frame is opened before its bytes land");
        }
    }
}
