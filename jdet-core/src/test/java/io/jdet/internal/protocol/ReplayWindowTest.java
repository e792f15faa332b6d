package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReplayWindowTest {
    private static boolean take(final ReplayWindow w, final long pn) {
        if (!w.fresh(pn)) {
            return false;
        }
        w.commit(pn);
        return true;
    }

    @Test
    void acceptsEachNumberOnceWithinTheWindow() {
        final ReplayWindow w = new ReplayWindow();
        assertTrue(take(w, 0));
        assertFalse(take(w, 0));
        assertTrue(take(w, 5));
        assertTrue(take(w, 3), "late but within the window");
        assertFalse(take(w, 3));
        assertTrue(take(w, 10_000));
        assertFalse(take(w, 5), "older than the window");
        assertTrue(take(w, 10_000 - ReplayWindow.WINDOW + 1));
        assertFalse(take(w, 10_000 - ReplayWindow.WINDOW));
        assertFalse(take(w, -1));
        for (long pn = 10_001; pn < 12_000; pn++) {
            assertTrue(take(w, pn));
        }
        for (long pn = 12_000 - ReplayWindow.WINDOW + 1; pn < 12_000; pn++) {
            assertFalse(w.fresh(pn), "seen: " + pn);
        }
    }

    @Test
    void aNumberNeverCommittedStaysFresh() {
        final ReplayWindow w = new ReplayWindow();
        w.commit(100);
        w.commit(102);
        assertTrue(w.fresh(101), "a forged frame's number (never committed) does not burn it");
        assertTrue(w.fresh(103));
    }
    @Test
    void aNumberIsRememberedInItsOwnWordOnly() {
        final ReplayWindow w = new ReplayWindow();
        w.commit(100);
        assertFalse(w.fresh(100), "seen, in the bitmap's second word");
        assertTrue(w.fresh(36), "the same bit of the first word was never seen");
        final ReplayWindow first = new ReplayWindow();
        first.commit(0);
        first.commit(64);
        assertFalse(first.fresh(0), "moving on by one word keeps the word of 0");
    }

    @Test
    void movingFarAheadForgetsTheWordsItReuses() {
        final ReplayWindow w = new ReplayWindow();
        w.commit(63);
        w.commit(2_000);
        assertTrue(w.fresh(1_087), "1087 shares 63's bit, in a word reused since");
        final ReplayWindow exact = new ReplayWindow();
        exact.commit(0);
        exact.commit(16 * 64 + 5);
        assertTrue(exact.fresh(16 * 64), "the word sixteen on, which reuses the word of 0, starts empty");
    }
}
