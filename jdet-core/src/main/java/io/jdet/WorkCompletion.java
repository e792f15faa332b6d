package io.jdet;

/**
 * One work completion ({@code struct det_wc}), filled in by {@link CompletionQueue#poll(WorkCompletion[])}.
 *
 * <p>Mutable and reusable: keep an array of them and poll into it again and again; polling allocates nothing.
 * On an unsuccessful completion only {@link #id()}, {@link #status()}, {@link #type()} and {@link #queuePair()}
 * are meaningful.
 */
public final class WorkCompletion {
    private long id;
    private WcStatus status = WcStatus.SUCCESS;
    private WcType type = WcType.SEND;
    private int flags;
    private int length;
    private int immediate;
    private int invalidatedRKey;
    private int reapCount;
    private QueuePair queuePair;

    /** Creates an empty completion, to be filled by polling. */
    public WorkCompletion() {
    }

    /**
     * Overwrites every field. The completion queue calls this while polling; applications have no need to.
     *
     * @param id              the work request id
     * @param status          the outcome
     * @param type            the kind of work
     * @param flags           {@link WcFlags} bits
     * @param length          the byte count (see {@link #length()})
     * @param immediate       the immediate value, valid with {@link WcFlags#IMMEDIATE}
     * @param invalidatedRKey the invalidated remote key, valid with {@link WcFlags#INVALIDATED}
     * @param reapCount       how many work queue slots this completion freed
     * @param queuePair       the queue pair the work request was posted to
     * @return this completion
     */
    public WorkCompletion set(final long id, final WcStatus status, final WcType type, final int flags,
                              final int length, final int immediate, final int invalidatedRKey, final int reapCount,
                              final QueuePair queuePair) {
        this.id = id;
        this.status = status;
        this.type = type;
        this.flags = flags;
        this.length = length;
        this.immediate = immediate;
        this.invalidatedRKey = invalidatedRKey;
        this.reapCount = reapCount;
        this.queuePair = queuePair;
        return this;
    }

    /**
     * The work request id given when it was posted.
     *
     * @return the id
     */
    public long id() {
        return id;
    }

    /**
     * The outcome.
     *
     * @return the status
     */
    public WcStatus status() {
        return status;
    }

    /**
     * The kind of work.
     *
     * @return the type
     */
    public WcType type() {
        return type;
    }

    /**
     * {@link WcFlags} bits.
     *
     * @return the flags
     */
    public int flags() {
        return flags;
    }

    /**
     * The byte count: the message length for a receive (the bytes written for an RDMA write with immediate), the
     * bytes read for a read, 8 for an atomic, and 0 for a send, a write and a bind, as in DET.
     *
     * @return the length in bytes
     */
    public int length() {
        return length;
    }

    /**
     * The immediate value, meaningful when {@link #flags()} has {@link WcFlags#IMMEDIATE}.
     *
     * @return the value
     */
    public int immediate() {
        return immediate;
    }

    /**
     * The remote key the sender invalidated, meaningful when {@link #flags()} has {@link WcFlags#INVALIDATED}.
     *
     * @return the key
     */
    public int invalidatedRKey() {
        return invalidatedRKey;
    }

    /**
     * How many work queue slots polling this completion freed: itself plus the suppressed requests before it.
     *
     * @return the count
     */
    public int reapCount() {
        return reapCount;
    }

    /**
     * The queue pair the work request belonged to; null for a collective's completion ({@link Collective}).
     *
     * @return the queue pair, or null
     */
    public QueuePair queuePair() {
        return queuePair;
    }

    @Override
    public String toString() {
        return "WorkCompletion[id=" + id + ", status=" + status + ", type=" + type + ", flags=0x"
            + Integer.toHexString(flags) + ", length=" + length + ", immediate=" + immediate + "]";
    }
}
