package io.jdet.internal.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The frame checksum: CRC32C (the JDK's, hardware accelerated) over the whole frame with its CRC field taken as
 * zero. One instance per thread that uses it; allocation free.
 */
public final class FrameCrc {
    /** Offset of the 32-bit little-endian CRC field in every frame. */
    public static final int CRC_OFFSET = 36;

    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(
        java.nio.ByteOrder.LITTLE_ENDIAN);

    private final CRC32C crc = new CRC32C();

    /**
     * Computes the CRC of a header (whose CRC field is 0) and its payload pieces, and stores it in the header.
     *
     * @param header       the header memory
     * @param headerView   a byte buffer over the header memory
     * @param headerLength the header length
     * @param payload      the payload pieces
     */
    public void seal(final MemorySegment header, final ByteBuffer headerView, final int headerLength,
                     final FrameGather payload) {
        header.set(LE_INT, CRC_OFFSET, 0);
        crc.reset();
        update(headerView, 0, headerLength);
        for (int i = 0; i < payload.count(); i++) {
            update(payload.view(i), payload.offset(i), payload.length(i));
        }
        header.set(LE_INT, CRC_OFFSET, (int) crc.getValue());
    }

    /**
     * Whether a received frame's CRC field is 0, which a sender writes over the host's loopback interface instead of
     * computing a CRC (docs/PROTOCOL.md, section 4). Only the link, knowing where the frame came from, may take it
     * unchecked; elsewhere 0 is a CRC like any other. Raises nothing.
     *
     * @param frame  the frame memory
     * @param length the frame length
     * @return true if the frame is long enough to hold the field and the field is 0
     */
    public static boolean leftOut(final MemorySegment frame, final int length) {
        return length >= CRC_OFFSET + 4 && frame.get(LE_INT, CRC_OFFSET) == 0;
    }

    /**
     * Checks a contiguous frame. The CRC field is zeroed on the way.
     *
     * @param frame  the frame memory
     * @param view   a byte buffer over the frame memory
     * @param length the frame length
     * @return true if the CRC is right
     */
    public boolean verify(final MemorySegment frame, final ByteBuffer view, final int length) {
        if (length < CRC_OFFSET + 4) {
            return false;
        }
        final int expected = begin(frame);
        update(view, 0, length);
        return (int) crc.getValue() == expected;
    }

    /**
     * Checks a frame received in three pieces: the header, the payload's first bytes received straight into their
     * target, the rest of the payload after the header. The CRC field is zeroed on the way.
     *
     * @param frame        the header, then the payload's last {@code tailLength} bytes
     * @param view         a byte buffer over {@code frame}
     * @param headerLength the header length
     * @param placed       the piece received into its target
     * @param tailLength   bytes of payload after the placed piece
     * @return true if the CRC is right
     */
    public boolean verify(final MemorySegment frame, final ByteBuffer view, final int headerLength,
                          final FrameGather placed, final int tailLength) {
        if (headerLength < CRC_OFFSET + 4) {
            return false;
        }
        final int expected = begin(frame);
        update(view, 0, headerLength);
        for (int i = 0; i < placed.count(); i++) {
            update(placed.view(i), placed.offset(i), placed.length(i));
        }
        update(view, headerLength, tailLength);
        return (int) crc.getValue() == expected;
    }

    /** Takes a received frame's CRC out (zeroing the field, as when it was computed) and starts a new sum. */
    private int begin(final MemorySegment frame) {
        final int expected = frame.get(LE_INT, CRC_OFFSET);
        frame.set(LE_INT, CRC_OFFSET, 0);
        crc.reset();
        return expected;
    }

    private void update(final ByteBuffer view, final long offset, final int length) {
        final int start = (int) offset;
        view.limit(start + length).position(start);
        crc.update(view);
    }
}
