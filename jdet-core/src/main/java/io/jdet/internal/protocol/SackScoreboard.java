package io.jdet.internal.protocol;

import static io.jdet.internal.wire.Frame.after;

/**
 * The sending side of selective acknowledgement for one stream: which frames beyond the cumulative ack the peer
 * says it holds, and how far gaps have been repaired in the current recovery. Bit i of {@link #sacked} stands for
 * frame {@code lastAcked + 2 + i}. The owner resends each gap below {@link #top} once ({@link #repairFrom},
 * {@link #repaired}), skips held frames when it goes back, and forgets everything after a second timeout in a row,
 * so stale bits can cost at most one timeout. Engine lock held; allocation free.
 */
public final class SackScoreboard {
    private long sacked;
    private int retxHigh;
    private int timeoutsInRow;

    public void reset(final int lastAcked) {
        sacked = 0;
        retxHigh = lastAcked;
        timeoutsInRow = 0;
    }

    /**
     * Takes an acknowledgement, before the owner moves its cumulative ack.
     *
     * @param lastAcked   the owner's cumulative ack so far
     * @param ack         the acknowledgement's cumulative ack (not after highestSent)
     * @param bits        its selective-ack bits, relative to {@code ack}
     * @param highestSent the highest frame sent
     */
    public void onAck(final int lastAcked, final int ack, final int bits, final int highestSent) {
        final boolean advanced = after(ack, lastAcked);
        final int base = advanced ? ack : lastAcked;
        if (advanced) {
            final int shift = ack - lastAcked;
            sacked = shift >= 64 ? 0 : sacked >>> shift;
            timeoutsInRow = 0;
        }
        if (bits != 0 && base - ack < HeldFrames.RANGE) {
            sacked |= (bits & 0xFFFF_FFFFL) >>> (base - ack);
        }
        final int valid = highestSent - base - 1; // frames base+2 .. highestSent can be held
        if (valid < 64) {
            sacked &= valid <= 0 ? 0 : (1L << valid) - 1;
        }
    }

    public boolean any() {
        return sacked != 0;
    }

    public boolean isSacked(final int seq, final int lastAcked) {
        final int d = seq - lastAcked - 2;
        return d >= 0 && d < 64 && (sacked >>> d & 1) != 0;
    }

    /** @return the highest frame the peer holds (only when {@link #any()}) */
    public int top(final int lastAcked) {
        return lastAcked + 2 + 63 - Long.numberOfLeadingZeros(sacked);
    }

    /** @return the first frame not yet considered for repair in this recovery */
    public int repairFrom(final int lastAcked) {
        return after(retxHigh, lastAcked) ? retxHigh + 1 : lastAcked + 1;
    }

    public void repaired(final int seq) {
        retxHigh = seq;
    }

    /** Going back to {@code seq}: repair starts over from there. */
    public void goBack(final int seq) {
        retxHigh = seq - 1;
    }

    /** A retransmission timeout: the second in a row without progress forgets the bits. */
    public void onTimeout() {
        if (timeoutsInRow++ > 0) {
            sacked = 0;
        }
    }

    /** Forgets the bits (the peer may have dropped what it held). */
    public void forget() {
        sacked = 0;
    }
}
