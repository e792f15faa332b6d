package io.jdet.internal.protocol;

import io.jdet.internal.wire.Frame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Selective acknowledgement's receiving side on its own: which frames are held, which are duplicates or dropped,
 * the bits that tell the sender, the order held frames run in once the gap fills, and that every pool slot comes
 * back whatever the stream does with a held frame (refuses it, throws, or the queue pair stops).
 */
class HeldFramesTest {
    private static final int PAYLOAD = 8;
    private final Arena arena = Arena.ofConfined();
    private final ReorderPool pool = new ReorderPool(Frame.HEADER_LENGTH + PAYLOAD);
    private final HeldFrames held = new HeldFrames(pool);
    private final FakeStream stream = new FakeStream();

    /** A stream that records what it runs: sequence number, opcode and the payload's first byte. */
    private static final class FakeStream implements OrderedStream, Connection {
        int expected;
        boolean connected = true;
        final List<String> ran = new ArrayList<>();
        int refuse = Integer.MIN_VALUE;
        int explode = Integer.MIN_VALUE;
        int disconnectAfter = Integer.MIN_VALUE;

        @Override
        public int expected() {
            return expected;
        }

        @Override
        public boolean process(final MemorySegment f, final int opcode, final int seq, final long now) {
            if (seq == explode) {
                throw new IllegalStateException("memory gone");
            }
            if (seq == refuse) {
                return false;
            }
            ran.add(seq + "/" + opcode + "/" + f.get(ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH) + "@" + now);
            expected++;
            if (seq == disconnectAfter) {
                connected = false;
            }
            return true;
        }

        @Override
        public boolean connected() {
            return connected;
        }
    }

    @AfterEach
    void close() {
        arena.close();
        pool.close();
    }

    private MemorySegment frame(final int seq, final int opcode) {
        final MemorySegment f = arena.allocate(Frame.HEADER_LENGTH + PAYLOAD);
        Frame.writeBase(f, opcode, 0, PAYLOAD, 1, 2, seq, 0, 0, 0);
        f.asSlice(Frame.HEADER_LENGTH).fill((byte) seq);
        return f;
    }

    private int deliver(final int seq) {
        return held.deliver(stream, stream, frame(seq, seq & 3), seq & 3, 7);
    }

    /** How many pool slots are free: takes them all, then gives them back. */
    private int freeSlots() {
        final MemorySegment f = frame(0, 0);
        final List<Integer> taken = new ArrayList<>();
        for (int slot = pool.store(f, 1); slot >= 0; slot = pool.store(f, 1)) {
            taken.add(slot);
        }
        taken.forEach(pool::release);
        return taken.size();
    }

    @Test
    void holdsFramesBeyondAGapAndRunsThemInOrderWhenItFills() {
        stream.expected = 10;
        assertEquals(HeldFrames.HELD, deliver(13));
        assertEquals(HeldFrames.HELD, deliver(11));
        assertEquals(0b101, held.bits, "bit i: frame expected + 1 + i");
        assertEquals(HeldFrames.DUPLICATE, deliver(13), "held already");
        assertEquals(HeldFrames.DUPLICATE, deliver(9), "before the expected one");
        assertEquals(List.of(), stream.ran);
        assertEquals(HeldFrames.PROCESSED, deliver(10));
        assertEquals(List.of("10/2/10@7", "11/3/11@7"), stream.ran, "12 is the gap now");
        assertEquals(12, stream.expected);
        assertEquals(0b1, held.bits, "13 is the next but one");
        assertEquals(HeldFrames.PROCESSED, deliver(12));
        assertEquals(List.of("10/2/10@7", "11/3/11@7", "12/0/12@7", "13/1/13@7"), stream.ran);
        assertEquals(0, held.bits);
        assertEquals(ReorderPool.SLOTS, freeSlots());
    }

    @Test
    void holdsUpToThirtyTwoBeyondTheGapAndDropsFurther() {
        stream.expected = -5; // sequence numbers wrap: only their difference counts
        assertEquals(HeldFrames.DROPPED, deliver(-5 + 1 + HeldFrames.RANGE), "33 ahead");
        assertEquals(HeldFrames.HELD, deliver(-5 + HeldFrames.RANGE), "32 ahead: the last bit");
        assertEquals(1 << 31, held.bits);
        assertEquals(HeldFrames.HELD, deliver(-4));
        assertEquals(1 << 31 | 1, held.bits);
        assertEquals(HeldFrames.PROCESSED, deliver(-5));
        assertEquals(List.of("-5/3/-5@7", "-4/0/-4@7"), stream.ran);
        assertEquals(1 << 29, held.bits);
        held.drop();
        assertEquals(0, held.bits);
        assertEquals(ReorderPool.SLOTS, freeSlots());
    }

