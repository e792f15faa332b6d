package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A work queue's ring of reused slots: depth limit, slot reuse, retirement, resizing with work outstanding. */
class WorkRingTest {
    private final List<Integer> made = new ArrayList<>();

    private WorkRing<RecvWr> ring(final int capacity) {
        return new WorkRing<>(capacity, sges -> {
            made.add(sges);
            return new RecvWr(sges);
        });
    }

    /** Posts one work request: fills the tail slot with an id and moves the tail. */
    private static RecvWr post(final WorkRing<RecvWr> r, final long id) {
        final RecvWr w = r.next(1);
        w.id = id;
        r.tail++;
        return w;
    }

    @Test
    void isFullAtItsCapacityAndNotOneBefore() {
        final WorkRing<RecvWr> r = ring(3);
        for (int i = 0; i < 3; i++) {
            assertFalse(r.full(), "depth " + i);
            assertEquals(i, r.depth());
            post(r, i);
        }
        assertTrue(r.full());
        assertEquals(3, r.depth());
        r.retire(1);
        assertFalse(r.full());
        assertEquals(2, r.depth());
    }

    @Test
    void everyOutstandingRequestHasItsOwnSlotAndSlotsAreReusedAfterwards() {
        for (final int capacity : new int[] {1, 2, 3, 5, 8, 9}) {
            made.clear();
            final WorkRing<RecvWr> r = ring(capacity);
            final Set<RecvWr> distinct = new HashSet<>();
            for (int i = 0; i < capacity; i++) {
                distinct.add(post(r, i));
            }
            assertEquals(capacity, distinct.size(), "capacity " + capacity);
            for (int i = 0; i < capacity; i++) {
                assertEquals(i, r.at(i).id, "capacity " + capacity + " position " + i);
            }
            final int slotsMade = made.size();
            r.retire(capacity);
            assertEquals(0, r.depth());
            for (int round = 0; round < 3 * capacity + 4; round++) {
                post(r, 100 + round);
                r.retire(1);
            }
            assertTrue(made.size() <= Integer.highestOneBit(capacity * 2 - 1),
                "capacity " + capacity + ": " + made.size() + " slots made for " + slotsMade + " in use");
        }
    }

    @Test
    void aZeroCapacityRingStillHasASlotAndIsAlwaysFull() {
        final WorkRing<RecvWr> r = ring(0);
        assertTrue(r.full());
        final RecvWr w = r.next(2);
        assertSame(w, r.next(2), "the tail slot is reused until posted");
        assertEquals(List.of(2), made);
    }

    @Test
    void aSlotGrowsWhenARequestNeedsMoreElementsAndIsKeptOtherwise() {
        final WorkRing<RecvWr> r = ring(4);
        final RecvWr small = r.next(2);
        assertSame(small, r.next(1));
        assertSame(small, r.next(2), "exactly as many elements as it has: kept");
        final RecvWr big = r.next(3);
        assertNotSame(small, big);
        assertEquals(3, big.segments.regions.length);
        assertSame(big, r.at(0));
        assertEquals(List.of(2, 3), made);
    }

    @Test
    void retiringMoreThanIsOutstandingStopsAtTheTail() {
        final WorkRing<RecvWr> r = ring(4);
        post(r, 1);
        post(r, 2);
        r.retire(5);
        assertEquals(0, r.depth(), "the engine folds the polls' retirements when it looks at the depth");
        assertEquals(2, r.head);
        r.retire(0);
        assertEquals(0, r.depth());
        assertEquals(2, r.head);
        r.clear();
        assertEquals(0, r.head);
        assertEquals(0, r.tail);
    }

    @Test
    void clearingForgetsRetirementsNotYetFolded() {
        final WorkRing<RecvWr> r = ring(4);
        post(r, 1);
        post(r, 2);
        post(r, 3);
        r.retire(1);
        assertEquals(2, r.depth());
        r.retire(2); // polled, but the engine has not looked yet
        r.clear();
        post(r, 4);
        post(r, 5);
        assertEquals(2, r.depth(), "retirements from before the clear free nothing after it");
        r.retire(1);
        assertEquals(1, r.depth());
    }

    @Test
    void retirementsOfAPollingThreadReachTheEngineThread() throws InterruptedException {
        final WorkRing<RecvWr> r = ring(64);
        final int total = 200_000;
        final java.util.concurrent.atomic.AtomicLong posted = new java.util.concurrent.atomic.AtomicLong();
        // The poller retires what the engine posted, one at a time (it alone writes, as under a ring lock).
        final Thread poller = Thread.ofPlatform().start(() -> {
            long retired = 0;
            while (retired < total) {
                if (posted.get() > retired) {
                    r.retire(1);
                    retired++;
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        for (long id = 0; id < total; id++) {
            while (r.full()) {
                Thread.onSpinWait();
            }
            post(r, id);
            posted.set(id + 1);
        }
        poller.join(30_000);
        assertEquals(0, r.depth(), "every retirement was folded");
        assertEquals(total, r.head);
    }

    @Test
    void resizingKeepsTheOutstandingRequestsInOrderAndMovesPositionsDown() {
        final WorkRing<RecvWr> r = ring(4);
        for (int i = 0; i < 6; i++) {
            post(r, i);
        }
        r.retire(3); // positions 3, 4, 5 outstanding
        final RecvWr[] outstanding = {r.at(3), r.at(4), r.at(5)};
        final long shift = r.resize(7);
        assertEquals(3, shift);
        assertEquals(0, r.head);
        assertEquals(3, r.tail);
        assertEquals(7, r.capacity);
        for (int i = 0; i < 3; i++) {
            assertSame(outstanding[i], r.at(i), "position " + i);
            assertEquals(3 + i, r.at(i).id);
        }
        for (int i = 3; i < 7; i++) {
            assertFalse(r.full(), "depth " + i + " of 7");
            final RecvWr w = post(r, 10 + i);
            for (int k = 0; k < 3; k++) {
                assertNotSame(outstanding[k], w, "a new post must not take an outstanding request's slot");
            }
        }
        assertTrue(r.full());
        for (int i = 0; i < 3; i++) {
            assertEquals(3 + i, r.at(i).id, "still in place after filling the ring");
        }
        for (int i = 3; i < 7; i++) {
            assertEquals(10 + i, r.at(i).id);
        }
    }

    @Test
    void shrinkingKeepsWhatIsOutstanding() {
        final WorkRing<RecvWr> r = ring(8);
        for (int i = 0; i < 5; i++) {
            post(r, i);
        }
        r.retire(4);
        final RecvWr last = r.at(4);
        assertEquals(4, r.resize(1));
        assertSame(last, r.at(0));
        assertEquals(1, r.depth());
        assertTrue(r.full());
    }
}
