package io.jdet.testing;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.ConnectionListener;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Two ends on a fabric of their own: NIC A and NIC B of one device, each with an event queue, a protection domain,
 * a completion queue (shared by both work queues), a queue pair and a registered buffer; the queue pairs are
 * connected to each other unless the options say otherwise. Closing it closes the device, then frees the memory,
 * and fails the test if either NIC's engine caught a failure meanwhile ({@code engine.errors}).
 */
public final class Loopback implements AutoCloseable {
    /** Every right a region can have. */
    public static final int ALL_RIGHTS = Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ
        | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC | Access.MW_BIND;

    public final Det det;
    public final String fabric;
    public final EventQueue eventsA;
    public final EventQueue eventsB;
    public final Nic nicA;
    public final Nic nicB;
    public final ProtectionDomain pdA;
    public final ProtectionDomain pdB;
    public final CompletionQueue cqA;
    public final CompletionQueue cqB;
    public final QueuePair qpA;
    public final QueuePair qpB;
    public final Arena arena = Arena.ofShared();
    public final MemorySegment bufA;
    public final MemorySegment bufB;
    public final MemoryRegion mrA;
    public final MemoryRegion mrB;

    /** What to build; the defaults suit most tests. */
    public static final class Options {
        private Configuration configuration = new Configuration();
        private long bufferBytes = 1 << 16;
        private int cqSize = 256;
        private int sqSize = 64;
        private int rqSize = 64;
        private int sges = 4;
        private int maxOr = 4;
        private int maxIr = 4;
        private int access = ALL_RIGHTS;
        private boolean connect = true;
        private String nic;
        private String nicB;

        public Options configuration(final Configuration value) {
            configuration = value;
            return this;
        }

        public Options bufferBytes(final long value) {
            bufferBytes = value;
            return this;
        }

        public Options cqSize(final int value) {
            cqSize = value;
            return this;
        }

        public Options depth(final int sq, final int rq) {
            sqSize = sq;
            rqSize = rq;
            return this;
        }

        public Options sges(final int value) {
            sges = value;
            return this;
        }

        public Options maxOr(final int value) {
            maxOr = value;
            return this;
        }

        public Options maxIr(final int value) {
            maxIr = value;
            return this;
        }

        public Options access(final int value) {
            access = value;
            return this;
        }

        /**
         * @param value the NIC name both ends open (say a {@link Tests#uniqueShmGroup}); null for a fabric of
         *              their own
         * @return this
         */
        public Options nic(final String value) {
            nic = value;
            return this;
        }

        /**
         * @param a the NIC name end A opens
         * @param b the NIC name end B opens (say the two ends of a veth pair, {@code eth:<a>} and {@code eth:<b>})
         * @return this
         */
        public Options nics(final String a, final String b) {
            nic = a;
            nicB = b;
            return this;
        }

        public Options connect(final boolean value) {
            connect = value;
            return this;
        }
    }

    /**
     * Two connected ends with the default options.
     *
     * @return the fixture
     */
    public static Loopback open() {
        return new Loopback(new Options());
    }

    /**
     * Two ends built as the options say.
     *
     * @param options the options
     * @return the fixture
     */
    public static Loopback open(final Options options) {
        return new Loopback(options);
    }

