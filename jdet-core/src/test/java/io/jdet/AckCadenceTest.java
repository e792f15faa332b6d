package io.jdet;

import io.jdet.testing.Loopback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A standalone ACK leaves at once after a quarter of the sender's window (docs/PROTOCOL.md 6.1): {@code windowFrames
 * / 4} frames, or four times as many sends and writes of 2 KiB or less, of which the sender has four windows. The
 * delayed-ack time and the retransmission timeout are seconds here, so every ACK counted is one of that rule's, and
 * the signaled last write completes on the last of them.
 */
@Timeout(30)
class AckCadenceTest {
    private static final int WINDOW = 16;

    private static Loopback pair(final int loopMtu) {
        final Configuration c = new Configuration().windowFrames(WINDOW).ackDelayUs(10_000_000)
            .minRtoUs(5_000_000).maxRtoUs(5_000_000).loopMtu(loopMtu);
        return Loopback.open(new Loopback.Options().configuration(c).depth(512, 16).bufferBytes(1 << 20));
    }

    private static Loopback pair() {
        return pair(Configuration.LOOP_MTU_DEFAULT);
    }

    /**
     * Writes {@code count} times {@code length} bytes, only the last signaled.
     *
     * @return the ACKs B sent and the frames it received
     */
    private static long[] acksAndFramesForWrites(final int count, final int length, final int loopMtu) {
        try (Loopback pair = pair(loopMtu)) {
            for (int i = 0; i < count; i++) {
                pair.qpA.write(i, Loopback.sge(pair.mrA, 0, length), 1, pair.mrB.address(), pair.mrB.rKey(),
                    i == count - 1 ? 0 : WrFlags.SUPPRESSED, 0);
            }
            final List<WorkCompletion> done = pair.pollA(1);
            assertEquals(WcStatus.SUCCESS, done.get(0).status());
            assertEquals(count - 1, done.get(0).id());
            assertEquals(0L, pair.nicA.counters().get("frames.retransmitted"), "no retransmission to answer");
            return new long[] {pair.nicB.counters().get("acks.sent"), pair.nicB.counters().get("frames.received")};
        }
    }

    private static long acksForWrites(final int count, final int length) {
        return acksAndFramesForWrites(count, length, Configuration.LOOP_MTU_DEFAULT)[0];
    }

    @Test
    void shouldAcknowledgeSmallWritesEveryQuarterOfTheirFourWindows() {
        assertEquals(16L, acksForWrites(16 * WINDOW, 8), "one ACK per " + WINDOW + " small writes");
    }

    @Test
    void shouldAcknowledgeLargerWritesEveryQuarterWindow() {
        assertEquals(16L, acksForWrites(4 * WINDOW, 4096), "one ACK per " + WINDOW / 4 + " writes of 4 KiB");
    }

    @Test
    void shouldCountEachFragmentOfALargeWriteInFullWhateverTheMtu() {
        // 1500-byte frames: every fragment of an 8 KiB write carries less than 2 KiB, yet the sender keeps the write
        // inside one window, so its fragments count in full: one ACK per 4 frames
        final long[] acksAndFrames = acksAndFramesForWrites(32, 8192, 1500);
        assertEquals(32 * 6, acksAndFrames[1], "six frames per write");
        assertEquals(acksAndFrames[1] / (WINDOW / 4), acksAndFrames[0], "one ACK per " + WINDOW / 4 + " frames");
    }

    @Test
    void shouldCountAMixedStreamByEachFramesShare() {
        // 2 KiB is small, 2 KiB + 1 is not: 8 small (8 units) then 2 large (8 units) make one ACK, ten times over
        try (Loopback pair = pair()) {
            for (int round = 0; round < 10; round++) {
                for (int i = 0; i < 10; i++) {
                    final int length = i < 8 ? 2048 : 2049;
                    final boolean last = round == 9 && i == 9;
                    pair.qpA.write(round * 10L + i, Loopback.sge(pair.mrA, 0, length), 1, pair.mrB.address(),
                        pair.mrB.rKey(), last ? 0 : WrFlags.SUPPRESSED, 0);
                }
            }
            assertEquals(WcStatus.SUCCESS, pair.pollA(1).get(0).status());
            assertEquals(10L, pair.nicB.counters().get("acks.sent"));
        }
    }
}
