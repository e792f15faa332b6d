package io.jdet.perf.report;

import io.jdet.FaultPlan;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;

/** A fault plan in words, for people: which share of jdet's frames each fault hits, and the seed. */
public final class FaultWords {
    private FaultWords() {
    }

    /**
     * Describes a plan.
     *
     * @param faults the plan
     * @return for example {@code 2% of jdet's frames dropped, 0.5% sent twice; seed 7}, or {@code no faults}
     */
    public static String describe(final FaultPlan faults) {
        if (!faults.active()) {
            return "no faults";
        }
        final List<String> parts = new ArrayList<>();
        add(parts, faults.lossRate(), "dropped");
        add(parts, faults.duplicateRate(), "sent twice");
        add(parts, faults.reorderRate(), "held back behind the next one");
        add(parts, faults.corruptRate(), "corrupted");
        return String.join(", ", parts).replaceFirst(" ", " of jdet's frames ") + "; seed " + faults.seed();
    }

    private static void add(final List<String> parts, final double rate, final String what) {
        if (rate > 0) {
            parts.add(percent(rate) + " " + what);
        }
    }

    /** A rate as a percentage with at most three significant digits: 0.02 is 2%, 0.00125 is 0.125%. */
    static String percent(final double rate) {
        return new BigDecimal(rate * 100).round(new MathContext(3)).stripTrailingZeros().toPlainString() + "%";
    }
}
