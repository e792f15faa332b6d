/**
 * jdet: RDMA verbs (protection domains, registered memory, memory windows, queue pairs, completion queues,
 * send/receive, RDMA read and write, atomics and events) over an in-process fabric or UDP.
 * Only {@code io.jdet} is API; everything under {@code io.jdet.internal} may change without notice.
 * Each NIC publishes its counters as a JMX MBean ({@code java.management}) and raises JFR events ({@code jdk.jfr}).
 */
module io.jdet {
    requires java.management;
    requires jdk.jfr;

    exports io.jdet;
}
