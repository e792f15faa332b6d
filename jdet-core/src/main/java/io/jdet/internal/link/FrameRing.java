package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A bounded ring of frame slots with many producers and one consumer (Vyukov's sequence-per-slot design): the
 * inbound queue of one in-process NIC. Producers claim a slot with a CAS on the tail, copy the frame in and
 * publish it with a release store of the slot's sequence; the consumer reads with an acquire load. Allocation
 * free.
 *
 * <p>A claimed slot is always published: if copying the frame in fails (the sender's memory was closed under it),
 * the slot is published as aborted, and the consumer counts and skips it, so one failed sender cannot stall the
 * ring for every other peer.
 *
 * <p>Two threads may wait for frames at once ({@link #await}): the NIC's progress thread and an application thread
 * waiting for an event ({@link Link#PROGRESS}, {@link Link#APPLICATION}); a producer unparks both after it
 * publishes. A {@link #wakeup(int)} is remembered until that waiter's next await, as an eventfd remembers it.
 *
 * <p>Lent payloads: a frame whose payload is one piece of lent registered memory ({@link FrameGather#lendable()})
 * of at least {@link #LEND_MIN} bytes is published with its header copied and only a reference to the payload, so
 * that a consumer that {@linkplain FrameHandler#takesPayloadApart() takes payloads apart} copies each byte once,
 * from the sender's memory straight into the target. Each such slot has a state: {@link #LENT} from publication,
 * {@link #CONSUMING} while the consumer hands it over, {@link #SETTLING} while {@link #settle} copies the payload
 * into the slot after all (the sender needs its memory back), and {@link #PLAIN} otherwise; a CAS from
 * {@code LENT} decides which of the two reads the sender's memory, and the other waits for {@code PLAIN}.
 *
 * <p>Batches: a sender may publish several small frames in one slot ({@link #offerBatch}), so that a burst pays
 * for one claim, one publication and one wake-up rather than one per frame, and the consumer reads the frames
 * from consecutive memory; the slot's metadata says where its records end.
 */
final class FrameRing implements AutoCloseable {
    private static final VarHandle HEAD;

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(ConsumerSide.class, "head", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Each slot's own metadata lies in the first bytes of its memory, before the frame, rather than in arrays of
     * their own: a frame then crosses from the producer's core to the consumer's in the cache lines of the slot
     * itself (the metadata, the header and a small payload share them), not in one more line per array. Length of
     * the (first) frame ({@link #ABORTED_LENGTH} when the copy failed), whether it is sealed, the sender, and the
     * end of a batch's records (0 for a slot of one frame).
     */
    private static final int META = 16;
    private static final int META_LENGTH = 0;
    private static final int META_SEALED = 4;
    private static final int META_PEER = 8;
    private static final int META_END = 12;
    /** Slots start on cache-line boundaries, so that a slot's metadata and the start of its frame share one. */
    private static final int SLOT_ALIGN = 64;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;

    /**
     * What only the consumer writes, apart from the ring's own fields that every producer reads: a consumer's write
     * per frame to the ring object made each producer's next offer miss on its final fields (false sharing). The
     * padding keeps the two off one cache line whichever way the allocator places them.
     */
    @SuppressWarnings("unused")
    private static final class ConsumerSide {
        private long p1, p2, p3, p4, p5, p6, p7;
        /**
         * Consumer index; only the consumer (holder of the NIC lock) writes it, with release stores, so that a
         * waiter (no lock) reads a recent one with {@link #HEAD}'s acquire load.
         */
        long head;
        /** The thread inside {@link #drain}, read only by that thread itself (in {@link #consuming()}); plain. */
        Thread consumer;
        private long q1, q2, q3, q4, q5, q6, q7;
    }

    /** Index in {@link #drain}'s drop counts of frames whose CRC was wrong. */
    static final int BAD_CRC = 0;
    /** Index in {@link #drain}'s drop counts of slots whose copy failed. */
    static final int ABORTED = 1;
    /** The length a slot is published with when its copy failed. */
    private static final int ABORTED_LENGTH = -1;
    /** The smallest payload lent rather than copied: below it the copy costs less than the bookkeeping. */
    static final int LEND_MIN = 2048;
    /** Slot state: the payload, if any, lies in the slot. */
    private static final int PLAIN = 0;
    /** Slot state: the payload lies in the sender's memory, untouched so far. */
    private static final int LENT = 1;
    /** Slot state: the consumer is handing the lent payload over (reading the sender's memory). */
    private static final int CONSUMING = 2;
    /** Slot state: a settle is copying the lent payload into the slot. */
    private static final int SETTLING = 3;
    /** How long a settle from inside a handler waits for another thread copying a lent payload out of a slot. */
    static final long BOUNDED_SETTLE_NS = 200_000;

    private final int mask;
    private final int slotSize;
    /** The whole ring: slot i's metadata at {@code i * stride}, its frame {@link #META} bytes later. */
    private final MemorySegment ring;
    private final long stride;
    /** Per slot, its frame's memory (after the metadata), as a segment and as a buffer (for the CRC). */
    private final MemorySegment[] slots;
    private final ByteBuffer[] views;
    /** Per slot: the lent payload's memory, or null; with its offset and the header length before it. */
    private final MemorySegment[] lent;
    private final long[] lentOffsets;
    private final int[] headerLengths;
    /** Where the consumer copies a batch's second and later frames, so that each is handed over from offset 0. */
    private final MemorySegment scratch;
    private final ByteBuffer scratchView;
    /** Per slot: {@link #PLAIN}, {@link #LENT}, {@link #CONSUMING} or {@link #SETTLING}. */
    private final AtomicIntegerArray state;
    /** Slot i is free for producer index t when sequence == t, full for consumer index h when sequence == h+1. */
    private final AtomicLongArray sequence;
    private final AtomicLong tail = new AtomicLong();
    private final ConsumerSide side = new ConsumerSide();
    /** Per waiter, the thread parked in {@link #await}, or null; producers unpark them after publishing. */
    private final AtomicReferenceArray<Thread> waiters = new AtomicReferenceArray<>(2);
    /** Per waiter, 1 if {@link #wakeup(int)} was called since its last {@link #await}. */
    private final AtomicIntegerArray woken = new AtomicIntegerArray(2);

    /**
     * Creates a ring in one direct buffer.
     *
     * @param capacity the number of slots, a power of two
     * @param slotSize the bytes of one slot
     * @throws IllegalArgumentException if the capacity is no power of two, or the ring exceeds one buffer (2 GiB)
     */
    FrameRing(final int capacity, final int slotSize) {
        if (capacity < 2 || Integer.bitCount(capacity) != 1 || slotSize <= 0) {
            throw new IllegalArgumentException("a ring of " + capacity + " slots of " + slotSize
                + " bytes: the slot count must be a power of two");
        }
        final long stride = stride(capacity, slotSize);
        if ((long) capacity * stride + SLOT_ALIGN > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a ring of " + capacity + " slots of " + slotSize + " bytes exceeds "
                + Integer.MAX_VALUE + " bytes");
        }
        this.mask = capacity - 1;
        this.slotSize = slotSize;
        this.stride = stride;
        this.slots = new MemorySegment[capacity];
        this.views = new ByteBuffer[capacity];
        this.lent = new MemorySegment[capacity];
        this.lentOffsets = new long[capacity];
        this.headerLengths = new int[capacity];
        this.state = new AtomicIntegerArray(capacity);
        this.sequence = new AtomicLongArray(capacity);
        // Direct buffers rather than an arena: their memory has no session, so neither the producers' copies
        // nor the consumer's CRC pay a shared-session acquire (a contended CAS) per frame. The GC frees them.
        final ByteBuffer raw = ByteBuffer.allocateDirect((int) (capacity * stride) + SLOT_ALIGN);
        final ByteBuffer all = raw.alignedSlice(SLOT_ALIGN);
        this.ring = MemorySegment.ofBuffer(all);
        for (int i = 0; i < capacity; i++) {
            views[i] = all.slice((int) (i * stride) + META, slotSize);
            slots[i] = MemorySegment.ofBuffer(views[i]);
            sequence.set(i, i);
        }
        this.scratchView = ByteBuffer.allocateDirect(slotSize);
        this.scratch = MemorySegment.ofBuffer(scratchView);
    }

    /**
     * The bytes from one slot's start to the next: its metadata and frame, rounded to a cache line, or only to 8
     * bytes where the rounding would take the largest rings the configuration allows ({@code loopRingFrames}
     * 32768 of {@code loopMtu} 65507) past one buffer's 2 GiB. Raises nothing.
     *
     * @param capacity the number of slots
     * @param slotSize the largest frame
     * @return the stride
     */
    static long stride(final int capacity, final int slotSize) {
        final long lines = ((long) META + slotSize + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
        if ((long) capacity * lines + SLOT_ALIGN <= Integer.MAX_VALUE) {
            return lines;
        }
        return ((long) META + slotSize + 7) / 8 * 8;
    }

    /**
     * Copies a frame into the ring.
     *
     * @return false if the ring is full
     * @throws IllegalArgumentException if the frame exceeds a slot
     * @throws RuntimeException         what copying from the frame's memory threw (a closed or foreign-thread
     *                                  segment); the slot it had claimed is published as aborted
     */
    boolean offer(final int peer, final MemorySegment header, final int headerLength, final FrameGather payload) {
        return offer(peer, true, header, headerLength, payload);
    }

    /**
     * Copies a frame into the ring, saying whether it carries a CRC to check.
     *
     * @param crc whether the sender sealed the frame (the receiver checks only then)
     * @return false if the ring is full
     * @throws IllegalArgumentException if the frame exceeds a slot
     * @throws RuntimeException         what copying from the frame's memory threw; the slot is published as aborted
     */
    boolean offer(final int peer, final boolean crc, final MemorySegment header, final int headerLength,
                  final FrameGather payload) {
        final int length = headerLength + payload.totalLength();
        if (length > slotSize) {
            throw new IllegalArgumentException("frame of " + length + " bytes exceeds the slot size " + slotSize);
        }
        final long t = claim();
        if (t < 0) {
            return false;
        }
        final int i = (int) (t & mask);
        final MemorySegment slot = slots[i];
        // A sealed frame's CRC covers its payload, which the consumer checks in the slot: only plain frames lend.
        final boolean lend = lends(crc, payload);
        int published = ABORTED_LENGTH;
        try {
            MemorySegment.copy(header, 0, slot, 0, headerLength);
            if (lend) {
                final MemorySegment memory = payload.segment(0);
                if (!memory.scope().isAlive()) {
                    throw new IllegalStateException("the payload's arena is closed");
                }
                lent[i] = memory;
                lentOffsets[i] = payload.offset(0);
                headerLengths[i] = headerLength;
            } else {
                payload.copyTo(slot, headerLength);
            }
            published = length;
        } finally {
            final long meta = i * stride;
            ring.set(INT, meta + META_LENGTH, published);
            ring.set(ValueLayout.JAVA_BYTE, meta + META_SEALED, crc ? (byte) 1 : 0);
            ring.set(INT, meta + META_PEER, peer);
            ring.set(INT, meta + META_END, 0);
            if (published != ABORTED_LENGTH && lend) {
                state.set(i, LENT); // volatile: a settle that sees LENT sees the reference and the peer
            } else if (lent[i] != null) { // null already but after a failed lend: no write, so no line taken
                lent[i] = null;
            }
            // volatile, not only a release: publishes the slot contents (or its abort) to the consumer, and orders the
            // publication before the read of the waiters below (a waiter registers, then looks at the ring)
            sequence.set(i, t + 1);
        }
        unparkWaiters();
        return true;
    }

    /**
     * Publishes a batch: frames of one sender for this ring's NIC, laid out as {@link FabricLink} stages them, the
     * first frame from offset 0, then each further one as a record: its length in {@link Staging#RECORD_PREFIX} bytes,
     * then its bytes, every record starting on a multiple of {@link Staging#RECORD_PREFIX}. One slot, one copy and one
     * publication for them all; {@link #drain} hands them over one by one, in order. A batch never lends.
     *
     * @param peer        the sender
     * @param crc         whether the sender sealed the frames (the consumer checks each one's CRC)
     * @param records     the frames, laid out as above
     * @param firstLength the first frame's length
     * @param end         where the last record ends
     * @return false if the ring is full
     * @throws IllegalArgumentException if the records exceed a slot or the first frame lies outside them
     */
    boolean offerBatch(final int peer, final boolean crc, final MemorySegment records, final int firstLength,
                       final int end) {
        if (end > slotSize || firstLength < 1 || firstLength > end) {
            throw new IllegalArgumentException("a batch of " + end + " bytes whose first frame has " + firstLength
                + " bytes, in slots of " + slotSize);
        }
        final long t = claim();
        if (t < 0) {
            return false;
        }
        final int i = (int) (t & mask);
        MemorySegment.copy(records, 0, slots[i], 0, end); // the link's own staging: cannot fail
        final long meta = i * stride;
        ring.set(INT, meta + META_LENGTH, firstLength);
        ring.set(ValueLayout.JAVA_BYTE, meta + META_SEALED, crc ? (byte) 1 : 0);
        ring.set(INT, meta + META_PEER, peer);
        ring.set(INT, meta + META_END, end > firstLength ? end : 0);
        if (lent[i] != null) {
            lent[i] = null;
        }
        sequence.set(i, t + 1); // volatile, as in offer
        unparkWaiters();
        return true;
    }

    /** Claims the next slot for a producer: its producer index, or -1 if the ring is full. */
    private long claim() {
        while (true) {
            final long t = tail.get();
            final long s = sequence.get((int) (t & mask)); // acquire: pairs with the consumer's release of this slot
            if (s == t) {
                if (tail.compareAndSet(t, t + 1)) {
                    return t;
                }
            } else if (s < t) {
                return -1;
            }
        }
    }

    /**
     * Whether {@link #offer} publishes this payload as a reference rather than a copy: one piece of lent memory, at
     * least {@link #LEND_MIN} bytes, in a frame without a CRC. Raises nothing.
     *
     * @param crc     whether the sender seals the frame
     * @param payload the payload pieces
     * @return true if the payload would be lent
     */
    static boolean lends(final boolean crc, final FrameGather payload) {
        return !crc && payload.count() == 1 && payload.totalLength() >= LEND_MIN && payload.lendable();
    }

    /**
     * Hands the frames of up to max slots to the handler (every frame of a batch, {@link #offerBatch}); verifies the
     * CRC of each frame its sender sealed first.
     *
     * @param drops where to count what is not handed over, at {@link #BAD_CRC} and {@link #ABORTED}
     * @return the slots consumed, frames handed over or not
     */
    int drain(final FrameHandler handler, final int max, final FrameCrc crc, final long[] drops) {
        int n = 0;
        final ConsumerSide c = side;
        while (n < max) {
            final long head = c.head;
            final int i = (int) (head & mask);
            if (sequence.get(i) != head + 1) { // acquire: pairs with the producer's release
                break;
            }
            c.consumer = Thread.currentThread();
            try {
                if (state.get(i) == PLAIN || !handLent(i, handler, drops)) { // volatile: sees a settle's copy
                    final long meta = i * stride;
                    final int length = ring.get(INT, meta + META_LENGTH);
                    if (length == ABORTED_LENGTH) {
                        drops[ABORTED]++;
                    } else if (ring.get(ValueLayout.JAVA_BYTE, meta + META_SEALED) == 0
                        || crc.verify(slots[i], views[i], length)) {
                        handler.onFrame(slots[i], length, ring.get(INT, meta + META_PEER));
                    } else {
                        drops[BAD_CRC]++;
                    }
                    final int end = ring.get(INT, meta + META_END);
                    if (end > 0) {
                        drainRecords(i, length, end, handler, crc, drops);
                    }
                }
            } finally {
                c.consumer = null;
                sequence.lazySet(i, head + mask + 1); // release: the slot may be reused by producers
                HEAD.setRelease(c, head + 1);
            }
            n++;
        }
        return n;
    }

    /**
     * Hands over a batch's frames after its first: each copied to {@link #scratch} first, so that it starts at
     * offset 0, and checked there if sealed. The lengths are the sending link's own (not read from a frame), so a
     * frame with a wrong CRC is dropped alone.
     */
    private void drainRecords(final int i, final int firstLength, final int end, final FrameHandler handler,
                              final FrameCrc crc, final long[] drops) {
        final MemorySegment slot = slots[i];
        final long meta = i * stride;
        final boolean sealed = ring.get(ValueLayout.JAVA_BYTE, meta + META_SEALED) != 0;
        final int peer = ring.get(INT, meta + META_PEER);
        int at = Staging.recordAlign(firstLength);
        while (end - at >= Staging.RECORD_PREFIX) {
            final int length = slot.get(ValueLayout.JAVA_INT_UNALIGNED, at);
            at += Staging.RECORD_PREFIX;
            if (length < 1 || length > end - at) {
                drops[ABORTED]++; // only a broken sender writes this: the rest of the slot cannot be delimited
                return;
            }
            MemorySegment.copy(slot, at, scratch, 0, length);
            if (!sealed || crc.verify(scratch, scratchView, length)) {
                handler.onFrame(scratch, length, peer);
            } else {
                drops[BAD_CRC]++;
            }
            at = Staging.recordAlign(at + length);
        }
    }

    /**
     * Hands over a slot published with a lent payload: apart, straight from the sender's memory, if the handler
     * takes it so and no settle got there first; otherwise settles it into the slot first.
     *
     * @return true if the slot was dealt with; false if it is now plain (or aborted) and the caller hands it over
     */
    private boolean handLent(final int i, final FrameHandler handler, final long[] drops) {
        if (!handler.takesPayloadApart() || !state.compareAndSet(i, LENT, CONSUMING)) {
            settleSlot(i, Long.MAX_VALUE);
            return false;
        }
        try {
            final MemorySegment memory = lent[i];
            if (memory.scope().isAlive()) {
                final long meta = i * stride;
                handler.onFrame(slots[i], ring.get(INT, meta + META_LENGTH), ring.get(INT, meta + META_PEER),
                    memory, lentOffsets[i]);
            } else {
                drops[ABORTED]++; // the application closed the arena: the frame is lost, as a failed copy would be
            }
        } finally {
            lent[i] = null;
            state.set(i, PLAIN); // volatile: a settle waiting on this slot may go on
        }
        return true;
    }

    /**
     * Copies the lent payload of slot {@code i} into the slot, unless the consumer or another settle has it.
     *
     * @param waitNs how long to wait until whoever has it is done (the slot is {@link #PLAIN} again): 0 not at all,
     *               {@code Long.MAX_VALUE} for as long as it takes
     */
    private void settleSlot(final int i, final long waitNs) {
        if (state.compareAndSet(i, LENT, SETTLING)) {
            final int h = headerLengths[i];
            try {
                MemorySegment.copy(lent[i], lentOffsets[i], slots[i], h, ring.get(INT, i * stride + META_LENGTH) - h);
            } catch (final IllegalStateException | WrongThreadException sourceUnusable) {
                // the arena was closed under it: lost, as a failed copy at offer
                ring.set(INT, i * stride + META_LENGTH, ABORTED_LENGTH);
            } finally {
                lent[i] = null;
                state.set(i, PLAIN); // volatile: publishes the copy (or the abort) to the consumer
            }
            return;
        }
        if (waitNs <= 0) {
            return;
        }
        final long start = System.nanoTime();
        while (state.get(i) != PLAIN) { // another thread is copying one frame out of it: microseconds
            if (waitNs != Long.MAX_VALUE && System.nanoTime() - start > waitNs) {
                return;
            }
            Thread.onSpinWait();
        }
    }

    /**
     * Makes every frame a sender published with a lent payload independent of the sender's memory: copies each
     * one's payload into its slot, unless the consumer is handing it over at the moment (then, when {@code wait}
     * is true, waits until it is done). Safe from any thread, concurrently with producers and the consumer.
     *
     * @param peer the sender, as the frames carry it
     * @param wait false when called by the consumer of some ring from inside its handler: waiting there for as
     *             long as it takes could deadlock with another consumer doing the same, so it waits for another
     *             thread's copy at most {@link #BOUNDED_SETTLE_NS} (the copy takes microseconds; only that mutual
     *             wait runs out, and only then may the flushed memory be reused while the peer still reads it)
     */
    void settle(final int peer, final boolean wait) {
        final Thread me = Thread.currentThread();
        for (int i = 0; i < slots.length; i++) {
            final int s = state.get(i); // volatile: pairs with the producer's LENT, so the peer is that frame's
            if (s != PLAIN && ring.get(INT, i * stride + META_PEER) == peer) {
                // The consumer of this very ring is this thread, inside a handler: the slot it holds is its own.
                settleSlot(i, side.consumer == me ? 0 : wait ? Long.MAX_VALUE : BOUNDED_SETTLE_NS);
            }
        }
    }


    /**
     * Whether the calling thread is inside {@link #drain} of this ring, that is, inside a frame handler.
     *
     * @return true if so
     */
    boolean consuming() {
        return side.consumer == Thread.currentThread();
    }

    /** @return whether no published frame waits at the head (any thread) */
    boolean isEmpty() {
        final long h = (long) HEAD.getAcquire(side);
        return sequence.get((int) (h & mask)) != h + 1;
    }

    /**
     * Parks a waiter until a frame is published, it is woken, or the time runs out; returns at once if a frame waits
     * or it was woken since its last await.
     *
     * @param waiter    {@link Link#PROGRESS} or {@link Link#APPLICATION}, each one thread at a time
     * @param timeoutNs the longest wait
     */
    void await(final int waiter, final long timeoutNs) {
        waiters.set(waiter, Thread.currentThread()); // volatile: before the looks below, as producers publish first
        try {
            if (woken.getAndSet(waiter, 0) == 0 && isEmpty()) {
                LockSupport.parkNanos(this, timeoutNs);
            }
        } finally {
            waiters.set(waiter, null);
            woken.set(waiter, 0); // the caller looks at its condition now: what the wakeup announced is seen
        }
    }

    /**
     * Ends a waiter's {@link #await}, or makes its next one return at once. Any thread.
     *
     * @param waiter {@link Link#PROGRESS} or {@link Link#APPLICATION}
     */
    void wakeup(final int waiter) {
        woken.set(waiter, 1);
        final Thread w = waiters.get(waiter);
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    private void unparkWaiters() {
        for (int w = 0; w < 2; w++) {
            final Thread t = waiters.get(w);
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    @Override
    public void close() {
        waiters.set(Link.PROGRESS, null);
        waiters.set(Link.APPLICATION, null);
    }
}
