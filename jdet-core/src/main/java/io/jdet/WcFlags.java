package io.jdet;

/** Work completion flags: bit masks with DET's values ({@code enum det_wc_flags}) plus one ibverbs extension. */
public final class WcFlags {
    /** The message was sent solicited. */
    public static final int SOLICITED = 0x02;
    /** {@link WorkCompletion#immediate()} holds the sender's immediate value. */
    public static final int IMMEDIATE = 0x10;
    /** The sender invalidated a remote key here: {@link WorkCompletion#invalidatedRKey()} holds it. */
    public static final int INVALIDATED = 0x40;

    private WcFlags() {
    }
}
