package io.jdet.internal.verbs;

/**
 * The last {@link #CAPACITY} queue pairs of a NIC destroyed while connected: each one's number, its peer's address
 * and its peer's queue pair. A frame that peer sends to one of them afterwards (its DISCONNECT was lost, or found
 * inexact because frames in flight had not all arrived) is answered with what that DISCONNECT said,
 * {@code QP_DESTROYED}, rather than {@code INVALID_QP}, so a clean teardown never looks like a fault at the peer.
 * Fixed size, written and read under the engine lock, allocation free.
 */
final class DestroyedQps {
    /** How many destroyed queue pairs are remembered; older ones are answered as unknown. */
    static final int CAPACITY = 64;

    private final int[] number = new int[CAPACITY];
    private final long[] peer = new long[CAPACITY];
    private final int[] peerQp = new int[CAPACITY];
    private int next;
    private int size;

    /**
     * Remembers a queue pair destroyed while connected, forgetting the oldest when full. Raises nothing.
     *
     * @param qp         its number
     * @param remotePeer its peer's address handle
     * @param remoteQp   its peer's queue pair number
     */
    void add(final int qp, final long remotePeer, final int remoteQp) {
        number[next] = qp;
        peer[next] = remotePeer;
        peerQp[next] = remoteQp;
        next = (next + 1) % CAPACITY;
        size = Math.min(CAPACITY, size + 1);
    }

    /**
     * Whether a frame names a remembered queue pair and comes from the peer it was connected to. Raises nothing.
     *
     * @param qp       the queue pair the frame names
     * @param fromPeer the frame's source address handle
     * @param fromQp   the frame's source queue pair
     * @return whether that queue pair was destroyed while connected to that source
     */
    boolean contains(final int qp, final long fromPeer, final int fromQp) {
        for (int i = 0; i < size; i++) {
            if (number[i] == qp && peer[i] == fromPeer && peerQp[i] == fromQp) {
                return true;
            }
        }
        return false;
    }
}
