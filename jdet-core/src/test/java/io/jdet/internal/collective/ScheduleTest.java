package io.jdet.internal.collective;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The schedule's bookkeeping: messages and their blocks, local operations, rounds, growth and reuse. */
class ScheduleTest {
    private static final MemorySegment A = MemorySegment.ofArray(new byte[64]);
    private static final MemorySegment B = MemorySegment.ofArray(new byte[64]);

    @Test
    void adjacentBlocksOfOneBufferMergeAndOthersDoNot() {
        final Schedule s = new Schedule();
        final int a = s.buffer(A, 0, 1000, 7);
        final int b = s.buffer(B, 0, 2000, 8);
        s.send(3).block(a, 0, 10).block(a, 10, 5).block(a, 20, 4).block(b, 24, 1).block(b, 25, 0).block(b, 25, 2);
        assertEquals(1, s.ops);
        assertEquals(Schedule.SEND, s.kind[0]);
        assertEquals(3, s.peer[0]);
        assertEquals(22, s.total[0]);
        assertEquals(3, s.count[0], "0-10 and 10-15 merged; 20-24 apart; buffer b's 24-25 and 25-27 merged");
        assertEquals(3, s.blocks);
        assertEquals(a, s.blockBuf[0]);
        assertEquals(0, s.blockOff[0]);
        assertEquals(15, s.blockLen[0]);
        assertEquals(20, s.blockOff[1]);
        assertEquals(4, s.blockLen[1]);
        assertEquals(b, s.blockBuf[2]);
        assertEquals(24, s.blockOff[2]);
        assertEquals(3, s.blockLen[2]);
        assertEquals(1000, s.addrs[a]);
        assertEquals(8, s.keys[b]);
        assertSame(B, s.segs[b]);
    }

    @Test
    void anOperationOverlapsARangeByItsBlocksAddressesAlone() {
        // Buffer a lies 16 bytes into region A (address 1016); the send reads a's 0-8 and 20-24: addresses
        // 1016-1024 and 1036-1040. The copy reads a's 2-6 and writes the region's 40-44: 1018-1022, 1040-1044.
        final Schedule s = new Schedule();
        final int a = s.buffer(A, 16, 1016, 7);
        final int whole = s.buffer(A, 0, 1000, 7);
        s.send(1).block(a, 0, 8).block(a, 20, 4);
        s.copy(a, 2, whole, 40, 4);
        assertEquals(1016, s.address(s.first[0]));
        assertEquals(1036, s.address(s.first[0] + 1));
        assertTrue(s.overlaps(0, 1023, 1), "the first block's last byte");
        assertFalse(s.overlaps(0, 1024, 12), "between the blocks");
        assertTrue(s.overlaps(0, 1030, 7), "into the second block by one byte");
        assertFalse(s.overlaps(0, 1040, 100), "just after it");
        assertFalse(s.overlaps(0, 900, 116), "just before the first");
        assertEquals(1040, s.address(s.first[1] + 1), "the copy's destination");
        assertTrue(s.overlaps(1, 1040, 1), "a local operation's destination block counts");
        assertTrue(s.overlaps(1, 1018, 1), "and its source block");
    }

    @Test
    void aBufferInsideItsRegionKeepsBlocksAtTheirPlaceInTheRegionAndTheRegionsAddress() {
        // The buffer starts 16 bytes into region A, at address 1016: offsets given from its start land 16 further
        // in A, and addrs[buf] + blockOff is still the block's address.
        final Schedule s = new Schedule();
        final int a = s.buffer(A, 16, 1016, 7);
        final int whole = s.buffer(A, 0, 1000, 7);
        s.send(1).block(a, 0, 8).block(whole, 24, 8).block(a, 4, 4);
        s.copy(a, 2, whole, 40, 4);
        assertEquals(16, s.blockOff[0]);
        assertEquals(3, s.count[0], "a's 16-24 and the region's 24-32 are other buffers: not merged");
        assertEquals(24, s.blockOff[1]);
        assertEquals(20, s.blockOff[2]);
        assertEquals(1000, s.addrs[a]);
        assertEquals(1000 + 16, s.addrs[a] + s.blockOff[0]);
        assertEquals(18, s.blockOff[s.first[1]]);
        assertEquals(40, s.blockOff[s.first[1] + 1]);
        assertSame(A, s.segs[a]);
    }

    @Test
    void aMessageDoesNotMergeIntoTheBlockOfThePreviousMessage() {
        final Schedule s = new Schedule();
        final int a = s.buffer(A, 0, 0, 0);
        s.send(1).block(a, 0, 8);
        s.recv(1).block(a, 8, 8);
        assertEquals(Schedule.RECV, s.kind[1]);
        assertEquals(1, s.count[1]);
        assertEquals(1, s.first[1]);
        assertEquals(2, s.blocks);
        assertEquals(8, s.blockLen[0]);
    }

