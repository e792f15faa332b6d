package io.jdet.perf.jdet;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.CqArm;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.MemoryRegion;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.perf.PerfException;
import io.jdet.perf.rig.Spinner;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The jdet resources of one test at one end, created as det_perf does (a domain, a completion queue armed on an
 * event queue, a queue pair, a send and a receive buffer registered with every right), and the completion loop
 * every test shares: busy-poll, or arm and wait on the event queue. Send-side completions are counted by the
 * slots they free ({@link WorkCompletion#reapCount()}), so that suppressed work requests are accounted for;
 * receive completions go to the test's {@link ReceiveSink}. Polling and waiting are allocation free.
 */
public final class JdetQp implements AutoCloseable {
    private static final int RIGHTS = Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ
        | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC;

    /** Where receive completions go. */
    @FunctionalInterface
    public interface ReceiveSink {
        /**
         * A receive completed successfully.
         *
         * @param wc the completion, valid during the call only
         */
        void onReceive(WorkCompletion wc);
    }

    private static final long WAIT_SLICE_US = 100_000;

    private final QpShape shape;
    private final boolean waitMode;
    private final int maxRd;
    private final Spinner spinner;
    private final Arena arena = Arena.ofShared();
    /** The longest a protected connect or accept waits. */
    private static final long CONNECT_TIMEOUT_MS = 30_000;
    /** With {@code --secure}: the listener on this queue pair's number, until the peer connected. */
    private io.jdet.ConnectionListener listener;
    private final io.jdet.Nic nic;
    private final ProtectionDomain pd;
    private final EventQueue events;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemorySegment sendBuffer;
    private final MemorySegment recvBuffer;
    private final MemoryRegion sendRegion;
    private final MemoryRegion recvRegion;
    private final WorkCompletion[] completions = new WorkCompletion[32];
    private final EventRecord record = new EventRecord();
    private final DataSegment[] segment = {new DataSegment()};
    private final DataSegment[] noSegments = {};
    private ReceiveSink sink = wc -> {
        throw new PerfException("unexpected receive completion " + wc);
    };
    private ConnectInfo remote;
    private long posted;
    private long completed;
    private long polls;

    /**
     * Creates the resources.
     *
     * @param peer     the end's device and NIC
     * @param shape    queue and buffer sizes
     * @param waitMode whether completions are awaited on the event queue
     * @param maxRd    reads and atomics in flight (max_or and max_ir)
     * @param spinner  the busy-poll deadline
     * @throws PerfException if a verb fails
     */
    public JdetQp(final JdetPeer peer, final QpShape shape, final boolean waitMode, final int maxRd,
                  final Spinner spinner) {
        this.shape = shape;
        this.waitMode = waitMode;
        this.maxRd = maxRd;
        this.spinner = spinner;
        for (int i = 0; i < completions.length; i++) {
            completions[i] = new WorkCompletion();
        }
        try {
            nic = peer.nic();
            pd = peer.nic().allocPd();
            events = peer.det().createEvent(null);
            cq = peer.nic().createCq(shape.cqSize(), events);
            qp = pd.createQp(new QpCreate(cq, cq, shape.sqDepth(), shape.rqDepth(), 1, 1, maxRd, maxRd));
            final long bytes = Math.max(64, shape.bufferBytes());
            sendBuffer = arena.allocate(bytes, 64);
            recvBuffer = arena.allocate(bytes, 64);
            sendRegion = pd.regMr(sendBuffer, RIGHTS);
            recvRegion = pd.regMr(recvBuffer, RIGHTS);
        } catch (final DetException e) {
            throw new PerfException("setting up " + shape.kind().label() + ": " + e.getMessage(), e);
        }
    }

    /**
     * What the peer needs to connect and to address this end's buffers.
     *
     * @return the info
     */
    public ConnectInfo localInfo() {
        if (qp.query().state() == io.jdet.QpState.IDLE && listener == null && isProtected()) {
            // Listening before the peer can know this queue pair: its connect cannot arrive first.
            listener = nic.connectionManager().listen(qp.number());
        }
        return new ConnectInfo(qp.number(), qp.query().localAddress(), sendRegion.address(), sendRegion.rKey(),
            recvRegion.address(), recvRegion.rKey(), maxRd,
            qp.query().localPsn());
    }

    /**
     * Connects to the peer, with max_or lowered to the peer's max_ir as det_perf does.
     *
     * @param peer the peer's info
     * @throws PerfException if the peer cannot be reached
     */
    public void connect(final ConnectInfo peer) {
        connect(peer, true);
    }

    /**
     * Connects to the peer: with {@link QpModify#connect}, or, when the NIC's connection manager protects its
     * connections ({@code --secure}), through it: the active end connects to the peer's queue pair number as
     * service id, the passive end accepts on its own (listened on in {@link #localInfo}).
     *
     * @param peer   the peer's info
     * @param active whether this end is the client's
     * @throws PerfException if the peer cannot be reached or the handshake fails
     */
    public void connect(final ConnectInfo peer, final boolean active) {
        try {
            if (isProtected()) {
                if (active) {
                    nic.connectionManager().connect(peer.nicAddress(), peer.qpNumber(), qp, null,
                        CONNECT_TIMEOUT_MS);
                } else {
                    listener.take(CONNECT_TIMEOUT_MS).accept(qp, null, CONNECT_TIMEOUT_MS);
                    listener.close();
                }
                remote = peer;
                return;
            }
            qp.modify(new QpModify().connect(peer.nicAddress(), peer.qpNumber(), peer.psn())
                .maxOr(Math.min(maxRd, peer.maxIr())));
        } catch (final DetException e) {
            throw new PerfException("cannot connect to " + peer.nicAddress() + " queue pair " + peer.qpNumber()
                + ": " + e.getMessage(), e);
        }
        remote = peer;
    }

    /**
     * Routes receive completions.
     *
     * @param receiveSink the test's handler
     */
    public void sink(final ReceiveSink receiveSink) {
        this.sink = receiveSink;
    }

    /**
     * Polls the completion queue once and dispatches what it found.
     *
     * @return how many completions it took
     * @throws PerfException for an unsuccessful completion
     */
    public int progress() {
        final int n = cq.poll(completions);
        polls++;
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = completions[i];
            if (wc.status() != WcStatus.SUCCESS) {
                throw new PerfException(shape.kind().label() + " at " + shape.size() + " bytes: work request "
                    + wc.id() + " (" + wc.type() + ") completed with " + wc.status());
            }
            if (wc.type() == WcType.RECV) {
                sink.onReceive(wc);
            } else {
                completed += wc.reapCount();
            }
        }
        return n;
    }

    /**
     * Returns once at least one completion was taken: busy-polling, or (in wait mode) arming the queue with a
     * threshold of 1, polling once more, and waiting on the event queue, as det_perf -w does.
     *
     * @throws PerfException on timeout, abort, or an unsuccessful completion
     */
    public void awaitProgress() {
        if (progress() > 0) {
            return;
        }
        if (!waitMode) {
            spinner.reset();
            do {
                spinner.idle();
            } while (progress() == 0);
            return;
        }
        final long deadline = System.nanoTime() + spinner.timeoutNs();
        while (true) {
            cq.arm(CqArm.THRESHOLD, 1);
            if (progress() > 0) {
                return;
            }
            final long leftNs = deadline - System.nanoTime();
            if (leftNs <= 0 || spinner.abort().raised()) {
                throw new PerfException((leftNs <= 0 ? "timed out" : "aborted") + " waiting for a completion of "
                    + shape.kind().label());
            }
            try {
                // Wait in slices so that an aborted run is noticed.
                events.waitOn(Math.clamp(TimeUnit.NANOSECONDS.toMicros(leftNs), 1, WAIT_SLICE_US), record);
            } catch (final DetException e) {
                if (e.errno() != Errno.ETIME) {
                    throw new PerfException("waiting on the event queue: " + e.getMessage(), e);
                }
            }
            if (progress() > 0) {
                return;
            }
        }
    }

    /**
     * Takes completions until at most {@code outstanding} send-queue work requests are incomplete.
     *
     * @param outstanding the most allowed in flight afterwards
     */
    public void awaitSends(final long outstanding) {
        while (posted - completed > outstanding) {
            awaitProgress();
        }
    }

    /** Counts a posted send-queue work request (call after every post). */
    public void posted() {
        posted++;
    }

    /**
     * Posts a receive into a slice of the receive buffer (or none, for a write with immediate).
     *
     * @param id     the work request id
     * @param offset where in the receive buffer
     * @param length how many bytes, or 0 for no data segment
     */
    public void postRecv(final long id, final long offset, final int length) {
        if (length == 0) {
            qp.recv(id, noSegments, 0);
        } else {
            qp.recv(id, segment(recvRegion, offset, length), 1);
        }
    }

    /**
     * Points the shared data segment into the send or receive region. Allocation free.
     *
     * @param region {@link #sendRegion()} or {@link #recvRegion()}
     * @param offset the offset in it
     * @param length the length
     * @return the one-element segment array, to pass to a verb
     */
    public DataSegment[] segment(final MemoryRegion region, final long offset, final int length) {
        segment[0].set(region, offset, length);
        return segment;
    }

    /**
     * The queue pair.
     *
     * @return the queue pair
     */
    public QueuePair qp() {
        return qp;
    }

    /**
     * The peer's info, once connected.
     *
     * @return the info
     */
    public ConnectInfo remote() {
        return remote;
    }

    /**
     * The send buffer.
     *
     * @return the memory
     */
    public MemorySegment sendBuffer() {
        return sendBuffer;
    }

    /**
     * The receive buffer (the target of the peer's writes and atomics).
     *
     * @return the memory
     */
    public MemorySegment recvBuffer() {
        return recvBuffer;
    }

    /**
     * The send buffer's region.
     *
     * @return the region
     */
    public MemoryRegion sendRegion() {
        return sendRegion;
    }

    /**
     * The receive buffer's region.
     *
     * @return the region
     */
    public MemoryRegion recvRegion() {
        return recvRegion;
    }

    /**
     * The shape it was made with.
     *
     * @return the shape
     */
    public QpShape shape() {
        return shape;
    }

    /**
     * Whether completions are awaited on the event queue.
     *
     * @return true in wait mode
     */
    public boolean waitMode() {
        return waitMode;
    }

    /**
     * The busy-poll deadline.
     *
     * @return the spinner
     */
    public Spinner spinner() {
        return spinner;
    }

    /**
     * Polls so far.
     *
     * @return the count
     */
    public long polls() {
        return polls;
    }

    private boolean isProtected() {
        return nic.connectionManager().security().mode() != io.jdet.Security.Mode.NONE;
    }

    /** Destroys the queue pair and everything else of the test, in det_perf's order. */
    @Override
    public void close() {
        if (listener != null) {
            listener.close();
        }
        try {
            qp.close();
            recvRegion.close();
            sendRegion.close();
            cq.close();
            events.close();
            pd.close();
        } catch (final DetException | IllegalStateException e) {
            // The device may have been closed under us to stop a stuck run: nothing left to free.
        } finally {
            try {
                arena.close();
            } catch (final IllegalStateException e) {
                // Still held by a region a failed close left behind: the memory goes with the JVM.
            }
        }
    }
}
