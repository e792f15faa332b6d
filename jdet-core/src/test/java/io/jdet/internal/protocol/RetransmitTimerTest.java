package io.jdet.internal.protocol;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** RFC 6298's estimator: the first sample, the smoothing, the clamps, the back-off and a reset. */
class RetransmitTimerTest {
    private static final long MIN = 1_000;
    private static final long MAX = 1_000_000;

    @Test
    void theFirstTimeoutIsTheSmallest() {
        final RetransmitTimer t = new RetransmitTimer(MIN, MAX);
        assertEquals(MIN, t.rtoNs());
        assertEquals(0, t.srttNs());
        assertEquals(0, t.rttvarNs());
    }

    @Test
    void theFirstSampleSetsTheMeanAndHalfOfItAsTheDeviation() {
        final RetransmitTimer t = new RetransmitTimer(MIN, MAX);
        t.sample(10_000);
        assertEquals(10_000, t.srttNs());
        assertEquals(5_000, t.rttvarNs());
        assertEquals(10_000 + 4 * 5_000, t.rtoNs());
    }

    @Test
    void laterSamplesAreSmoothedAnEighthAndAQuarterAtATime() {
        final RetransmitTimer t = new RetransmitTimer(MIN, MAX);
        t.sample(10_000);
        t.sample(18_000); // delta 8 000 from the mean
        assertEquals((3 * 5_000 + 8_000) / 4, t.rttvarNs());
        assertEquals((7 * 10_000 + 18_000) / 8, t.srttNs());
        assertEquals(11_000 + 4 * 5_750, t.rtoNs());
        t.sample(3_000); // below the mean: the deviation is its distance, whichever side
        assertEquals((3 * 5_750 + 8_000) / 4, t.rttvarNs());
        assertEquals((7 * 11_000 + 3_000) / 8, t.srttNs());
        assertEquals(10_000 + 4 * 6_312, t.rtoNs());
    }

    @Test
    void theTimeoutStaysWithinTheBounds() {
        final RetransmitTimer low = new RetransmitTimer(MIN, MAX);
        low.sample(100); // 100 + 4 * 50 = 300: below the smallest
        assertEquals(MIN, low.rtoNs());
        final RetransmitTimer high = new RetransmitTimer(MIN, MAX);
        high.sample(400_000); // 400 000 + 4 * 200 000: above the largest
        assertEquals(MAX, high.rtoNs());
        final RetransmitTimer exact = new RetransmitTimer(MIN, 3 * MIN);
        exact.sample(MIN); // MIN + 4 * MIN / 2 = 3 * MIN: exactly the largest
        assertEquals(3 * MIN, exact.rtoNs());
    }

    @Test
    void eachTimeoutDoublesItUpToTheLargestUntilTheNextSample() {
        final RetransmitTimer t = new RetransmitTimer(MIN, 5 * MIN);
        t.backOff();
        assertEquals(2 * MIN, t.rtoNs());
        t.backOff();
        assertEquals(4 * MIN, t.rtoNs());
        t.backOff();
        assertEquals(5 * MIN, t.rtoNs());
        t.sample(200);
        assertEquals(MIN, t.rtoNs(), "a sample computes it afresh");
    }

    @Test
    void aResetForgetsTheSamples() {
        final RetransmitTimer t = new RetransmitTimer(MIN, MAX);
        t.sample(10_000);
        t.backOff();
        t.reset();
        assertEquals(MIN, t.rtoNs());
        assertEquals(0, t.srttNs());
        assertEquals(0, t.rttvarNs());
        t.sample(20_000);
        assertEquals(20_000, t.srttNs(), "the first sample again");
    }
}
