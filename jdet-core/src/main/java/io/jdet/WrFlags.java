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

    /** Every flag a data work request accepts. */
    public static final int ALL = SUPPRESSED | SOLICITED | FENCED | IMMEDIATE | NO_TIMEOUT;

    private WrFlags() {
    }
}
