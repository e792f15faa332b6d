package io.jdet.bench;

import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.Nic;
import io.jdet.QpModify;

import java.lang.foreign.Arena;

/**
 * Two connected {@link Endpoint}s on two NICs of one device, both driven by the benchmark thread: the fixture of
 * every data-path benchmark. The NIC name is a benchmark parameter ({@code loop:bench} for the in-process fabric,
 * {@code udp:127.0.0.1} for UDP loopback); a name this build cannot open fails the benchmark at setup with a
 * message saying so, rather than measuring something else.
 */
public final class Connection implements AutoCloseable {
    private final Det det;
    private final Arena arena;
    private final Endpoint a;
    private final Endpoint b;

    /**
     * Opens and connects both sides.
     *
     * @param nicName     the NIC name both sides open
     * @param bufferBytes each side's registered buffer size
     * @param sqDepth     send queue depth on both sides
     * @param rqDepth     receive queue depth on both sides
     * @throws IllegalStateException if the NIC name names no link this build has (ENODEV)
     */
    public Connection(final String nicName, final int bufferBytes, final int sqDepth, final int rqDepth) {
        this(nicName, bufferBytes, sqDepth, rqDepth, io.jdet.Security.NONE);
    }

    /**
     * Opens both sides and connects them: plainly with {@link QpModify#connect}, or through the connection manager
     * with the given protection.
     *
     * @param nicName     the NIC name both sides open
     * @param bufferBytes each side's registered buffer size
     * @param sqDepth     send queue depth on both sides
     * @param rqDepth     receive queue depth on both sides
     * @param security    {@code Security.NONE} for a plain connection, else the protection both sides use
     * @throws IllegalStateException if the NIC name names no link this build has (ENODEV)
     */
    public Connection(final String nicName, final int bufferBytes, final int sqDepth, final int rqDepth,
                      final io.jdet.Security security) {
        det = Det.open();
        arena = Arena.ofShared();
        try {
            final Nic nicA = open(det, nicName);
            final Nic nicB = open(det, nicName);
            a = new Endpoint(nicA, arena, bufferBytes, sqDepth, rqDepth);
            b = new Endpoint(nicB, arena, bufferBytes, sqDepth, rqDepth);
            if (security.mode() == io.jdet.Security.Mode.NONE) {
                a.qp.modify(new QpModify().connect(nicB.address(), b.qp.number(), b.qp.query().localPsn()));
                b.qp.modify(new QpModify().connect(nicA.address(), a.qp.number(), a.qp.query().localPsn()));
            } else {
                connectProtected(nicA, nicB, security);
            }
        } catch (final RuntimeException e) {
            close();
            throw e;
        }
    }

    private void connectProtected(final Nic nicA, final Nic nicB, final io.jdet.Security security) {
        final int service = 0xBE4C;
        nicA.connectionManager().security(security);
        nicB.connectionManager().security(security);
        try (io.jdet.ConnectionListener listener = nicB.connectionManager().listen(service)) {
            final java.util.concurrent.CompletableFuture<Void> accepted = java.util.concurrent.CompletableFuture
                .runAsync(() -> listener.take(10_000).accept(b.qp, null, 10_000));
            nicA.connectionManager().connect(nicB.address(), service, a.qp, null, 10_000);
            accepted.join();
        }
    }

    private static Nic open(final Det det, final String nicName) {
        try {
            return det.openNic(nicName, null);
        } catch (final DetException e) {
            if (e.errno() == Errno.ENODEV) {
                throw new IllegalStateException("NIC '" + nicName + "' cannot be opened in this build (" + e.getMessage()
                    + "): this benchmark needs that link; choose another with -p nic=loop:bench", e);
            }
            throw e;
        }
    }

    /**
     * The requesting side.
     *
     * @return side A
     */
    public Endpoint a() {
        return a;
    }

    /**
     * The responding side.
     *
     * @return side B
     */
    public Endpoint b() {
        return b;
    }

    /**
     * One send/receive round trip of {@code size} bytes: A sends, B's receive completes and B reposts it, B sends
     * back, A's receive completes and A reposts it. Send completions ride on the replies and are taken by the
     * polls. Both receive queues must have been filled with receives of at least {@code size} bytes.
     *
     * @param size the message length in bytes
     * @return B's outstanding receive count, for the caller to return so that nothing is optimised away
     */
    public int pingPong(final int size) {
        a.send(size);
        b.awaitRecv();
        b.postRecv(size);
        b.send(size);
        a.awaitRecv();
        a.postRecv(size);
        return b.recvsOutstanding();
    }

    /** Closes the device (and with it every object) and frees the buffers. */
    @Override
    public void close() {
        det.close();
        arena.close();
    }
}
