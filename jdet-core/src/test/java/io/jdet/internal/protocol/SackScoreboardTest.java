package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sender's record of what the peer holds beyond its cumulative ack (bit i of an acknowledgement: frame
 * ack + 2 + i), and how far the current recovery has repaired.
 */
class SackScoreboardTest {
    private static SackScoreboard board(final int lastAcked) {
        final SackScoreboard s = new SackScoreboard();
        s.reset(lastAcked);
        return s;
    }

    @Test
    void recordsTheFramesTheAcknowledgementSaysAreHeld() {
        final SackScoreboard s = board(10);
        assertFalse(s.any());
        s.onAck(10, 10, 0b101, 30);
        assertTrue(s.any());
        assertFalse(s.isSacked(11, 10), "the gap itself is never held");
        assertTrue(s.isSacked(12, 10));
        assertFalse(s.isSacked(13, 10));
        assertTrue(s.isSacked(14, 10));
        assertFalse(s.isSacked(15, 10));
        assertFalse(s.isSacked(10, 10), "at or below the cumulative ack");
        assertFalse(s.isSacked(9, 10));
        assertFalse(s.isSacked(10 + 2 + 64, 10), "64 frames on is beyond the board, not frame 12 again");
        assertEquals(14, s.top(10));
    }

    @Test
    void anAdvancingAckShiftsTheBitsItCovers() {
        final SackScoreboard s = board(10);
        s.onAck(10, 10, 0b1001, 30); // frames 12 and 15
        s.onAck(10, 13, 0, 30); // 11..13 acknowledged
        assertFalse(s.isSacked(14, 13));
        assertTrue(s.isSacked(15, 13), "frame 15 is still held, now bit 0 of ack 13");
        assertEquals(15, s.top(13));
        s.onAck(13, 13 + 64, 0, 13 + 100);
        assertFalse(s.any(), "an ack 64 or more ahead leaves nothing held");
    }

    @Test
    void newBitsAddToTheOldOnes() {
        final SackScoreboard s = board(10);
        s.onAck(10, 10, 0b1, 30);
        s.onAck(10, 10, 0b100, 30);
        assertTrue(s.isSacked(12, 10));
        assertTrue(s.isSacked(14, 10));
        assertEquals(14, s.top(10));
    }

    @Test
    void aStaleAckIsReadRelativeToItsOwnCumulativeAck() {
        final SackScoreboard s = board(12);
        s.onAck(12, 10, 0b10100, 30); // ack 10 says frames 14 and 16
        assertTrue(s.isSacked(14, 12));
        assertFalse(s.isSacked(15, 12));
        assertTrue(s.isSacked(16, 12));
        assertEquals(16, s.top(12));
        final SackScoreboard far = board(100);
        far.onAck(100, 100 - HeldFrames.RANGE, -1, 200);
        assertFalse(far.any(), "bits of an ack a whole range behind are ignored");
        final SackScoreboard near = board(100);
        near.onAck(100, 100 - HeldFrames.RANGE + 1, -1, 200);
        assertTrue(near.isSacked(102, 100), "one frame less behind: its top bits still count");
        assertFalse(near.isSacked(103, 100));
    }

    @Test
    void onlyFramesSentCanBeHeld() {
        final SackScoreboard s = board(10);
        s.onAck(10, 10, -1, 14); // frames 12..14 were sent
        assertTrue(s.isSacked(12, 10));
        assertTrue(s.isSacked(14, 10));
        assertFalse(s.isSacked(15, 10), "never sent");
        assertEquals(14, s.top(10));
        final SackScoreboard none = board(10);
        none.onAck(10, 10, -1, 11);
        assertFalse(none.any(), "only the gap frame was sent");
        final SackScoreboard wide = board(10);
        wide.onAck(10, 10, -1, 10 + 1 + 64);
        assertTrue(wide.isSacked(10 + 2 + 31, 10), "all 32 bits when 64 frames were sent");
        assertFalse(wide.isSacked(10 + 2 + 32, 10));
    }

    @Test
    void worksAcrossTheSequenceWrap() {
        final int last = Integer.MAX_VALUE - 1;
        final SackScoreboard s = board(last);
        s.onAck(last, last, 0b1100, last + 10); // frames last + 4 and last + 5, past Integer.MAX_VALUE
        assertTrue(s.isSacked(last + 4, last));
        assertFalse(s.isSacked(last + 3, last));
        s.onAck(last, last + 2, 0, last + 10);
        assertTrue(s.isSacked(last + 4, last + 2));
        assertTrue(s.isSacked(last + 5, last + 2));
        assertFalse(s.isSacked(last + 6, last + 2));
        assertEquals(last + 5, s.top(last + 2));
    }

    @Test
    void aSecondTimeoutInARowForgetsTheBits() {
        final SackScoreboard s = board(10);
        s.onAck(10, 10, 0b1, 30);
        s.onTimeout();
        assertTrue(s.any(), "one timeout keeps them");
        s.onAck(10, 11, 0b1, 30); // progress between the timeouts
        s.onTimeout();
        assertTrue(s.any(), "progress resets the count");
        s.onTimeout();
        assertFalse(s.any(), "the second in a row forgets");
        s.onAck(11, 11, 0b1, 30);
        s.forget();
        assertFalse(s.any());
        s.onAck(11, 11, 0b1, 30);
        s.reset(11);
        assertFalse(s.any());
    }

    @Test
    void repairResumesAfterTheLastFrameRepaired() {
        final SackScoreboard s = board(10);
        assertEquals(11, s.repairFrom(10), "a new recovery starts after the cumulative ack");
        s.repaired(15);
        assertEquals(16, s.repairFrom(10));
        assertEquals(21, s.repairFrom(20), "an ack past the repaired frames restarts after the ack");
        assertEquals(16, s.repairFrom(15), "an ack at the last repaired frame: the next one");
        s.goBack(12);
        assertEquals(12, s.repairFrom(10), "going back to 12 repairs 12 again");
        s.reset(30);
        assertEquals(31, s.repairFrom(30));
    }
}
