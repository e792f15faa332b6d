package io.jdet.perf;

import java.util.Locale;

/**
 * Every measurement the perf tool makes: the six jdet tests {@code --tests} selects, the four baselines that run
 * beside them at the same sizes in the same run, and the five collective tests ({@code co-*}, run on their own).
 */
public enum TestKind {
    /** Send/receive ping-pong, one-way latency. */
    LAT_SEND("lat-send", true, true, "Ping Pong one way:"),
    /** RDMA write ping-pong, the receiver polling the last byte of its buffer; one-way latency. */
    LAT_WRITE("lat-write", true, true, "RDMA write one way:"),
    /** Bursts of sends, the last of each burst signaled. */
    BW_SEND("bw-send", true, false, "Burst Send message:"),
    /** Bursts of RDMA writes. */
    BW_WRITE("bw-write", true, false, "Burst RDMA write:"),
    /** Bursts of RDMA reads, at most max_or in flight. */
    BW_READ("bw-read", true, false, "Burst RDMA read:"),
    /** Bursts of 64-bit fetch-and-adds: an operation rate (8 bytes each). */
    BW_ATOMIC("bw-atomic", true, false, "Burst fetch-add:"),
    /** Baseline: DatagramChannel ping-pong over loopback. */
    UDP_PINGPONG("udp-pingpong", false, true, "UDP ping-pong one way:"),
    /** Baseline: SocketChannel (TCP_NODELAY) ping-pong over loopback. */
    TCP_PINGPONG("tcp-pingpong", false, true, "TCP ping-pong one way:"),
    /** Baseline: DatagramChannel stream with a credit window. */
    UDP_STREAM("udp-stream", false, false, "UDP stream:"),
    /** Baseline: SocketChannel stream. */
    TCP_STREAM("tcp-stream", false, false, "TCP stream:"),
    /** Baseline: Aeron ping-pong over UDP, embedded media driver. */
    AERON_UDP_PINGPONG("aeron-udp-pingpong", false, true, "Aeron UDP ping-pong:"),
    /** Baseline: Aeron stream over UDP, embedded media driver. */
    AERON_UDP_STREAM("aeron-udp-stream", false, false, "Aeron UDP stream:"),
    /** Baseline: Aeron ping-pong over IPC (shared memory in one JVM), beside jdet on the in-process fabric. */
    AERON_IPC_PINGPONG("aeron-ipc-pingpong", false, true, "Aeron IPC ping-pong:"),
    /** Baseline: Aeron stream over IPC, beside jdet on the in-process fabric. */
    AERON_IPC_STREAM("aeron-ipc-stream", false, false, "Aeron IPC stream:"),
    /** Collective: a barrier of {@code --ranks} members (size ignored); average latency per operation. */
    CO_BARRIER("co-barrier", true, true, "Barrier:"),
    /** Collective: a broadcast of the size from rank 0. */
    CO_BCAST("co-bcast", true, true, "Broadcast:"),
    /** Collective: an all-gather, the size per member (OSU's convention). */
    CO_ALLGATHER("co-allgather", true, true, "All-gather:"),
    /** Collective: an all-to-all, the size per destination (OSU's convention). */
    CO_ALLTOALL("co-alltoall", true, true, "All-to-all:"),
    /** Collective: a 64-bit integer sum all-reduce of the size (rounded up to 8 bytes). */
    CO_ALLREDUCE("co-allreduce", true, true, "All-reduce:");

    private final String label;
    private final boolean jdet;
    private final boolean latency;
    private final String detPerfLabel;

    TestKind(final String label, final boolean jdet, final boolean latency, final String detPerfLabel) {
        this.label = label;
        this.jdet = jdet;
        this.latency = latency;
        this.detPerfLabel = detPerfLabel;
    }

    /**
     * The name on the command line, in the output and in the JSON.
     *
     * @return the label, for example {@code lat-send}
     */
    public String label() {
        return label;
    }

    /**
     * Whether this measures jdet (as opposed to a plain Java baseline).
     *
     * @return true for the six jdet tests
     */
    public boolean jdet() {
        return jdet;
    }

    /**
     * Whether this is a ping-pong latency test (else a bandwidth test).
     *
     * @return true for latency
     */
    public boolean latency() {
        return latency;
    }

    /**
     * The heading of det_perf's result line.
     *
     * @return the label, padded by the caller
     */
    public String detPerfLabel() {
        return detPerfLabel;
    }

    /**
     * Whether the test ignores the message size (the atomic always moves 8 bytes).
     *
     * @return true for the fetch-and-add test
     */
    public boolean fixedSize() {
        return this == BW_ATOMIC;
    }

    /**
     * Whether this is a collective test ({@code co-*}), run by {@code io.jdet.perf.collective.CollectiveBench}
     * rather than by the two-end rig.
     *
     * @return true for the five {@code co-} kinds
     */
    public boolean collective() {
        return label.startsWith("co-");
    }

    /**
     * Whether this is an Aeron baseline.
     *
     * @return true for the four Aeron kinds
     */
    public boolean aeron() {
        return label.startsWith("aeron-");
    }

    /**
     * Whether this is an Aeron baseline over IPC.
     *
     * @return true for {@code aeron-ipc-pingpong} and {@code aeron-ipc-stream}
     */
    public boolean aeronIpc() {
        return label.startsWith("aeron-ipc-");
    }

    /**
     * Looks a test up by its label.
     *
     * @param label for example {@code bw-write}
     * @return the test
     * @throws IllegalArgumentException for an unknown label
     */
    public static TestKind of(final String label) {
        final String wanted = label.trim().toLowerCase(Locale.ROOT);
        for (final TestKind kind : values()) {
            if (kind.label.equals(wanted)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown test '" + label + "'");
    }
}
