package io.jdet;

/**
 * A completion queue's state ({@code struct det_cq_attr}).
 *
 * @param state     READY or ERROR
 * @param arm       the {@link CqArm} flags armed now (0 when disarmed)
 * @param size      how many completions it holds (the actual size, at least the size asked for)
 * @param threshold the armed threshold
 * @param depth     how many completions it holds now
 */
public record CqAttributes(CqState state, int arm, int size, int threshold, int depth) {
}
