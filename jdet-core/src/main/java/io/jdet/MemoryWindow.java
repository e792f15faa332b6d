package io.jdet;

/**
 * A memory window ({@code struct det_mw}, {@code ibv_mw}): a remotely accessible range of a region, bound and
 * re-bound without re-registering. Type 1 windows are bound with {@link QueuePair#bind}; type 2 windows with a
 * posted {@link QueuePair#bindType2} and invalidated with {@link QueuePair#localInvalidate} or a peer's
 * {@link QueuePair#sendInvalidate}.
 */
public interface MemoryWindow extends AutoCloseable {

    /**
     * 1 or 2.
     *
     * @return the type
     */
    int type();

    /**
     * The remote key of the current binding (for type 2 also the last key given to a bind or that was
     * invalidated); a window that was never bound has a key that grants nothing. A bind's key is reported from its
     * post on; if the bind fails, this goes back to the key in force.
     *
     * @return the key
     * @throws IllegalStateException if the window is destroyed: its key names nothing any more
     */
    int rKey();

    /**
     * The current binding ({@code det_query_mw}).
     *
     * @return the attributes
     * @throws IllegalStateException if destroyed
     */
    MwAttributes query();

    /**
     * Destroys the window ({@code det_destroy_mw}); a binding ends and its key stops working at once.
     */
    @Override
    void close();
}
