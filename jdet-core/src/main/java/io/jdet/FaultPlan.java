package io.jdet;

/**
 * Faults a link injects into the frames it sends, for tests and the perf tool: each rate is a probability in
 * [0, 1] applied to every frame independently, from a seeded random source so that a run can be repeated.
 *
 * @param lossRate      probability that a frame is dropped
 * @param duplicateRate probability that a frame is sent twice
 * @param reorderRate   probability that a frame is held back and sent after the next one
 * @param corruptRate   probability that one byte of a frame is flipped (the CRC must catch it)
 * @param seed          the random seed
 */
public record FaultPlan(double lossRate, double duplicateRate, double reorderRate, double corruptRate, long seed) {
    /** No faults. */
    public static final FaultPlan NONE = new FaultPlan(0, 0, 0, 0, 0);

    /**
     * Checks the rates.
     *
     * @throws DetException EINVAL if a rate is outside [0, 1]
     */
    public FaultPlan {
        for (final double rate : new double[] {lossRate, duplicateRate, reorderRate, corruptRate}) {
            if (!(rate >= 0 && rate <= 1)) {
                throw new DetException(Errno.EINVAL, "fault rates must be in [0, 1]");
            }
        }
    }

    /**
     * Whether any fault is injected.
     *
     * @return true if some rate is above 0
     */
    public boolean active() {
        return lossRate > 0 || duplicateRate > 0 || reorderRate > 0 || corruptRate > 0;
    }
}