    @Test
    void aMergedBlockNeverGrowsPastTheLargestInt() {
        final Schedule s = new Schedule();
        final int a = s.buffer(A, 0, 0, 0);
        s.send(1).block(a, 0, Integer.MAX_VALUE - 1).block(a, Integer.MAX_VALUE - 1, 1);
        assertEquals(1, s.count[0], "exactly MAX_VALUE still fits one block");
        assertEquals(Integer.MAX_VALUE, s.blockLen[0]);
        s.send(1).block(a, 0, Integer.MAX_VALUE - 1).block(a, Integer.MAX_VALUE - 1, 2);
        assertEquals(2, s.count[1], "one byte more takes a second block");
        assertEquals(Integer.MAX_VALUE - 1, s.blockLen[1]);
        assertEquals(2, s.blockLen[2]);
        assertEquals(Integer.MAX_VALUE + 1L, s.total[1]);
    }

    @Test
    void aLocalCopyOntoItselfIsDroppedButAReductionOntoItselfIsNot() {
        final Schedule s = new Schedule();
        final int a = s.buffer(A, 0, 0, 0);
        final int b = s.buffer(B, 0, 0, 0);
        s.copy(a, 8, a, 8, 16);
        s.copy(a, 8, a, 8, 0);
        s.reduce(a, 8, b, 16, 0);
        assertEquals(0, s.ops, "a copy onto itself and empty operations do nothing");
        s.copy(a, 8, a, 16, 8);
        s.copy(a, 8, b, 8, 8);
        s.reduce(a, 8, a, 8, 8);
        assertEquals(3, s.ops);
        assertEquals(Schedule.COPY, s.kind[0]);
        assertEquals(Schedule.REDUCE, s.kind[2]);
        assertEquals(-1, s.peer[2]);
        assertEquals(2, s.count[2]);
        assertEquals(8, s.total[2]);
        assertEquals(4, s.first[2]);
        assertEquals(a, s.blockBuf[2]);
        assertEquals(8, s.blockOff[2]);
        assertEquals(b, s.blockBuf[3]);
    }

    @Test
    void roundsEndWhereTheyAreClosedAndFinishClosesOnlyAnOpenOne() {
        final Schedule s = new Schedule();
        s.finish();
        assertEquals(0, s.rounds, "nothing scheduled, no round");
        s.send(1);
        s.recv(2);
        s.round();
        s.send(3);
        s.finish();
        assertEquals(2, s.rounds);
        assertEquals(0, s.roundStart[0]);
        assertEquals(2, s.roundStart[1]);
        assertEquals(3, s.roundStart[2]);
        s.finish();
        assertEquals(2, s.rounds, "finish adds no empty round");
    }

    @Test
    void everyArrayGrowsAndKeepsWhatItHeld() {
        final Schedule s = new Schedule();
        for (int i = 0; i < 40; i++) {
            assertEquals(i, s.buffer(i % 2 == 0 ? A : B, 0, 100 + i, i));
        }
        for (int i = 0; i < 100; i++) {
            s.send(i).block(i % 40, i, 1).block(i % 40, i + 2, 1);
            s.round();
        }
        assertEquals(100, s.ops);
        assertEquals(200, s.blocks);
        assertEquals(100, s.rounds);
        for (int i = 0; i < 100; i++) {
            assertEquals(i, s.peer[i]);
            assertEquals(2 * i, s.first[i]);
            assertEquals(2, s.count[i]);
            assertEquals(2, s.total[i]);
            assertEquals(i % 40, s.blockBuf[2 * i + 1]);
            assertEquals(i + 2, s.blockOff[2 * i + 1]);
            assertEquals(1, s.blockLen[2 * i + 1]);
            assertEquals(i + 1, s.roundStart[i + 1]);
        }
        for (int i = 0; i < 40; i++) {
            assertEquals(100 + i, s.addrs[i]);
            assertEquals(i, s.keys[i]);
            assertSame(i % 2 == 0 ? A : B, s.segs[i]);
        }
    }

    @Test
    void aResetScheduleStartsEmptyAndLetsGoOfItsBuffers() {
        final Schedule s = new Schedule();
        s.buffer(A, 0, 0, 0);
        s.buffer(B, 0, 0, 0);
        s.send(1).block(0, 0, 4);
        s.round();
        s.recv(1).block(1, 0, 4);
        s.reset();
        assertEquals(0, s.buffers);
        assertEquals(0, s.blocks);
        assertEquals(0, s.ops);
        assertEquals(0, s.rounds);
        assertEquals(0, s.roundStart[0]);
        assertNull(s.segs[0]);
        assertNull(s.segs[1]);
        assertEquals(0, s.buffer(B, 0, 0, 0));
        s.send(2).block(0, 0, 4);
        s.finish();
        assertEquals(1, s.rounds);
        assertEquals(1, s.roundStart[1]);
        assertEquals(0, s.first[0]);
    }
}
