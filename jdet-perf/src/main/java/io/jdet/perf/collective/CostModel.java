package io.jdet.perf.collective;

import io.jdet.CollectiveTuning;
import io.jdet.perf.TestKind;

/**
 * The Hockney α–β model of the algorithm jdet chooses for a collective (Thakur, Rabenseifner, Gropp 2005; the
 * formulas of {@code collectives.md} §1.3): the choice follows the same switch points as the engine, from the
 * run's {@link CollectiveTuning}. The reduction's computation (γ) is left out: the model counts messages and bytes.
 *
 * @param alphaUs   the cost of a message, microseconds
 * @param betaUs    the cost of a byte, microseconds
 * @param tuning    the switch points
 */
record CostModel(double alphaUs, double betaUs, CollectiveTuning tuning) {

    /** The chosen algorithm and its predicted time. */
    record Prediction(String algorithm, double us) {
    }

    private static boolean powerOfTwo(final int p) {
        return (p & p - 1) == 0;
    }

    private static int ceilLg(final int p) {
        return 32 - Integer.numberOfLeadingZeros(p - 1);
    }

    private static int floorLg(final int p) {
        return 31 - Integer.numberOfLeadingZeros(p);
    }

    /**
     * Predicts one operation.
     *
     * @param kind a {@code co-*} test
     * @param size the test's size: the message (broadcast, all-reduce), per member (all-gather) or per destination
     *             (all-to-all)
     * @param p    members
     * @return the algorithm and its time
     */
    Prediction predict(final TestKind kind, final long size, final int p) {
        final double a = alphaUs;
        final double b = betaUs;
        final double frac = (p - 1.0) / p;
        return switch (kind) {
            case CO_BARRIER -> new Prediction("dissemination", ceilLg(p) * a);
            case CO_BCAST -> {
                if (size < tuning.bcastShortMsg() || p < tuning.bcastMinProcs()) {
                    yield new Prediction("binomial", ceilLg(p) * (a + size * b));
                }
                if (size < tuning.bcastLongMsg() && powerOfTwo(p)) {
                    yield new Prediction("scatter+rd-allgather", 2 * floorLg(p) * a + 2 * frac * size * b);
                }
                yield new Prediction("scatter+ring-allgather", (ceilLg(p) + p - 1) * a + 2 * frac * size * b);
            }
            case CO_ALLGATHER -> {
                final long total = size * p;
                if (powerOfTwo(p) && total < tuning.allgatherLongMsg()) {
                    yield new Prediction("recursive-doubling", floorLg(p) * a + frac * total * b);
                }
                if (total < tuning.allgatherShortMsg()) {
                    yield new Prediction("bruck", ceilLg(p) * a + frac * total * b);
                }
                yield new Prediction("ring", (p - 1) * a + frac * total * b);
            }
            case CO_ALLTOALL -> {
                if (size <= tuning.alltoallShortMsg() && p >= tuning.alltoallMinProcs()) {
                    yield new Prediction("bruck", ceilLg(p) * a + size * p / 2.0 * ceilLg(p) * b);
                }
                // all at once or pairwise: p - 1 messages of one block each way
                yield new Prediction(size <= tuning.alltoallMediumMsg() ? "all-at-once" : "pairwise",
                    (p - 1) * (a + size * b));
            }
            case CO_ALLREDUCE -> allreduce(size, p);
            default -> throw new IllegalArgumentException(kind + " is not a collective");
        };
    }

    private Prediction allreduce(final long n, final int p) {
        final double a = alphaUs;
        final double b = betaUs;
        final double frac = (p - 1.0) / p;
        if (n < tuning.allreduceShortMsg() || n / 8 < p) {
            // recursive doubling, with a fold-in and a fold-out step when p is not a power of two
            final int steps = floorLg(p) + (powerOfTwo(p) ? 0 : 2);
            return new Prediction("recursive-doubling", steps * (a + n * b));
        }
        if (powerOfTwo(p) && n < tuning.allreduceRingMsg()) {
            return new Prediction("rabenseifner", 2 * floorLg(p) * a + 2 * frac * n * b);
        }
        return new Prediction("ring", 2 * (p - 1) * a + 2 * frac * n * b);
    }
}
