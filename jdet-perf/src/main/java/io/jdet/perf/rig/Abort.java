package io.jdet.perf.rig;

/**
 * A flag one thread raises to make the other end of an embedded run give up at its next deadline check instead of
 * waiting out its timeout.
 */
public final class Abort {
    private volatile boolean raised;

    /** Creates a lowered flag. */
    public Abort() {
    }

    /** Raises the flag. */
    public void raise() {
        raised = true;
    }

    /**
     * Whether the flag is up.
     *
     * @return true once raised
     */
    public boolean raised() {
        return raised;
    }
}
