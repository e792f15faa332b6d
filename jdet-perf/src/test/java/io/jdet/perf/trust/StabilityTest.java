package io.jdet.perf.trust;

import io.jdet.perf.rig.LatencyRig;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stability verdict on synthetic samples. */
class StabilityTest {

    private static Histogram samples(final long... ns) {
        final Histogram histogram = LatencyRig.newHistogram();
        for (final long value : ns) {
            histogram.recordValue(value);
        }
        return histogram;
    }

    private static Histogram repeat(final long ns, final int count) {
        final Histogram histogram = LatencyRig.newHistogram();
        histogram.recordValueWithCount(ns, count);
        return histogram;
    }

    @Test
    void shouldFindASteadyPingPongStable() {
        final Stability s = Stability.ofLatency(samples(4000, 4100, 4200, 4300, 5000), samples(4000, 4150, 4200,
            4250, 9000), 1);
        assertTrue(s.stable(), s.reasons()::toString);
        assertEquals(4.2, s.early(), 0.01);
        assertEquals(4.2, s.late(), 0.01);
    }

    @Test
    void shouldFlagHalvesThatDisagree() {
        // The case: the first half ran slow code (593 us) until the JIT caught up.
        final Stability s = Stability.ofLatency(repeat(593_000, 233), repeat(4_600, 234), 1);
        assertFalse(s.stable());
        assertTrue(s.reasons().get(0).contains("early and late halves disagree (593 vs 4.60 us median)"),
            s.reasons()::toString);
    }

    @Test
    void shouldFlagAMinFarBelowTheMedian() {
        final Histogram early = repeat(600_000, 200);
        early.recordValue(4_000);
        final Histogram late = repeat(610_000, 200);
        final Stability s = Stability.ofLatency(early, late, 2);
        assertFalse(s.stable());
        assertEquals(1, s.reasons().size(), s.reasons()::toString);
        assertTrue(s.reasons().get(0).startsWith("its median is 15"), s.reasons()::toString);
        assertEquals(2, s.attempts());
    }

    @Test
    void shouldJudgeStreamsByHalvesAndBursts() {
        assertTrue(Stability.ofStream(1000, 1100, samples(3000, 3100, 3050), 1).stable());
        final Stability halves = Stability.ofStream(1000, 400, samples(3000, 3100), 1);
        assertFalse(halves.stable());
        assertTrue(halves.reasons().get(0).contains("1000 vs 400 MB/s"), halves.reasons()::toString);
        final Stability bursts = Stability.ofStream(1000, 1000, samples(1000, 5000, 5000), 1);
        assertFalse(bursts.stable());
        assertTrue(bursts.reasons().get(0).contains("median burst is 5.0x slower than its fastest"),
            bursts.reasons()::toString);
    }

    @Test
    void shouldNotJudgeWithoutEvidence() {
        // One burst: no halves, no spread.
        final Stability one = Stability.ofStream(Double.NaN, Double.NaN, samples(3000), 1);
        assertTrue(one.stable());
        assertTrue(Double.isNaN(one.spread()));
        assertTrue(Stability.ofLatency(LatencyRig.newHistogram(), samples(4000), 1).stable());
    }
}
