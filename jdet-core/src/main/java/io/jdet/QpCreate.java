package io.jdet;

/**
 * What to create a queue pair with ({@code struct det_qp_create}).
 *
 * @param sqCq   the completion queue of the send queue; may be null only if {@code sqSize} is 0
 * @param rqCq   the completion queue of the receive queue; may be null only if {@code rqSize} is 0
 * @param sqSize send queue depth
 * @param rqSize receive queue depth
 * @param sqSges scatter/gather elements per send work request
 * @param rqSges scatter/gather elements per receive work request
 * @param maxOr  outbound reads and atomics allowed in flight
 * @param maxIr  inbound reads and atomics accepted
 */
public record QpCreate(CompletionQueue sqCq, CompletionQueue rqCq, int sqSize, int rqSize, int sqSges, int rqSges,
                       int maxOr, int maxIr) {

    /**
     * A queue pair with one completion queue for both queues, the same depth and element count on both, and
     * {@code maxOr = maxIr = 4} as det_perf uses.
     *
     * @param cq    the completion queue of both queues
     * @param depth the depth of both queues
     * @param sges  the scatter/gather elements per work request on both queues
     * @return the creation attributes
     */
    public static QpCreate of(final CompletionQueue cq, final int depth, final int sges) {
        return new QpCreate(cq, cq, depth, depth, sges, sges, 4, 4);
    }
}
