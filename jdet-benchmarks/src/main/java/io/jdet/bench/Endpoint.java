package io.jdet.bench;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One side of a benchmark connection: a NIC with a protection domain, one completion queue for both work queues, a
 * queue pair and one registered buffer, plus the caller-owned reusable segments and completions the data path
 * needs. Polling counts what completed, so a benchmark waits for exactly the completions it expects and fails
 * loudly on any other outcome. Posting and polling through it allocate nothing.
 */
public final class Endpoint {
    /** Completions taken per poll. */
    private static final int POLL_BATCH = 16;

    final Nic nic;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemorySegment buffer;
    final MemoryRegion mr;
    final int sqDepth;
    final int rqDepth;
    private final DataSegment[] sendSegments = {new DataSegment()};
    private final DataSegment[] recvSegments = {new DataSegment()};
    private final WorkCompletion[] completions = new WorkCompletion[POLL_BATCH];

    /** Send-queue work requests posted and not yet completed (sends, writes, reads). */
    int sendsOutstanding;
    /** Receives posted and not yet completed. */
    int recvsOutstanding;
    /** Receive completions taken by polls and not yet claimed by {@link #awaitRecv} or {@link #takeRecvs}. */
    int recvsCompleted;
    /** Send-queue completions taken by polls and not yet claimed by {@link #awaitSendQueue}. */
    int sendsCompleted;

    /**
     * Opens the resources of one side on an already opened NIC.
     *
     * @param nic         the NIC
     * @param arena       where the buffer lives
     * @param bufferBytes the registered buffer's size
     * @param sqDepth     send queue depth
     * @param rqDepth     receive queue depth
     */
    public Endpoint(final Nic nic, final Arena arena, final int bufferBytes, final int sqDepth, final int rqDepth) {
        this.nic = nic;
        this.sqDepth = sqDepth;
        this.rqDepth = rqDepth;
        this.pd = nic.allocPd();
        this.cq = nic.createCq(sqDepth + rqDepth, null);
        this.qp = pd.createQp(new QpCreate(cq, cq, sqDepth, rqDepth, 1, 1, 4, 4));
        this.buffer = arena.allocate(bufferBytes, 64);
        this.mr = pd.regMr(buffer, Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ
            | Access.REMOTE_WRITE);
        for (int i = 0; i < completions.length; i++) {
            completions[i] = new WorkCompletion();
        }
    }

    /**
     * The NIC.
     *
     * @return the NIC
     */
    public Nic nic() {
        return nic;
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
     * The registered buffer.
     *
     * @return its memory
     */
    public MemorySegment buffer() {
        return buffer;
    }

    /**
     * The registered buffer's region.
     *
     * @return the region
     */
    public MemoryRegion mr() {
        return mr;
    }

    /**
     * Send-queue work requests posted and not yet completed.
     *
     * @return the count
     */
    public int sendsOutstanding() {
        return sendsOutstanding;
    }

    /**
     * Receives posted and not yet completed.
     *
     * @return the count
     */
    public int recvsOutstanding() {
        return recvsOutstanding;
    }

    /**
     * Posts receives until the receive queue is full, each into the first {@code length} bytes of the buffer.
     *
     * @param length the receive length in bytes
     */
    public void fillReceives(final int length) {
        while (recvsOutstanding < rqDepth) {
            postRecv(length);
        }
    }

    /**
     * Posts one receive into the first {@code length} bytes of the buffer.
     *
     * @param length the receive length in bytes
     */
    public void postRecv(final int length) {
        recvSegments[0].set(mr, 0, length);
        qp.recv(recvsOutstanding, recvSegments, 1);
        recvsOutstanding++;
    }

    /**
     * Posts a send of the first {@code length} bytes of the buffer, first waiting (polling) for a send-queue slot.
     *
     * @param length the message length in bytes
     */
    public void send(final int length) {
        send(length, 0);
    }

    /**
     * Posts a send of the first {@code length} bytes of the buffer with work-request flags, first waiting (polling)
     * for a send-queue slot.
     *
     * @param length the message length in bytes
     * @param flags  {@link io.jdet.WrFlags}, for example {@code MORE} on every post of a burst but the last
     */
    public void send(final int length, final int flags) {
        waitForSendSlot();
        sendSegments[0].set(mr, 0, length);
        qp.send(sendsOutstanding, sendSegments, 1, flags, 0);
        sendsOutstanding++;
    }

    /**
     * Posts an RDMA write of the first {@code length} bytes of the buffer to the start of the peer's region.
     *
     * @param length    the length in bytes
     * @param peer      the peer's region
     * @param flags     {@link io.jdet.WrFlags}
     * @param immediate the immediate value, with {@link io.jdet.WrFlags#IMMEDIATE}
     */
    public void write(final int length, final MemoryRegion peer, final int flags, final int immediate) {
        waitForSendSlot();
        sendSegments[0].set(mr, 0, length);
        qp.write(sendsOutstanding, sendSegments, 1, peer.address(), peer.rKey(), flags, immediate);
        sendsOutstanding++;
    }

    /**
     * Posts an RDMA read of {@code length} bytes from the start of the peer's region into the buffer.
     *
     * @param length the length in bytes
     * @param peer   the peer's region
     */
    public void read(final int length, final MemoryRegion peer) {
        waitForSendSlot();
        sendSegments[0].set(mr, 0, length);
        qp.read(sendsOutstanding, sendSegments, 1, peer.address(), peer.rKey(), 0);
        sendsOutstanding++;
    }

    private void waitForSendSlot() {
        while (sendsOutstanding >= sqDepth) {
            poll();
            sendsCompleted = 0;
        }
    }

    /**
     * Polls the completion queue once (which also runs this NIC's receive path) and counts what completed.
     *
     * @return how many completions were taken
     * @throws IllegalStateException if a work request completed with anything but success
     */
    public int poll() {
        final int n = cq.poll(completions);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = completions[i];
            if (wc.status() != WcStatus.SUCCESS) {
                throw new IllegalStateException("work request failed on " + nic.address() + ": " + wc);
            }
            if (wc.type() == WcType.RECV) {
                recvsOutstanding--;
                recvsCompleted++;
            } else {
                sendsOutstanding--;
                sendsCompleted++;
            }
        }
        return n;
    }

    /** Polls until a receive has completed, and claims it. */
    public void awaitRecv() {
        while (recvsCompleted == 0) {
            poll();
        }
        recvsCompleted--;
    }

    /**
     * Claims every receive completed so far.
     *
     * @return how many
     */
    public int takeRecvs() {
        final int n = recvsCompleted;
        recvsCompleted = 0;
        return n;
    }

    /** Polls until a send-queue work request has completed, and claims it. */
    public void awaitSendQueue() {
        while (sendsCompleted == 0) {
            poll();
        }
        sendsCompleted--;
    }

    /**
     * Polls this side and the peer until this side has nothing outstanding on its send queue, claiming every
     * completion: the quiet point between measurements.
     *
     * @param peer the other side, polled too so that it acknowledges
     */
    public void drainSends(final Endpoint peer) {
        while (sendsOutstanding > 0) {
            poll();
            peer.poll();
        }
        sendsCompleted = 0;
    }
}