    private Loopback(final Options o) {
        det = Det.open(o.configuration);
        try {
            fabric = o.nic != null ? o.nic : Tests.uniqueFabric("fixture");
            eventsA = det.createEvent(null);
            eventsB = det.createEvent(null);
            nicA = det.openNic(fabric, eventsA);
            nicB = det.openNic(o.nicB != null ? o.nicB : fabric, eventsB);
            pdA = nicA.allocPd();
            pdB = nicB.allocPd();
            cqA = nicA.createCq(o.cqSize, eventsA);
            cqB = nicB.createCq(o.cqSize, eventsB);
            qpA = pdA.createQp(new QpCreate(cqA, cqA, o.sqSize, o.rqSize, o.sges, o.sges, o.maxOr, o.maxIr));
            qpB = pdB.createQp(new QpCreate(cqB, cqB, o.sqSize, o.rqSize, o.sges, o.sges, o.maxOr, o.maxIr));
            bufA = arena.allocate(o.bufferBytes, 64);
            bufB = arena.allocate(o.bufferBytes, 64);
            mrA = pdA.regMr(bufA, o.access);
            mrB = pdB.regMr(bufB, o.access);
            if (o.connect) {
                connect();
            }
        } catch (final RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Connects A to B and B to A (both must be IDLE). */
    public void connect() {
        connect(qpA, nicB, qpB);
        connect(qpB, nicA, qpA);
    }

    /**
     * Connects A's queue pair to B's through the connection manager: B listens on {@code service} and accepts,
     * A connects; both with the NICs' connection managers as configured (their security, say). Raises what
     * {@code connect} or {@code accept} raise.
     *
     * @param service the service B listens on
     */
    public void connectThroughCm(final int service) {
        try (ConnectionListener listener = nicB.connectionManager().listen(service)) {
            final CompletableFuture<Void> accepted = CompletableFuture.runAsync(
                () -> listener.take(10_000).accept(qpB, null, 10_000));
            nicA.connectionManager().connect(nicB.address(), service, qpA, null, 10_000);
            accepted.join();
        }
    }

    /**
     * Connects one queue pair to another.
     *
     * @param qp     the queue pair to connect
     * @param peer   the NIC of the other end
     * @param remote the other end
     */
    public static void connect(final QueuePair qp, final Nic peer, final QueuePair remote) {
        qp.modify(new QpModify().connect(peer.address(), remote.number(), remote.query().localPsn()));
    }

    /**
     * One data segment over part of a region.
     *
     * @param mr     the region
     * @param offset where in it
     * @param length how many bytes
     * @return a one-element array
     */
    public static DataSegment[] sge(final MemoryRegion mr, final long offset, final int length) {
        return new DataSegment[] {new DataSegment().set(mr, offset, length)};
    }

    /**
     * Polls A's completion queue.
     *
     * @param n how many completions
     * @return them
     */
    public List<WorkCompletion> pollA(final int n) {
        return Tests.pollUntil(cqA, n);
    }

    /**
     * Polls B's completion queue.
     *
     * @param n how many completions
     * @return them
     */
    public List<WorkCompletion> pollB(final int n) {
        return Tests.pollUntil(cqB, n);
    }

    /**
     * Waits until a queue pair reaches a state.
     *
     * @param qp    the queue pair
     * @param state the state
     */
    public static void awaitState(final QueuePair qp, final io.jdet.QpState state) {
        Tests.await(qp + " in " + state, () -> qp.query().state() == state);
    }

    /** Waits until both queue pairs are in ERROR, as after a failure found at either end. */
    public void awaitBothInError() {
        awaitState(qpA, io.jdet.QpState.ERROR);
        awaitState(qpB, io.jdet.QpState.ERROR);
    }

    /**
     * Posts an RDMA write of A's first bytes to B and returns its completion.
     *
     * @param remoteAddress where at B
     * @param rKey          B's key
     * @param length        how many bytes
     * @return the completion at A
     */
    public WorkCompletion writeAtoB(final long remoteAddress, final int rKey, final int length) {
        qpA.write(77, sge(mrA, 0, length), 1, remoteAddress, rKey, 0, 0);
        return Tests.pollOne(cqA);
    }

    private long expectedErrorsA;
    private long expectedErrorsB;

    /**
     * Declares the failures a test provokes inside the engine on purpose, which {@link #close} then expects exactly
     * instead of none.
     *
     * @param atA the engine failures expected at A
     * @param atB the engine failures expected at B
     */
    public void expectEngineErrors(final long atA, final long atB) {
        expectedErrorsA = atA;
        expectedErrorsB = atB;
    }

    /**
     * Closes the device, then frees the memory; then fails if either NIC's progress thread caught a failure while
     * the fixture was open (see {@link Tests#assertEngineHealthy}) other than those declared with
     * {@link #expectEngineErrors}, so that no test passes because the engine swallowed an exception.
     */
    @Override
    public void close() {
        final long errorsA = nicA == null ? 0 : Tests.engineErrors(nicA);
        final long errorsB = nicB == null ? 0 : Tests.engineErrors(nicB);
        try {
            det.close();
        } finally {
            arena.close();
        }
        if (errorsA != expectedErrorsA || errorsB != expectedErrorsB) {
            throw new AssertionError("the engine caught " + errorsA + " failure(s) at A and " + errorsB + " at B");
        }
    }
}
