package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Starting points of a connection: random, never 0, packed request-low response-high, message ids a bijection. */
class IsnTest {
    @Test
    void packKeepsBothHalvesWhateverTheirSign() {
        final int[] values = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 0x8000_0001, 0x1234_5678};
        for (final int low : values) {
            for (final int high : values) {
                final long packed = Isn.pack(low, high);
                assertEquals(low, Isn.low(packed), low + "/" + high);
                assertEquals(high, Isn.high(packed), low + "/" + high);
            }
        }
        assertEquals(0x0000_0002_0000_0001L, Isn.pack(1, 2), "request low, response high");
        assertEquals(0xFFFF_FFFF_0000_0000L, Isn.pack(0, -1));
        assertEquals(0x0000_0000_FFFF_FFFFL, Isn.pack(-1, 0), "a negative low half does not spill into the high");
    }

    @Test
    void randomValuesAreNeverZeroAndDoNotRepeat() {
        final Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            final int v = Isn.next();
            assertNotEquals(0, v);
            seen.add(v);
        }
        assertTrue(seen.size() > 990, "1000 draws of 32 bits gave " + seen.size() + " distinct values");
        final Set<Long> pairs = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            final long p = Isn.pair();
            assertNotEquals(0, Isn.low(p));
            assertNotEquals(0, Isn.high(p));
            pairs.add(p);
        }
        assertEquals(100, pairs.size());
    }

    @Test
    void messageIdsStartAtZeroForAStreamStartedAtOneAndTellStartsApart() {
        assertEquals(0, Isn.firstMessageId(1), "DET's first message id");
        assertEquals(0x9E37_79B9, Isn.firstMessageId(2), "one step is the odd multiplier");
        assertEquals(-0x9E37_79B9, Isn.firstMessageId(0));
        final Set<Integer> ids = new HashSet<>();
        for (int isn = -500; isn < 500; isn++) {
            ids.add(Isn.firstMessageId(isn));
        }
        assertEquals(1000, ids.size(), "a bijection: neighbouring starts never share a message id");
    }
}
