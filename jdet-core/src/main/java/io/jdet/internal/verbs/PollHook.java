package io.jdet.internal.verbs;

/**
 * Work that every poll of a completion queue runs around its engine pass, outside the engine lock: how a collective
 * group drives its steps (which take the engine lock themselves, {@link CqImpl#lockEngine}). Neither method throws.
 */
public interface PollHook {
    /**
     * Before the poll's engine pass: starts what waits to start (a collective posted to an idle group), so that its
     * first messages leave now and carry the acknowledgements this side owes their peers, which the pass would
     * otherwise send on their own. Cheap when nothing waits.
     */
    void beforePass();

    /** After the pass: takes in what it received and runs the steps that allows. */
    void afterPass();
}
