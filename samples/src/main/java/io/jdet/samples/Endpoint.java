package io.jdet.samples;

import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One end of a sample: a device, a NIC with an event queue, a protection domain, one completion queue for both
 * queues of one queue pair, and one registered buffer. Every sample starts by opening one.
 */
public final class Endpoint implements AutoCloseable {
    /** The device. */
    public final Det det;
    /** Where the NIC's asynchronous events (a remote disconnect) go. */
    public final EventQueue events;
    /** The NIC. */
    public final Nic nic;
    /** The domain of the queue pair and the buffer. */
    public final ProtectionDomain pd;
    /** The completion queue of both queues. */
    public final CompletionQueue cq;
    /** The queue pair, IDLE until the connection manager connects it. */
    public final QueuePair qp;
    /** The arena of the buffer: shared, so the NIC's progress thread may reach it. */
    public final Arena arena = Arena.ofShared();
    /** The registered buffer. */
    public final MemorySegment buffer;
    /** The buffer's region. */
    public final MemoryRegion mr;
    private final WorkCompletion[] polled = {new WorkCompletion()};

    /**
     * Opens an end.
     *
     * @param nicName     a UDP NIC name, {@code udp:<address>[:<port>]}
     * @param bufferBytes the size of the registered buffer
     * @param access      the buffer's {@link io.jdet.Access} rights
     * @param depth       the depth of the send and receive queues
     */
    public Endpoint(final String nicName, final long bufferBytes, final int access, final int depth) {
        det = Det.open();
        try {
            events = det.createEvent(null);
            nic = det.openNic(nicName, events);
            pd = nic.allocPd();
            cq = nic.createCq(2 * depth, null);
            qp = pd.createQp(QpCreate.of(cq, depth, 1));
            buffer = arena.allocate(bufferBytes, 64);
            mr = pd.regMr(buffer, access);
        } catch (final RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * The NIC name a client opens to reach a server: a UDP NIC on the server's IP address family and network, on
     * any free port ({@code udp:127.0.0.1} for {@code udp:127.0.0.1:7000}).
     *
     * @param server the server's address, {@code udp:<address>:<port>}
     * @return the NIC name
     */
    public static String nicNameFor(final String server) {
        final String rest = server.startsWith("udp:") ? server.substring(4) : server;
        final int colon = rest.lastIndexOf(':');
        return "udp:" + (colon < 0 ? rest : rest.substring(0, colon));
    }

    /**
     * A one-element segment array pointing into the buffer, for a post.
     *
     * @param offset the first byte in the buffer
     * @param length the length in bytes
     * @return the segments
     */
    public DataSegment[] at(final long offset, final int length) {
        return new DataSegment[] {new DataSegment().set(mr, offset, length)};
    }

    /**
     * Polls until one completion arrives (polling also runs the NIC's receive path) and checks that it succeeded.
     *
     * @param timeoutMs the longest wait
     * @return the completion, valid until the next call
     * @throws IllegalStateException if none came in time or it failed
     */
    public WorkCompletion next(final long timeoutMs) {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (cq.poll(polled) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no completion within " + timeoutMs + " ms");
            }
            Thread.onSpinWait();
        }
        final WorkCompletion wc = polled[0];
        if (wc.status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("work request " + wc.id() + " failed: " + wc);
        }
        return wc;
    }

    /**
     * Creates another queue pair on the same completion queue, for a server that serves several clients.
     *
     * @param depth the depth of its send and receive queues
     * @return the queue pair, IDLE
     */
    public QueuePair newQueuePair(final int depth) {
        return pd.createQp(QpCreate.of(cq, depth, 1));
    }

    /**
     * Waits until the peer disconnects the queue pair (it raises a {@link EventCode#DISCONNECT} event).
     *
     * @param timeoutMs the longest wait
     * @throws io.jdet.DetException ETIME if the peer did not disconnect in time
     */
    public void awaitDisconnect(final long timeoutMs) {
        awaitDisconnects(List.of(qp), timeoutMs);
    }

    /**
     * Waits until the peers of all these queue pairs have disconnected, in any order.
     *
     * @param queuePairs the queue pairs
     * @param timeoutMs  the longest wait for all of them
     * @throws io.jdet.DetException ETIME if a peer did not disconnect in time
     */
    public void awaitDisconnects(final Collection<QueuePair> queuePairs, final long timeoutMs) {
        final Set<QueuePair> connected = new HashSet<>(queuePairs);
        final EventRecord event = new EventRecord();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!connected.isEmpty()) {
            final long leftUs = Math.max(1, TimeUnit.NANOSECONDS.toMicros(deadline - System.nanoTime()));
            events.waitOn(leftUs, event);
            if (event.code() == EventCode.DISCONNECT && event.handle() instanceof QueuePair peer) {
                connected.remove(peer);
            }
        }
    }

    @Override
    public void close() {
        det.close(); // closes the NIC, the queue pair and the region too
        arena.close();
    }
}
