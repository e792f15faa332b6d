package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reply budget for unattributable traffic: a burst at once, then the rate, never more, whatever the clock does. */
class TokenBucketTest {
    private static final long MS = 1_000_000L;
    private static final long T0 = 5_000_000_000L;

    private static int takeAll(final TokenBucket b, final long now) {
        int n = 0;
        while (b.tryTake(now)) {
            n++;
            if (n > 1_000_000) {
                break;
            }
        }
        return n;
    }

    @Test
    void startsFullAndRefillsAtTheRate() {
        final TokenBucket b = new TokenBucket(10, 3);
        assertEquals(3, takeAll(b, T0), "a new bucket holds its burst");
        assertFalse(b.tryTake(T0 + 99 * MS), "99 ms at 10/s is less than one token");
        assertTrue(b.tryTake(T0 + 100 * MS), "exactly one token after 100 ms");
        assertFalse(b.tryTake(T0 + 100 * MS));
        assertEquals(2, takeAll(b, T0 + 300 * MS), "200 ms more: two tokens");
    }

    @Test
    void neverHoldsMoreThanItsBurst() {
        final TokenBucket b = new TokenBucket(10, 3);
        assertEquals(3, takeAll(b, T0));
        assertEquals(3, takeAll(b, T0 + 10_000 * MS), "ten idle seconds refill the burst, no more");
        assertEquals(3, takeAll(b, T0 + Long.MAX_VALUE / 2), "an idle time whose tokens overflow a long: full");
    }

    @Test
    void aClockThatGoesBackAddsNothingAndTakesNothing() {
        final TokenBucket b = new TokenBucket(10, 3);
        assertEquals(3, takeAll(b, T0));
        assertFalse(b.tryTake(T0 - 1_000 * MS), "earlier than the last call: no token");
        assertTrue(b.tryTake(T0 - 900 * MS), "100 ms after that call: one token, no debt from going back");
    }

    @Test
    void aRateOfZeroAllowsNothingAndABurstOfZeroStillAllowsOne() {
        assertEquals(0, takeAll(new TokenBucket(0, 5), T0));
        assertEquals(0, takeAll(new TokenBucket(-3, 5), T0), "a negative rate is none");
        final TokenBucket one = new TokenBucket(4, 0);
        assertEquals(1, takeAll(one, T0), "a positive rate holds at least one token");
        assertEquals(1, takeAll(one, T0 + 10_000 * MS));
    }
    @Test
    void aNewBucketIsFullWhateverTheClockReads() {
        final TokenBucket b = new TokenBucket(10, 3);
        assertEquals(3, takeAll(b, 0), "the first call, at time 0, finds the burst");
        final TokenBucket negative = new TokenBucket(10, 3);
        assertEquals(3, takeAll(negative, -T0), "nanoTime may be negative");
    }

    @Test
    void aFastBucketLeftIdleForHoursIsFullNotOverflowed() {
        final TokenBucket b = new TokenBucket(1_000_000, 100_000);
        assertEquals(100_000, takeAll(b, T0));
        final long hours = 10_000_000_000_000L; // 2.8 hours: elapsed * rate no longer fits a long
        assertEquals(100_000, takeAll(b, T0 + hours));
    }
}
