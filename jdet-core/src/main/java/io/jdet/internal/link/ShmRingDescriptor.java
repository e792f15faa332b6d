package io.jdet.internal.link;

/**
 * The layout of a shared-memory ring file ({@code <dir>/jdet-<uid>/<group>/<id>.ring}): a header, then
 * {@code slotCount} slots of {@code slotSize} bytes. All integers are in the host's byte order (the file never
 * leaves the host). Offsets are computed in order; hot words sit on cache-line pairs of their own, so producers
 * claiming slots, the owner draining them and a sleeping owner's futex never share a line.
 *
 * <pre>
 * header
 *   0  int  magic "JDSM" (0x4D53444A)
 *   4  int  version (1)
 *   8  int  slot count (a power of two)
 *  12  int  slot size in bytes (a multiple of 64)
 *  16  int  MTU: the largest frame a slot holds
 *  20  int  state: 0 initialising, 1 open, 2 closed by its owner
 *  24  long owner id (the NIC id in the address)
 *  32  long owner pid
 *  40  long owner start time (clock ticks since boot, /proc/&lt;pid&gt;/stat field 22)
 *  48  int  features the owner's build understands: bit 0 = accepts batch slots ({@link #FEATURE_BATCHES}); 0 in
 *           files of builds that predate it, whose owners get single frames only
 * 128  long tail: the next ticket producers claim (CAS)
 * 256  int  futex word: bumped before every wake
 * 260  int  waiters: how many owner threads sleep (or are about to) on the futex word
 * 384  slots
 *
 * slot (ticket t lives in slot t &amp; (count - 1))
 *   0  long sequence: t when free for ticket t, a claimed ticket still reads t, t + 1 when published
 *   8  int  frame length; in a batch slot, the bytes its frames and records use from offset 64
 *  12  int  flags: bit 0 = the frames carry a CRC to check, bit 1 = a batch slot ({@link #FLAG_BATCH})
 *  16  long sender id (its NIC id)
 *  24  int  claimant pid (0 once the owner consumed or skipped the slot)
 *  28  int  a batch slot's first frame length (unused otherwise)
 *  64  the frame: jdet header and payload, exactly as on any other link
 *
 * batch slot (only into rings whose owner set {@link #FEATURE_BATCHES})
 *  64  the first frame, its length at 28
 *  64 + r  records, r = the first frame's length rounded up to 4, each one on a 4-byte boundary: int length, then
 *          that many bytes of frame; the last one ends at the slot's length (offset 8)
 * </pre>
 */
final class ShmRingDescriptor {
    /** "JDSM" read as a little-endian int. */
    static final int MAGIC = 0x4D53444A;
    static final int VERSION = 1;
    static final int STATE_INITIALISING = 0;
    static final int STATE_OPEN = 1;
    static final int STATE_CLOSED = 2;
    /** Slot flag: the sender sealed the frame with a CRC (fault injection corrupts frames), check it. */
    static final int FLAG_CRC = 1;
    /**
     * Slot flag: the slot holds several frames of one sender ({@code ShmLink}'s batches): the first from the frame
     * start, its length at {@link #SLOT_FIRST_LENGTH_OFFSET}, then records of {@link Staging#RECORD_PREFIX} bytes of
     * length and the frame, each on a {@link Staging#RECORD_PREFIX}-byte boundary, up to the slot's length.
     */
    static final int FLAG_BATCH = 2;
    /** Feature bit: the ring's owner accepts {@link #FLAG_BATCH} slots; senders batch into no other ring. */
    static final int FEATURE_BATCHES = 1;

    static final int CACHE_LINE_PAIR = 128;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = MAGIC_OFFSET + Integer.BYTES;
    static final int SLOT_COUNT_OFFSET = VERSION_OFFSET + Integer.BYTES;
    static final int SLOT_SIZE_OFFSET = SLOT_COUNT_OFFSET + Integer.BYTES;
    static final int MTU_OFFSET = SLOT_SIZE_OFFSET + Integer.BYTES;
    static final int STATE_OFFSET = MTU_OFFSET + Integer.BYTES;
    static final int OWNER_ID_OFFSET = STATE_OFFSET + Integer.BYTES;
    static final int OWNER_PID_OFFSET = OWNER_ID_OFFSET + Long.BYTES;
    static final int OWNER_START_OFFSET = OWNER_PID_OFFSET + Long.BYTES;
    /** Unused (zero) before builds that write it; the version stays 1, since older builds may ignore it. */
    static final int FEATURES_OFFSET = OWNER_START_OFFSET + Long.BYTES;
    static final int TAIL_OFFSET = CACHE_LINE_PAIR;
    static final int FUTEX_OFFSET = TAIL_OFFSET + CACHE_LINE_PAIR;
    static final int WAITERS_OFFSET = FUTEX_OFFSET + Integer.BYTES;
    static final int HEADER_LENGTH = FUTEX_OFFSET + CACHE_LINE_PAIR;

    static final int SLOT_SEQUENCE_OFFSET = 0;
    static final int SLOT_LENGTH_OFFSET = SLOT_SEQUENCE_OFFSET + Long.BYTES;
    static final int SLOT_FLAGS_OFFSET = SLOT_LENGTH_OFFSET + Integer.BYTES;
    static final int SLOT_SENDER_OFFSET = SLOT_FLAGS_OFFSET + Integer.BYTES;
    static final int SLOT_CLAIMANT_OFFSET = SLOT_SENDER_OFFSET + Long.BYTES;
    static final int SLOT_FIRST_LENGTH_OFFSET = SLOT_CLAIMANT_OFFSET + Integer.BYTES;
    /** The frame starts on a cache line of its own, so the copies in and out run aligned. */
    static final int SLOT_FRAME_OFFSET = 64;

    static {
        if (FEATURES_OFFSET + Integer.BYTES > TAIL_OFFSET || WAITERS_OFFSET + Integer.BYTES > HEADER_LENGTH
            || SLOT_FIRST_LENGTH_OFFSET + Integer.BYTES > SLOT_FRAME_OFFSET) {
            throw new AssertionError("ring layout overlaps");
        }
    }

    private ShmRingDescriptor() {
    }

    /**
     * The slot size for an MTU.
     *
     * @param mtu the largest frame
     * @return the slot size, a multiple of 64
     */
    static int slotSize(final int mtu) {
        return (SLOT_FRAME_OFFSET + mtu + 63) & ~63;
    }

    /**
     * The file length of a ring.
     *
     * @param slotCount the slot count
     * @param slotSize  the slot size
     * @return the length in bytes
     */
    static long fileLength(final int slotCount, final int slotSize) {
        return HEADER_LENGTH + (long) slotCount * slotSize;
    }

    /**
     * The offset of the slot of a ticket.
     *
     * @param ticket   the ticket
     * @param mask     slot count - 1
     * @param slotSize the slot size
     * @return the slot's offset in the file
     */
    static long slotOffset(final long ticket, final int mask, final int slotSize) {
        return HEADER_LENGTH + (ticket & mask) * (long) slotSize;
    }
}
