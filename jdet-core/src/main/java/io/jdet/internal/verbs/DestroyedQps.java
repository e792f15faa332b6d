package io.jdet.internal.verbs;

/**
 * The last {@link #CAPACITY} queue pairs of a NIC destroyed while connected: each one's number, its peer's address,
 * its peer's queue pair and the acknowledgements it last stood at. A frame that peer sends to one of them afterwards
 * (its DISCONNECT was lost, or found inexact because frames in flight had not all arrived) is answered with what
 * that DISCONNECT said, {@code QP_DESTROYED} and the same acknowledgements, rather than {@code INVALID_QP}: a clean
 * teardown never looks like a fault at the peer, and the peer's requests that did arrive complete successfully
 * rather than being flushed (or retried until {@code RETRY_EXCEEDED}) for want of an ack that was lost. Fixed size,
 * written and read under the engine lock, allocation free.
 */
final class DestroyedQps {
    /** How many destroyed queue pairs are remembered; older ones are answered as unknown. */
    static final int CAPACITY = 64;

    private final int[] number = new int[CAPACITY];
    private final long[] peer = new long[CAPACITY];
    private final int[] peerQp = new int[CAPACITY];
    private final int[] reqAck = new int[CAPACITY];
    private final int[] rspAck = new int[CAPACITY];
    private int next;
    private int size;

    /**
     * Remembers a queue pair destroyed while connected, forgetting the oldest when full. Raises nothing.
     *
     * @param qp         its number
     * @param remotePeer its peer's address handle
     * @param remoteQp   its peer's queue pair number
     * @param lastReqAck the last of the peer's requests it received in order (its request acknowledgement)
     * @param lastRspAck the last of the peer's responses it received in order (its response acknowledgement)
     */
    void add(final int qp, final long remotePeer, final int remoteQp, final int lastReqAck, final int lastRspAck) {
        number[next] = qp;
        peer[next] = remotePeer;
        peerQp[next] = remoteQp;
        reqAck[next] = lastReqAck;
        rspAck[next] = lastRspAck;
        next = (next + 1) % CAPACITY;
        size = Math.min(CAPACITY, size + 1);
    }

    /**
     * Finds a remembered queue pair that was connected to a frame's source. Raises nothing.
     *
     * @param qp       the queue pair the frame names
     * @param fromPeer the frame's source address handle
     * @param fromQp   the frame's source queue pair
     * @return its index for {@link #reqAck(int)} and {@link #rspAck(int)}, or -1 if that queue pair was not destroyed
     *         while connected to that source (or has been forgotten)
     */
    int indexOf(final int qp, final long fromPeer, final int fromQp) {
        for (int i = 0; i < size; i++) {
            if (number[i] == qp && peer[i] == fromPeer && peerQp[i] == fromQp) {
                return i;
            }
        }
        return -1;
    }

    /** @return the request acknowledgement of the queue pair at {@code index} (from {@link #indexOf}) when it went */
    int reqAck(final int index) {
        return reqAck[index];
    }

    /** @return the response acknowledgement of the queue pair at {@code index} (from {@link #indexOf}) when it went */
    int rspAck(final int index) {
        return rspAck[index];
    }
}
