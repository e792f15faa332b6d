package io.jdet;

import java.lang.foreign.MemorySegment;

/**
 * A protection domain ({@code struct det_pd}): regions, windows and queue pairs work together only inside one.
 */
public interface ProtectionDomain extends AutoCloseable {

    /**
     * The NIC the domain belongs to.
     *
     * @return the NIC
     */
    Nic nic();

    /**
     * Registers native memory ({@code det_reg_mr}). Its virtual address is {@code segment.address()}.
     *
     * @param segment the memory, native and reachable from every thread (from {@code Arena.ofShared()},
     *                {@code Arena.ofAuto()} or {@code Arena.global()}); it must stay alive until the region is
     *                deregistered (see {@link MemoryRegion} for what happens otherwise)
     * @param access  {@link Access} rights
     * @return the region
     * @throws DetException EFAULT if the segment is not native, is confined to one thread, or its arena is closed;
     *                      EINVAL for length 0, unknown access bits, REMOTE_READ without LOCAL_READ,
     *                      REMOTE_WRITE/REMOTE_ATOMIC without LOCAL_WRITE, or LOCAL_WRITE on a read-only segment;
     *                      ERANGE if address plus length wraps; E2BIG if longer than the NIC's
     *                      maximum region; EDQUOT if the registration quota would be exceeded; EAGAIN if the NIC has
     *                      its maximum number of regions; ENOMEM if no key can be allocated
     */
    MemoryRegion regMr(MemorySegment segment, int access);

    /**
     * Creates a memory window ({@code det_create_mw} / {@code ibv_alloc_mw}). It starts unbound.
     *
     * @param type 1 (bound with {@link QueuePair#bind}) or 2 (bound with {@link QueuePair#bindType2})
     * @return the window
     * @throws DetException EINVAL for another type; EAGAIN if the NIC has its maximum number of windows
     */
    MemoryWindow createMw(int type);

    /**
     * Creates a queue pair ({@code det_create_qp}) in state IDLE.
     *
     * @param create the sizes and completion queues
     * @return the queue pair
     * @throws DetException EINVAL if a size or limit is out of range, a queue with a non-zero size has no
     *                      completion queue, or a completion queue belongs to another NIC; EAGAIN if the NIC has its
     *                      maximum number of queue pairs
     * @throws IllegalStateException if the domain is deallocated or a completion queue destroyed
     */
    QueuePair createQp(QpCreate create);

    /**
     * Creates a collective group ({@code det_create_co}) whose collectives complete on {@code cq}. The caller then
     * {@link Collective#join joins} it. Its internal queue pairs and regions live in this domain, so the domain
     * cannot be deallocated until the group is closed.
     *
     * @param cq where the group's work requests complete; polling it also drives the group
     * @return the group
     * @throws DetException EINVAL if the completion queue is null or belongs to another NIC
     * @throws IllegalStateException if the domain is deallocated or the completion queue destroyed
     */
    Collective createCollective(CompletionQueue cq);

    /**
     * Deallocates the domain ({@code det_dealloc_pd}).
     *
     * @throws DetException EBUSY while regions, windows, queue pairs or collective groups (until their close) remain
     *                      in it
     */
    @Override
    void close();
}
