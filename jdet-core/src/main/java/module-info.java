/**
 * jdet: RDMA verbs (protection domains, registered memory, memory windows, queue pairs, completion queues,
 * send/receive, RDMA read and write, atomics and events) over an in-process fabric or UDP.
 * Only {@code io.jdet} is API; everything under {@code io.jdet.internal} may change without notice.
 */
module io.jdet {
    exports io.jdet;
}
