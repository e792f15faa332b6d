package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rules an application sees at the receiving end: an RDMA write longer than one frame whose range leaves the
 * region places nothing (ibverbs.md 4.3: the whole range is checked before the first byte, as rxe checks the
 * RETH's length); a receive completion carries an immediate value only when the sender flagged IMMEDIATE
 * (det_send: "only valid if the DET_WR_IMMEDIATE bit is set"); and a sender gives up after {@code ackTimeoutMs}
 * without progress whatever its retransmission timer says ({@code Configuration.ackTimeoutMs}).
 */
@Timeout(60)
class ResponderRulesTest {
    private static final byte UNTOUCHED = 0x11;
    private static final int LENGTH = 4000;
    private static final int INSIDE = 2000;

    @Test
    void shouldPlaceNothingOfAMultiFrameWriteThatLeavesTheRegion() {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(smallFrames()))) {
            writeAcrossTheEnd(pair, 0, 0);
            assertEquals(WcStatus.BOUNDS_ERR, Tests.pollOne(pair.cqA).status());
            assertUntouched(pair);
        }
    }

    @Test
    void shouldPlaceNothingOfAMultiFrameWriteWithImmediateThatLeavesTheRegion() {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(smallFrames()))) {
            pair.qpB.recv(7, sge(pair.mrB, 0, 16), 1);
            writeAcrossTheEnd(pair, WrFlags.IMMEDIATE, 42);
            assertEquals(WcStatus.BOUNDS_ERR, Tests.pollOne(pair.cqA).status());
            final WorkCompletion atB = Tests.pollOne(pair.cqB);
            assertEquals(7, atB.id());
            assertTrue(atB.status() != WcStatus.SUCCESS, atB.toString());
            assertUntouched(pair);
        }
    }

    @Test
    void shouldReportAnImmediateValueOnlyWhenTheSenderFlaggedIt() {
        try (Loopback pair = Loopback.open()) {
            pair.qpB.recv(1, sge(pair.mrB, 0, 64), 1);
            pair.qpB.recv(2, sge(pair.mrB, 64, 64), 1);
            pair.qpB.recv(3, sge(pair.mrB, 128, 64), 1);
            pair.qpA.send(4, sge(pair.mrA, 0, 8), 1, 0, 0x55AA55AA);
            pair.qpA.write(5, sge(pair.mrA, 0, 8), 1, pair.mrB.address() + 512, pair.mrB.rKey(), 0, 0x66);
            pair.qpA.send(6, sge(pair.mrA, 0, 8), 1, WrFlags.SOLICITED, 0x77);
            pair.qpA.send(7, sge(pair.mrA, 0, 8), 1, WrFlags.IMMEDIATE, 0x88);
            final List<WorkCompletion> atB = Tests.expectSuccess(pair.cqB, 3);
            assertEquals(0, atB.get(0).flags());
            assertEquals(0, atB.get(0).immediate(), atB.get(0).toString());
            assertEquals(WcFlags.SOLICITED, atB.get(1).flags());
            assertEquals(0, atB.get(1).immediate(), atB.get(1).toString());
            assertEquals(WcFlags.IMMEDIATE, atB.get(2).flags());
            assertEquals(0x88, atB.get(2).immediate(), atB.get(2).toString());
        }
    }

    /** Every frame lost, a retransmission timer of 30 s: the give-up still comes after the 200 ms ack timeout. */
    @Test
    void shouldGiveUpAfterTheAckTimeoutWhateverTheRetransmissionTimer() {
        final Configuration c = new Configuration().minRtoUs(30_000_000).maxRtoUs(30_000_000).ackTimeoutMs(200)
            .faults(new FaultPlan(1.0, 0, 0, 0, 1));
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c))) {
            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            final WorkCompletion wc = Tests.pollUntil(pair.cqA, 1, Duration.ofSeconds(10)).get(0);
            assertEquals(WcStatus.RETRY_EXCEEDED, wc.status(), wc.toString());
        }
    }

    private static Configuration smallFrames() {
        return new Configuration().loopMtu(512); // about 430 payload bytes a frame: the write takes ten
    }

    /** A's write of 4000 bytes starting 2000 before the end of B's region. */
    private static void writeAcrossTheEnd(final Loopback pair, final int flags, final int immediate) {
        pair.bufB.fill(UNTOUCHED);
        fill(pair.bufA.asSlice(0, LENGTH), 9);
        pair.qpA.write(1, sge(pair.mrA, 0, LENGTH), 1, pair.mrB.address() + pair.mrB.length() - INSIDE,
            pair.mrB.rKey(), flags, immediate);
    }

    private static void assertUntouched(final Loopback pair) {
        final long size = pair.mrB.length();
        for (long i = size - INSIDE; i < size; i++) {
            assertEquals(UNTOUCHED, pair.bufB.get(ValueLayout.JAVA_BYTE, i), "byte " + i
                + " placed by a write that failed its bounds check");
        }
    }
}
