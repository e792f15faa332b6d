package io.jdet.internal.verbs;

import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The key table: unpredictable handles that do not come back soon, and a lookup that finds exactly the live ones. */
class KeyTableTest {

    @Test
    void shouldFindEveryLiveObjectAndNoReleasedOneUnderRandomChurn() {
        final KeyTable table = new KeyTable();
        final Map<Integer, Object> model = new HashMap<>();
        final int[] live = new int[4096];
        int liveCount = 0;
        final SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 200_000; step++) {
            if (liveCount == 0 || liveCount < live.length && random.nextInt(100) < 55) {
                final Object object = new Object();
                final int handle = table.allocate(object);
                assertTrue(handle > 0 && handle <= KeyPermutation.MASK, "handle " + handle);
                assertNull(model.put(handle, object), "handle " + handle + " issued while in use");
                live[liveCount++] = handle;
            } else {
                final int at = random.nextInt(liveCount);
                final int handle = live[at];
                live[at] = live[--liveCount];
                table.release(handle);
                assertTrue(model.remove(handle) != null);
                assertNull(table.lookup(handle << 8 | 0x5A), "released handle still found");
            }
            if (step % 1000 == 0) {
                for (final Map.Entry<Integer, Object> e : model.entrySet()) {
                    assertSame(e.getValue(), table.lookup(e.getKey() << 8 | random.nextInt(256)));
                }
            }
        }
        assertEquals(liveCount, table.all().size());
        assertNull(table.lookup(0));
    }

    @Test
    void shouldNotReissueAHandleWithinAMillionAllocations() {
        final KeyTable table = new KeyTable();
        final BitSet seen = new BitSet(1 << 24);
        final Object object = new Object();
        for (int i = 0; i < 1 << 20; i++) {
            final int handle = table.allocate(object);
            assertTrue(!seen.get(handle), "handle 0x" + Integer.toHexString(handle) + " reissued after " + i);
            seen.set(handle);
            table.release(handle);
        }
    }

    @Test
    void shouldIssueHandlesThatDoNotFollowACounter() {
        final KeyTable first = new KeyTable();
        final KeyTable second = new KeyTable();
        int sequential = 0;
        int same = 0;
        int previous = first.allocate(this);
        for (int i = 0; i < 1000; i++) {
            final int handle = first.allocate(this);
            if (handle == previous + 1 || handle == previous + 0x100) {
                sequential++;
            }
            if (handle == second.allocate(this)) {
                same++;
            }
            previous = handle;
        }
        assertTrue(sequential < 5, sequential + " of 1000 handles followed their predecessor");
        assertTrue(same < 5, same + " of 1000 handles were the same in two tables");
    }

    @Test
    void shouldPermuteWithoutCollisions() {
        final KeyPermutation permutation = new KeyPermutation(new SecureRandom());
        final BitSet seen = new BitSet(1 << 24);
        for (int value = 0; value < 1 << 16; value++) {
            final int image = permutation.apply(value);
            assertEquals(image, image & KeyPermutation.MASK);
            assertTrue(!seen.get(image), "two values map to 0x" + Integer.toHexString(image));
            seen.set(image);
        }
    }
}
