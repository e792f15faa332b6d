package io.jdet.internal.cm;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The handshake's resend schedule (doubling up to a cap) and how long a finished exchange lingers. */
class CmRetryTest {
    private static final long MS = 1_000_000L;

    @Test
    void resendsAfterEachIntervalDoublingUpToTheCap() {
        final long t0 = 7_000 * MS;
        final CmRetry r = new CmRetry(10 * MS, t0);
        assertFalse(r.due(t0 + 10 * MS - 1));
        assertTrue(r.due(t0 + 10 * MS), "due at exactly the first interval");
        long t = t0 + 10 * MS;
        assertFalse(r.due(t + 20 * MS - 1), "the interval doubled");
        assertTrue(r.due(t + 20 * MS));
        t += 20 * MS;
        assertFalse(r.due(t + 40 * MS - 1));
        assertTrue(r.due(t + 40 * MS));
        t += 40 * MS;
        assertFalse(r.due(t + 80 * MS - 1));
        assertTrue(r.due(t + 80 * MS));
        t += 80 * MS;
        assertFalse(r.due(t + CmRetry.MAX_INTERVAL_NS - 1), "capped: 160 ms would be past the cap");
        assertTrue(r.due(t + CmRetry.MAX_INTERVAL_NS));
    }

    @Test
    void aTinyFirstIntervalIsRaisedToOneMillisecond() {
        final CmRetry r = new CmRetry(0, 0);
        assertFalse(r.due(MS - 1));
        assertTrue(r.due(MS));
    }

    @Test
    void worksAcrossTheClocksWrap() {
        final long t0 = Long.MAX_VALUE - 5 * MS;
        final CmRetry r = new CmRetry(10 * MS, t0);
        assertFalse(r.due(t0 + 1), "just after the start, though the deadline wrapped negative");
        assertTrue(r.due(t0 + 10 * MS));
    }

    @Test
    void lingersForItsTimeAfterFinishing() {
        final CmRetry r = new CmRetry(10 * MS, 0);
        assertFalse(r.expired(Long.MIN_VALUE), "an unfinished exchange never expires");
        assertFalse(r.expired(Long.MAX_VALUE));
        r.finish(5 * MS);
        assertFalse(r.expired(5 * MS + CmRetry.LINGER_NS - 1));
        assertTrue(r.expired(5 * MS + CmRetry.LINGER_NS));
        final CmRetry late = new CmRetry(10 * MS, 0);
        late.finish(Long.MAX_VALUE - MS);
        assertFalse(late.expired(Long.MAX_VALUE), "the linger deadline wrapped");
        assertTrue(late.expired(Long.MAX_VALUE - MS + CmRetry.LINGER_NS));
    }
}
