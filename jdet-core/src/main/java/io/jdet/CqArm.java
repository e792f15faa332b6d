package io.jdet;

/** Completion queue arm flags ({@code enum det_cq_arm}); they may be combined. Arming is one-shot. */
public final class CqArm {
    /** Fire on the next completion of any kind. */
    public static final int NEXT_SIGNALED = 1;
    /** Fire on the next solicited or unsuccessful completion. */
    public static final int NEXT_SOLICITED = 2;
    /** Fire when the queue holds at least the threshold number of completions. */
    public static final int THRESHOLD = 4;

    private CqArm() {
    }
}
