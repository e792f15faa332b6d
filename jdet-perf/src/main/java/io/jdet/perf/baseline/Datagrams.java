package io.jdet.perf.baseline;

/** How the UDP baselines split a message: into datagrams of at most 65000 bytes, the last one shorter. */
final class Datagrams {
    /** The largest datagram the baselines send, below UDP's 65507-byte limit. */
    static final int MAX_DATAGRAM = 65_000;

    private Datagrams() {
    }

    static int fragments(final int size) {
        return Math.max(1, (size + MAX_DATAGRAM - 1) / MAX_DATAGRAM);
    }

    static int start(final int fragment) {
        return fragment * MAX_DATAGRAM;
    }

    static int end(final int size, final int fragment) {
        return Math.min(size, (fragment + 1) * MAX_DATAGRAM);
    }
}
