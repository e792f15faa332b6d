package io.jdet.internal.collective;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The FIFO of ints: order kept across the wrap of its array and across growth, and a clear that empties it. */
class IntQueueTest {
    @Test
    void keepsOrderAcrossTheWrapAndTheGrowth() {
        final IntQueue q = new IntQueue();
        assertTrue(q.isEmpty());
        int next = 0;
        int expect = 0;
        for (int i = 0; i < 6; i++) {
            q.add(next++);
        }
        for (int i = 0; i < 5; i++) {
            assertEquals(expect, q.peek());
            assertEquals(expect++, q.poll());
        }
        // head is at 5 of 8: these wrap, then the ninth item grows the array from a wrapped state
        for (int i = 0; i < 20; i++) {
            q.add(next++);
        }
        assertEquals(21, q.size());
        assertFalse(q.isEmpty());
        while (!q.isEmpty()) {
            assertEquals(expect, q.peek());
            assertEquals(expect++, q.poll());
        }
        assertEquals(next, expect);
        assertEquals(0, q.size());
    }

    @Test
    void aClearedQueueIsEmptyAndStartsAfresh() {
        final IntQueue q = new IntQueue();
        for (int i = 1; i <= 11; i++) {
            q.add(i);
        }
        q.poll();
        q.clear();
        assertTrue(q.isEmpty());
        assertEquals(0, q.size());
        assertEquals(0, q.peek(), "a cleared queue holds zeros");
        q.add(77);
        q.add(78);
        assertEquals(2, q.size());
        assertEquals(77, q.poll());
        assertEquals(78, q.poll());
    }
}
