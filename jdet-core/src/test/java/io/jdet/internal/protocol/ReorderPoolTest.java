package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The NIC's out-of-order frame store: bounded, each slot a private copy, a released slot reused. */
class ReorderPoolTest {
    private static MemorySegment frame(final Arena arena, final int length, final int fill) {
        final MemorySegment f = arena.allocate(length);
        f.fill((byte) fill);
        return f;
    }

    @Test
    void holdsAtMostItsSlotsEachACopyOfItsFrame() {
        final ReorderPool pool = new ReorderPool(128);
        try (Arena arena = Arena.ofConfined()) {
            final Set<Integer> slots = new HashSet<>();
            for (int i = 0; i < ReorderPool.SLOTS; i++) {
                final MemorySegment f = frame(arena, 100 + i % 28, i);
                final int slot = pool.store(f, (int) f.byteSize());
                assertTrue(slot >= 0 && slot < ReorderPool.SLOTS, "slot " + slot);
                assertTrue(slots.add(slot), "slot " + slot + " handed out twice");
                f.fill((byte) 0xEE); // the sender's buffer is reused: the pool must hold its own copy
            }
            assertEquals(-1, pool.store(frame(arena, 10, 1), 10), "every slot taken");
            for (final int slot : slots) {
                final int i = pool.frame(slot).get(ValueLayout.JAVA_BYTE, 0) & 0xFF;
                assertEquals(100 + i % 28, pool.length(slot), "length of frame " + i);
                for (int k = 0; k < pool.length(slot); k++) {
                    assertEquals((byte) i, pool.frame(slot).get(ValueLayout.JAVA_BYTE, k), "byte " + k + " of " + i);
                }
            }
            final int freed = slots.iterator().next();
            pool.release(freed);
            assertEquals(freed, pool.store(frame(arena, 5, 7), 5), "the released slot is the one free");
            assertEquals(5, pool.length(freed));
            assertEquals(-1, pool.store(frame(arena, 5, 7), 5));
        } finally {
            pool.close();
        }
    }

    @Test
    void refusesAFrameLargerThanASlot() {
        final ReorderPool pool = new ReorderPool(64);
        try (Arena arena = Arena.ofConfined()) {
            assertEquals(-1, pool.store(frame(arena, 65, 1), 65));
            final int slot = pool.store(frame(arena, 64, 2), 64);
            assertTrue(slot >= 0, "a frame of exactly a slot fits");
            assertEquals(64, pool.length(slot));
        } finally {
            pool.close();
        }
    }

    @Test
    void closingFreesTheSlots() {
        final ReorderPool pool = new ReorderPool(64);
        final int slot;
        try (Arena arena = Arena.ofConfined()) {
            slot = pool.store(frame(arena, 10, 3), 10);
        }
        final MemorySegment held = pool.frame(slot);
        pool.close();
        assertThrows(IllegalStateException.class, () -> held.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void anUnusedPoolClosesWithoutMemory() {
        new ReorderPool(1500).close();
    }
}
