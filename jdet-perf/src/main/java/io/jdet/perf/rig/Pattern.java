package io.jdet.perf.rig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The bytes a verifying run sends: message {@code seq} is the window of a fixed pseudo-random byte string that
 * starts at {@code seq mod 256}, so that a message's bytes differ from its neighbours', from every other offset of
 * itself, and from the previous message. Filling and checking copy or compare memory and allocate nothing.
 */
public final class Pattern {
    /** How many distinct messages the pattern has. */
    public static final int PERIOD = 256;

    private final MemorySegment bytes;

    /**
     * Creates the pattern for messages up to {@code maxSize} bytes.
     *
     * @param arena   where its bytes live
     * @param maxSize the largest message
     */
    public Pattern(final Arena arena, final int maxSize) {
        bytes = arena.allocate((long) maxSize + PERIOD, 8);
        for (long k = 0; k < bytes.byteSize(); k++) {
            bytes.set(ValueLayout.JAVA_BYTE, k, (byte) ((k * 2_654_435_761L) >>> 13));
        }
    }

    /**
     * Writes message {@code seq}.
     *
     * @param dst    where
     * @param offset at which offset of {@code dst}
     * @param length the message size
     * @param seq    the message's number
     */
    public void fill(final MemorySegment dst, final long offset, final int length, final long seq) {
        MemorySegment.copy(bytes, seq & (PERIOD - 1), dst, offset, length);
    }

    /**
     * Checks that bytes hold message {@code seq}.
     *
     * @param src    what to check
     * @param offset at which offset of {@code src}
     * @param length how many bytes (a message, or its start)
     * @param seq    the message's number
     * @return true if every byte matches
     */
    public boolean matches(final MemorySegment src, final long offset, final int length, final long seq) {
        final long start = seq & (PERIOD - 1);
        return MemorySegment.mismatch(bytes, start, start + length, src, offset, offset + length) == -1;
    }

    /**
     * Checks a piece of message {@code seq}: bytes {@code [from, from + length)} of it.
     *
     * @param src    what to check
     * @param offset at which offset of {@code src} the piece starts
     * @param from   where in the message the piece starts
     * @param length the piece's length
     * @param seq    the message's number
     * @return true if every byte matches
     */
    public boolean matchesPiece(final MemorySegment src, final long offset, final long from, final long length,
                                final long seq) {
        final long start = (seq & (PERIOD - 1)) + from;
        return MemorySegment.mismatch(bytes, start, start + length, src, offset, offset + length) == -1;
    }

    /**
     * The last-byte marker of message {@code seq} for receivers that poll a buffer's last byte: never 0 (a fresh
     * buffer) and never equal to the marker of {@code seq - 1}.
     *
     * @param seq the message's number
     * @return the marker
     */
    public static byte marker(final long seq) {
        return (byte) (1 + Long.remainderUnsigned(seq, 255));
    }
}