    @Test
    void aFrameThePoolCannotTakeIsDropped() {
        stream.expected = 1;
        final MemorySegment big = arena.allocate(Frame.HEADER_LENGTH + PAYLOAD + 1);
        Frame.writeBase(big, Frame.OP_SEND, 0, PAYLOAD + 1, 1, 2, 3, 0, 0, 0);
        assertEquals(HeldFrames.DROPPED, held.deliver(stream, stream, big, Frame.OP_SEND, 0));
        assertEquals(0, held.bits);
        final List<Integer> taken = new ArrayList<>();
        for (int slot = pool.store(big, 1); slot >= 0; slot = pool.store(big, 1)) {
            taken.add(slot);
        }
        assertEquals(HeldFrames.DROPPED, deliver(2), "pool full");
        assertEquals(0, held.bits);
        taken.forEach(pool::release);
        assertEquals(HeldFrames.HELD, deliver(2));
    }

    @Test
    void aHeldFrameTheStreamRefusesBecomesTheGapAndItsSlotComesBack() {
        stream.expected = 100;
        deliver(101);
        deliver(102);
        stream.refuse = 101;
        assertEquals(HeldFrames.PROCESSED, deliver(100));
        assertEquals(List.of("100/0/100@7"), stream.ran);
        assertEquals(101, stream.expected);
        assertEquals(1, held.bits, "102 is still held, the next but one");
        assertEquals(ReorderPool.SLOTS - 1, freeSlots(), "only 102 still held");
        held.drop();
        assertEquals(ReorderPool.SLOTS, freeSlots());
    }

    @Test
    void aHeldFrameThatThrowsStillGivesBackItsSlot() {
        stream.expected = 0;
        deliver(1);
        stream.explode = 1;
        assertThrows(IllegalStateException.class, () -> deliver(0));
        assertEquals(ReorderPool.SLOTS, freeSlots());
    }

    @Test
    void heldFramesStopRunningWhenTheQueuePairStopsAndTheirSlotsComeBack() {
        stream.expected = 20;
        deliver(21);
        deliver(22);
        deliver(23);
        stream.disconnectAfter = 21;
        assertEquals(HeldFrames.PROCESSED, deliver(20));
        assertEquals(List.of("20/0/20@7", "21/1/21@7"), stream.ran, "22 and 23 stay unprocessed");
        assertEquals(ReorderPool.SLOTS - 1, freeSlots(), "22 was handed over and released; 23 is still held");
        held.drop();
        assertEquals(ReorderPool.SLOTS, freeSlots());
        held.drop();
        assertEquals(ReorderPool.SLOTS, freeSlots(), "dropping twice frees nothing twice");
    }

    @Test
    void anInOrderFrameTheStreamRefusesRunsNothingHeld() {
        stream.expected = 5;
        deliver(6);
        stream.refuse = 5;
        assertEquals(HeldFrames.PROCESSED, deliver(5));
        assertEquals(List.of(), stream.ran);
        assertEquals(1, held.bits, "6 still held behind the refused 5");
    }

    @Test
    void dropForgetsEveryHeldFrameAndTheirSlotsAreReusedOnce() {
        stream.expected = 0;
        for (int seq = 1; seq <= HeldFrames.RANGE; seq++) {
            assertEquals(HeldFrames.HELD, deliver(seq));
        }
        assertEquals(-1, held.bits);
        assertEquals(ReorderPool.SLOTS - HeldFrames.RANGE, freeSlots());
        held.drop();
        assertEquals(0, held.bits);
        final MemorySegment f = frame(0, 0);
        final Set<Integer> slots = new HashSet<>();
        for (int slot = pool.store(f, 1); slot >= 0; slot = pool.store(f, 1)) {
            slots.add(slot);
        }
        assertEquals(ReorderPool.SLOTS, slots.size(), "each slot free exactly once");
    }

    @Test
    void countsEachOutcomeWhereItBelongs() {
        final Counters c = new Counters();
        HeldFrames.count(HeldFrames.HELD, c);
        HeldFrames.count(HeldFrames.DUPLICATE, c);
        HeldFrames.count(HeldFrames.DUPLICATE, c);
        HeldFrames.count(HeldFrames.DROPPED, c);
        HeldFrames.count(HeldFrames.DROPPED, c);
        HeldFrames.count(HeldFrames.DROPPED, c);
        assertEquals(1, c.snapshot().get("rx.stashed"));
        assertEquals(2, c.snapshot().get("rx.duplicates"));
        assertEquals(3, c.snapshot().get("rx.out_of_order"));
    }
}
