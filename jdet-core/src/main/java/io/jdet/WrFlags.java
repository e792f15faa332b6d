package io.jdet;

/** Work request flags: bit masks with DET's values ({@code enum det_wr_flags}). */
public final class WrFlags {
    /** No completion on success (DET spells it {@code DET_WR_SURPRESSED}). Errors are always reported. */
    public static final int SUPPRESSED = 0x01;
    /** The receiver's completion is solicited: it wakes a CQ armed with {@link CqArm#NEXT_SOLICITED}. */
    public static final int SOLICITED = 0x02;
    /** Wait for every earlier RDMA read and atomic of this queue pair to complete before starting. */
    public static final int FENCED = 0x08;
    /** Carry the 32-bit immediate value to the receiver's completion. */
    public static final int IMMEDIATE = 0x10;
    /** Never give up on protocol retries. */
    public static final int NO_TIMEOUT = 0x20;
    /**
     * More posts follow at once (a jdet extension, as {@code MSG_MORE} is for a socket): the frames of this work
     * request may wait in the link so that the next posts' frames for the same peer share their datagrams, instead
     * of a system call and a datagram each. They leave with the next post on the NIC without this flag, the next
     * engine pass (a poll that finds its queue empty, the progress thread's turn within a timer period, {@code
     * Configuration.timerPeriodUs}), when the link's staging is full, or at once if the queue pair cannot send
     * another frame yet (its window, {@code max_or}, a fence or a receiver-not-ready hold stops it). Post a burst
     * with it on every work request but the last. The in-process fabric and shared memory hold small frames the
     * same way and carry them in one slot of the peer's ring (shared memory: when the peer's build accepts batch
     * slots); a link that carries one frame per unit (raw Ethernet) sends at once regardless.
     */
    public static final int MORE = 0x40;

    /** Every flag a data work request accepts. */
    public static final int ALL = SUPPRESSED | SOLICITED | FENCED | IMMEDIATE | NO_TIMEOUT | MORE;

    private WrFlags() {
    }
}
