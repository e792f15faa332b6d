package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * How the memory links (the in-process fabric, shared memory) batch small frames for one peer into one ring slot, and
 * the layout they share: the first frame from the slot's frame start, then each further one as a record, its length
 * in {@link #RECORD_PREFIX} bytes and its bytes, every record starting on a multiple of {@link #RECORD_PREFIX}.
 */
final class Staging {
    /** The bytes of a record's length prefix, and the alignment of every record. */
    static final int RECORD_PREFIX = 4;

    private Staging() {
    }

    /**
     * {@code at} rounded up to the next record boundary. Raises nothing.
     *
     * @param at an offset from the slot's frame start, at most a slot's size
     * @return the boundary
     */
    static int recordAlign(final int at) {
        return (at + RECORD_PREFIX - 1) & -RECORD_PREFIX;
    }

    /** Padding before {@link Fields}: a superclass's fields come first (the int fills the header's gap). */
    @SuppressWarnings("unused")
    abstract static class Padding {
        private int p0;
        private long p1, p2, p3, p4, p5, p6, p7, p8;
    }

    /** The batch state. */
    abstract static class Fields extends Padding {
        /** Staged frames, laid out as the rings take them. */
        final MemorySegment staging;
        /** The peer of the staged frames. */
        long peer;
        /** How many are staged, the first one's length, where the last record ends, and the slot's limit. */
        int frames;
        int first;
        int end;
        int limit;
        /** Batches open (cork depth): small frames are staged while it is positive. */
        int corked;
        /** A post flagged MORE left frames staged: a flush (the engine lock's release) leaves them there. */
        boolean holding;
        /** The last batch ended holding (a post flagged MORE): the next one's frames have company coming. */
        boolean companyExpected;
        /** A small frame went alone since the outermost cork. */
        boolean smallSent;
        /** Slots published with more than one frame, and the frames they carried, for the counters. */
        long batches;
        long batchedFrames;

        Fields(final MemorySegment staging) {
            this.staging = staging;
        }
    }

    /**
     * One link's batch: its state and the rules of {@link Link#cork}, {@link Link#uncork}, {@link Link#uncorkHolding}
     * and {@link Link#flush}. Written on every post, so it lives in an object of its own, padded on both sides, where
     * no field another thread reads shares its cache lines (peers read a fabric link's ring on every frame they send
     * it: a write into that line cost each ping-pong 0.1 µs). Only the engine lock's holder uses it.
     */
    @SuppressWarnings("unused")
    static final class Batch extends Fields {
        private long q1, q2, q3, q4, q5, q6, q7, q8;

        /**
         * A batch staging into its own memory.
         *
         * @param capacity the most bytes one slot's frames take (the link's MTU)
         */
        Batch(final int capacity) {
            super(MemorySegment.ofBuffer(ByteBuffer.allocateDirect(capacity)));
        }

        /** Opens a batch (they nest). */
        void cork() {
            if (corked++ == 0) {
                smallSent = false;
            }
        }

        /**
         * Closes a batch.
         *
         * @return true if this ended the outermost one with frames staged: the link publishes them now
         */
        boolean uncork() {
            if (corked > 0 && --corked == 0) {
                holding = false;
                companyExpected = false;
                return frames > 0;
            }
            return false;
        }

        /** Closes a batch whose frames may wait for the next post's (a post flagged MORE). */
        void uncorkHolding() {
            if (corked > 0 && --corked == 0) {
                holding = frames > 0;
                companyExpected = true;
            }
        }

        /** @return whether a flush (the engine lock's release) publishes what is staged */
        boolean flushes() {
            return corked == 0 && !holding && frames > 0;
        }

        /**
         * Whether a small frame is staged rather than sent at once: inside a batch, behind staged frames, after a post
         * flagged MORE, or after the batch's first small frame went alone (the caller records that with
         * {@link #sentAlone}).
         *
         * @return true to stage it
         */
        boolean stages() {
            return frames > 0 || companyExpected || smallSent;
        }

        /**
         * Records whether the batch's first small frame went alone.
         *
         * @param sent what the link's send answered
         * @return {@code sent}
         */
        boolean sentAlone(final boolean sent) {
            smallSent = sent;
            return sent;
        }

        /**
         * @param length a frame's length
         * @return whether the frames staged leave no room for it within {@link #limit}
         */
        boolean full(final int length) {
            return frames > 0 && recordAlign(end) + RECORD_PREFIX + length > limit;
        }

        /**
         * Appends a frame: its header, then its payload. The first one of a batch names the peer and the slot's limit.
         *
         * @throws RuntimeException what copying the payload threw (its memory closed); nothing is staged then
         */
        void append(final long to, final int slotLimit, final MemorySegment header, final int headerLength,
                    final FrameGather payload, final int length) {
            final int at = frames == 0 ? 0 : recordAlign(end) + RECORD_PREFIX;
            MemorySegment.copy(header, 0, staging, at, headerLength);
            payload.copyTo(staging, at + headerLength);
            if (frames == 0) {
                peer = to;
                limit = slotLimit;
                first = length;
            } else {
                staging.set(ValueLayout.JAVA_INT_UNALIGNED, at - RECORD_PREFIX, length);
            }
            frames++;
            end = at + length;
        }

        /** The staged frames were published (or lost): counts a batch of more than one, empties the staging. */
        void published() {
            if (frames > 1) {
                batches++;
                batchedFrames += frames;
            }
            clear();
        }

        /** Empties the staging. */
        void clear() {
            frames = 0;
            end = 0;
            holding = false;
        }
    }
}
