package io.jdet;

/**
 * The error numbers a verb can fail with, named and valued as in Linux's {@code errno.h} and the DET man pages
 * ({@code det_reg_mr(3)}, {@code det_bind(3)}, {@code det_send(3)}). Each verb's javadoc lists the ones it raises.
 */
public enum Errno {
    /** Operation not permitted: objects from different protection domains, or an illegal state transition. */
    EPERM(1),
    /** Interrupted while waiting. */
    EINTR(4),
    /** Input/output error: the NIC failed fatally ({@link EventCode#NIC_FATAL}) and serves nothing any more. */
    EIO(5),
    /** No such device or address: an invalid local key. */
    ENXIO(6),
    /** Argument list too long: more scatter/gather elements than the queue allows, or a region too large. */
    E2BIG(7),
    /** Try again: nothing to return right now, or a resource limit was reached. */
    EAGAIN(11),
    /** Out of memory. */
    ENOMEM(12),
    /** Permission denied: the access rights do not allow the operation. */
    EACCES(13),
    /** Bad address: the memory is not native memory. */
    EFAULT(14),
    /** Resource busy: the object is still in use. */
    EBUSY(16),
    /** An object with that identity exists already. */
    EEXIST(17),
    /** No such device: an unknown NIC name. */
    ENODEV(19),
    /** Invalid argument. */
    EINVAL(22),
    /** No space left: the work queue is full. */
    ENOSPC(28),
    /** Result out of range: an address range outside a region, or one that wraps. */
    ERANGE(34),
    /** Timer expired: a wait ran out of time. */
    ETIME(62),
    /** Value too large: a buffer too small for the result. */
    EOVERFLOW(75),
    /** No buffer space: no outbound RDMA read or atomic is allowed on this queue pair. */
    ENOBUFS(105),
    /** Address already in use: another socket is bound to the UDP address and port a NIC was opened on. */
    EADDRINUSE(98),
    /** Connection reset by peer: the requester gave up the connection being accepted. */
    ECONNRESET(104),
    /** Not connected: the queue pair state does not allow posting. */
    ENOTCONN(107),
    /** Connection timed out. */
    ETIMEDOUT(110),
    /** Connection refused: the peer rejected the connection or nobody listens. */
    ECONNREFUSED(111),
    /** Disk quota exceeded: the registered-memory quota would be exceeded. */
    EDQUOT(122);

    private final int value;

    Errno(final int value) {
        this.value = value;
    }

    /**
     * The Linux numeric value.
     *
     * @return the value as in {@code errno.h}
     */
    public int value() {
        return value;
    }
}
