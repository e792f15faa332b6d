package io.jdet.systest;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QueuePair;
import io.jdet.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One end of a test: a NIC with a domain, one completion queue, one queue pair and one registered buffer with
 * every right. Polling helpers take a deadline, so no test waits forever.
 */
final class Endpoint implements AutoCloseable {
    static final int ALL_RIGHTS = Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE
        | Access.REMOTE_ATOMIC;

    /** The counter of failures the engine caught, in {@link Nic#counters()}. */
    static final String ENGINE_ERRORS = "engine.errors";

    final Nic nic;
    final ProtectionDomain pd;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    final QueuePair qp;
    final Arena arena = Arena.ofShared();
    final MemorySegment buffer;
    final MemoryRegion region;
    final DataSegment[] sge = {new DataSegment()};
    private final WorkCompletion[] batch = new WorkCompletion[64];

    Endpoint(final Det det, final String nicName, final long bufferBytes, final int depth) {
        this(det, nicName, bufferBytes, depth, null);
    }

    Endpoint(final Det det, final String nicName, final long bufferBytes, final int depth,
             final io.jdet.EventQueue events) {
        nic = det.openNic(nicName, events);
        pd = nic.allocPd();
        sendCq = nic.createCq(2 * depth, null);
        recvCq = nic.createCq(2 * depth, null);
        qp = pd.createQp(new QpCreate(sendCq, recvCq, depth, depth, 4, 4, 16, 16));
        buffer = arena.allocate(bufferBytes, 4096);
        region = pd.regMr(buffer, ALL_RIGHTS);
        for (int i = 0; i < batch.length; i++) {
            batch[i] = new WorkCompletion();
        }
    }

    /** @return a one-element segment list for [offset, offset + length) of the buffer */
    DataSegment[] at(final long offset, final int length) {
        sge[0].set(region, offset, length);
        return sge;
    }

    /** Polls the send queue's completion queue; see {@link #await(CompletionQueue, int, long)}. */
    List<WorkCompletion> sent(final int count, final long timeoutMs) {
        return await(sendCq, count, timeoutMs);
    }

    /** Polls the receive queue's completion queue; see {@link #await(CompletionQueue, int, long)}. */
    List<WorkCompletion> received(final int count, final long timeoutMs) {
        return await(recvCq, count, timeoutMs);
    }

    /**
     * Polls until {@code count} completions arrived or the time runs out.
     *
     * @return copies of the completions, in order
     * @throws AssertionError on timeout
     */
    List<WorkCompletion> await(final CompletionQueue cq, final int count, final long timeoutMs) {
        final List<WorkCompletion> got = new ArrayList<>(count);
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (got.size() < count) {
            final int n = cq.poll(batch, Math.min(batch.length, count - got.size()));
            for (int i = 0; i < n; i++) {
                final WorkCompletion w = batch[i];
                got.add(new WorkCompletion().set(w.id(), w.status(), w.type(), w.flags(), w.length(), w.immediate(),
                    w.invalidatedRKey(), w.reapCount(), w.queuePair()));
            }
            if (n == 0 && System.nanoTime() - deadline > 0) {
                throw new AssertionError("only " + got.size() + " of " + count + " completions within " + timeoutMs
                    + " ms: " + got + "; counters " + nic.counters());
            }
            if (n == 0) {
                Thread.onSpinWait();
            }
        }
        return got;
    }

    /**
     * Waits until the queue pair reaches a state.
     *
     * @param state     the state
     * @param timeoutMs the most to wait
     * @throws AssertionError if it does not reach it in time
     */
    void awaitState(final io.jdet.QpState state, final long timeoutMs) {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (qp.query().state() != state) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(qp + " not in " + state + " within " + timeoutMs + " ms but in "
                    + qp.query().state());
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000); // the progress thread does the work
        }
    }

    /**
     * Fails if the NIC's progress thread caught a failure ({@code engine.errors}): the engine must survive bad
     * input and dead peers because it answers them, not because an exception was swallowed.
     *
     * @throws AssertionError if the count is not 0
     */
    void assertEngineHealthy() {
        final java.util.Map<String, Long> counters = nic.counters();
        if (counters.get(ENGINE_ERRORS) != 0) {
            throw new AssertionError("the progress thread of " + nic.address() + " caught a failure; counters "
                + counters);
        }
    }

    /**
     * Closes everything, then fails if the engine caught a failure while the endpoint was open (see
     * {@link #assertEngineHealthy()}).
     */
    @Override
    public void close() {
        final long engineErrors = nic.counters().get(ENGINE_ERRORS);
        qp.close();
        region.close();
        sendCq.close();
        recvCq.close();
        pd.close();
        nic.close();
        arena.close();
        if (engineErrors != 0) {
            throw new AssertionError("the engine of " + nic.address() + " caught " + engineErrors + " failure(s)");
        }
    }
}
