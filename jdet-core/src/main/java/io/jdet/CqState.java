package io.jdet;

/** Completion queue states ({@code enum det_cq_state}). */
public enum CqState {
    /** Usable. */
    READY(0),
    /**
     * Overrun: a completion could not be stored. The queue pair whose completion was lost went to ERROR (as in
     * DET), and every other queue pair using the queue goes to ERROR when it next completes work into it.
     */
    ERROR(1);

    private final int code;

    CqState(final int code) {
        this.code = code;
    }

    /**
     * The numeric value, as in DET.
     *
     * @return the value
     */
    public int code() {
        return code;
    }
}
