package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertSameBytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bulk transfers over UDP, whose link gathers large payloads straight from registered memory into {@code sendmmsg}
 * (issue 7, cost per byte), through loss, duplication, reordering and corruption: every byte of every write, read
 * and send lands exactly once and as it was when posted, while the source is rewritten between transfers (so a
 * datagram that kept a stale reference, or read memory after its work completed, would show).
 */
@Timeout(120)
class UdpBulkFaultsTest {
    private static final int MB = 1 << 20;

    private static Loopback lossyUdp(final long seed) {
        final Configuration faulty = new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0.01, seed))
            .minRtoUs(300).maxRtoUs(10_000).rnrRetryCount(1_000_000).rnrDelayUs(200);
        return Loopback.open(new Loopback.Options().configuration(faulty).nic("udp:127.0.0.1").bufferBytes(8L * MB)
            .depth(32, 32).maxOr(8).maxIr(8));
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {21, 22})
    void shouldPlaceEveryByteOfBulkWritesReadsAndSendsOnceThroughFaults(final long seed) {
        try (Loopback pair = lossyUdp(seed)) {
            final int length = 2 * MB + 4321;
            for (int round = 0; round < 2; round++) {
                // A write of 2 MiB in pieces (several frames each, some of them lent, gathered pieces), checked
                // after the source is rewritten for the next round.
                Tests.fill(pair.bufA.asSlice(0, length), seed * 10 + round);
                final int pieces = 8;
                final int piece = length / pieces;
                for (int i = 0; i < pieces; i++) {
                    pair.qpA.write(i, sge(pair.mrA, (long) i * piece, piece), 1,
                        pair.mrB.address() + (long) i * piece, pair.mrB.rKey(), i == pieces - 1 ? 0
                            : WrFlags.SUPPRESSED, 0);
                }
                assertEquals(pieces - 1, Tests.expectSuccess(pair.cqA, 1).get(0).id());
                assertSameBytes(pair.bufA.asSlice(0, (long) pieces * piece),
                    pair.bufB.asSlice(0, (long) pieces * piece));

                // A read of 1 MiB back, the other way's bulk path (read responses gather from B's memory).
                Tests.fill(pair.bufB.asSlice(4L * MB, MB), seed * 100 + round);
                pair.qpA.read(100, sge(pair.mrA, 4L * MB, MB), 1, pair.mrB.address() + 4L * MB, pair.mrB.rKey(), 0);
                assertEquals(100, Tests.expectSuccess(pair.cqA, 1).get(0).id());
                assertSameBytes(pair.bufB.asSlice(4L * MB, MB), pair.bufA.asSlice(4L * MB, MB));

                // Sends of 200,000 bytes, several in flight, each checked on arrival.
                final int sends = 6;
                final int size = 200_000;
                Tests.fill(pair.bufA.asSlice(6L * MB, (long) sends * size), seed * 1000 + round);
                for (int i = 0; i < sends; i++) {
                    pair.qpB.recv(i, sge(pair.mrB, 6L * MB + (long) i * size, size), 1);
                }
                for (int i = 0; i < sends; i++) {
                    pair.qpA.send(i, sge(pair.mrA, 6L * MB + (long) i * size, size), 1, 0, 0);
                }
                final List<WorkCompletion> got = Tests.expectSuccess(pair.cqB, sends);
                for (int i = 0; i < sends; i++) {
                    assertEquals(i, got.get(i).id(), "in order");
                    assertEquals(size, got.get(i).length());
                }
                Tests.expectSuccess(pair.cqA, sends);
                assertSameBytes(pair.bufA.asSlice(6L * MB, (long) sends * size),
                    pair.bufB.asSlice(6L * MB, (long) sends * size));
            }
            final Map<String, Long> a = pair.nicA.counters();
            final Map<String, Long> b = pair.nicB.counters();
            assertTrue(a.get("link.tx.gathered") > 0, "A's payloads were gathered: " + a);
            assertTrue(b.get("link.tx.gathered") > 0, "B's read responses were gathered: " + b);
            long faults = 0;
            for (final Map<String, Long> c : List.of(a, b)) {
                faults += c.get("fault.dropped") + c.get("fault.duplicated") + c.get("fault.reordered")
                    + c.get("fault.corrupted");
            }
            assertTrue(faults > 0, "faults were injected");
            Tests.assertEngineHealthy(pair.nicA, pair.nicB);
        }
    }
}
