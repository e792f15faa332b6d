package io.jdet;

/**
 * Access rights of memory regions and windows: bit masks with DET's values ({@code enum det_access_ctrl}),
 * extended with the ibverbs window features in bits DET reserves.
 *
 * <p>Rules: {@link #REMOTE_READ} needs {@link #LOCAL_READ}; {@link #REMOTE_WRITE} and {@link #REMOTE_ATOMIC} need
 * {@link #LOCAL_WRITE}. A region gets a remote key only when some remote right is granted.
 */
public final class Access {
    /** Local read: the region may be the source of a send, a write or a read response. DET value 0x01. */
    public static final int LOCAL_READ = 0x01;
    /** Remote read: a peer may RDMA-read the region. DET value 0x02. */
    public static final int REMOTE_READ = 0x02;
    /**
     * Remote atomic: a peer may run compare-and-swap or fetch-and-add on it (jdet extension, bit 2). DET has no
     * atomic right and allows atomics where both {@link #REMOTE_READ} and {@link #REMOTE_WRITE} are granted; jdet
     * keeps that rule for DET's programs, so a region or window granting both allows atomics with or without this
     * bit (one that must refuse atomics grants only one of the two).
     */
    public static final int REMOTE_ATOMIC = 0x04;
    /** Zero-based window: remote addresses are offsets from the window start (jdet extension, bit 3). */
    public static final int ZERO_BASED = 0x08;
    /** Local write: the region may receive data (receives, read results, atomic results). DET value 0x10. */
    public static final int LOCAL_WRITE = 0x10;
    /** Remote write: a peer may RDMA-write the region. DET value 0x20. */
    public static final int REMOTE_WRITE = 0x20;
    /** Memory windows may be bound to the region. DET value 0x80. */
    public static final int MW_BIND = 0x80;

    /** Every right a memory region may be registered with. */
    public static final int ALL_REGION = LOCAL_READ | REMOTE_READ | REMOTE_ATOMIC | LOCAL_WRITE | REMOTE_WRITE
        | MW_BIND;
    /** Every remote right. */
    public static final int ANY_REMOTE = REMOTE_READ | REMOTE_WRITE | REMOTE_ATOMIC;

    private Access() {
    }
}
