package io.jdet.perf.collective;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The α and β calibration's rounds: run until the figure stops falling or the time runs out, then the median of the
 * rounds from the last new least on.
 */
class SettledTest {
    /** Rounds that return the given figures in turn, then the last one forever; counts the calls. */
    private static final class Rounds {
        final double[] figures;
        final AtomicInteger calls = new AtomicInteger();

        Rounds(final double... figures) {
            this.figures = figures;
        }

        double next() {
            final int i = calls.getAndIncrement();
            return figures[Math.min(i, figures.length - 1)];
        }
    }

    @Test
    void aFigureThatStillFallsKeepsTheRoundsGoingAndTheSteadyRoundsMakeTheFigure() {
        // The JIT's compilations end: 8.2, 6.2, ... then about 4 stays, with noise either way.
        final Rounds r = new Rounds(8.2, 6.2, 5.5, 5.6, 3.9, 4.5, 3.95, 4.1, 1.0);
        final double figure = CollectiveBench.settled(r::next, 3, Long.MAX_VALUE, System::nanoTime);
        // 3.9 came with the fifth call and three after it brought nothing lower: the median of 3.9, 4.5, 3.95, 4.1.
        assertEquals(4.025, figure, 1e-9);
        assertEquals(8, r.calls.get());
    }

    @Test
    void eachNewLeastStartsTheCountOfQuietRoundsAgain() {
        // 6 is a quiet round, 4 a new least; had it not started the count again, 7 would have ended it at 4.
        final Rounds r = new Rounds(5, 6, 4, 7, 3, 8, 9, 1);
        assertEquals(8, CollectiveBench.settled(r::next, 2, Long.MAX_VALUE, System::nanoTime)); // of 3, 8, 9
        assertEquals(7, r.calls.get()); // 8 and 9 ended it: the 1 behind them is never asked for
    }

    @Test
    void theTimeLimitEndsRoundsThatKeepImproving() {
        final AtomicLong now = new AtomicLong();
        final AtomicInteger calls = new AtomicInteger();
        // Every round is better than the last and takes 1 ms of the fake clock: only the limit ends them.
        final double figure = CollectiveBench.settled(() -> {
            now.addAndGet(1_000_000);
            return 1000.0 - calls.incrementAndGet();
        }, 10, 5_000_000, now::get);
        assertEquals(5, calls.get());
        assertEquals(995.0, figure); // the last round, a new least with nothing after it
    }

    @Test
    void withNoNewLeastTheFirstRoundAndTheQuietOnesMakeTheMedian() {
        final Rounds r = new Rounds(2, 9, 3, 4);
        assertEquals(3.5, CollectiveBench.settled(r::next, 3, Long.MAX_VALUE, System::nanoTime)); // of 2, 9, 3, 4
        assertEquals(4, r.calls.get());
    }
}
