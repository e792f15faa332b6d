package io.jdet.internal.link;

import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

import static io.jdet.internal.link.ShmRingDescriptor.*;

/**
 * One NIC's inbound frame ring in a memory-mapped file ({@link ShmRingDescriptor}), seen either by its owner, which
 * drains it, or by a peer, which sends into it. Many producers (any process), one consumer: Vyukov's bounded
 * queue with a sequence word per slot. A producer claims ticket {@code t} with a CAS on the tail once the slot's
 * sequence reads {@code t} (free), notes its pid in the slot, copies the frame in, and publishes it with a CAS of
 * the sequence from {@code t} to {@code t + 1} (a full fence, which also orders its look at the waiter count). The
 * owner reads the sequence with an acquire load, hands the frame to the engine, and frees the slot for the next lap
 * with a release store of {@code t + slotCount}. A full ring refuses the frame: back-pressure, never loss.
 *
 * <p>A producer that dies between its claim and its publication would stall the ring forever; the owner therefore
 * skips a slot claimed for longer than {@link #CLAIM_CHECK_NS} whose claimant pid no longer runs (or which names
 * no claimant after {@link #CLAIM_TIMEOUT_NS}: the producer died between the two stores). Skipping is a CAS of the
 * sequence too, so a producer that was only slow finds its publication refused and drops the frame.
 *
 * <p>Sleeping: the owner spins, then counts itself in the waiters word, checks the ring again and sleeps on the
 * futex word; a producer that published and sees a waiter bumps the futex word and wakes it: a system call only
 * when someone sleeps. Memory orders are named at each access.
 *
 * <p>Batches: a sender may publish several small frames in one slot ({@link #offerBatch}, flag
 * {@link ShmRingDescriptor#FLAG_BATCH}) when the ring's owner says it accepts them (the header's feature word, read
 * once when a peer maps the ring: an owner of an older build never sees one). The owner takes every batch slot as
 * hostile, since any process of the user may write it: the total, the first frame's length and each record's length
 * are read once, checked against what is left of the slot (and so against the MTU) before anything is read, and a
 * record that does not fit ends the slot ({@code badLength}); the frames before it are delivered. Each record is
 * copied to a scratch buffer of the owner's and handed over from offset 0, and a sealed one is checked on its own.
 */
final class ShmRing implements AutoCloseable {
    /** {@link #offer}: the frame is in the ring. */
    static final int SENT = 0;
    /** {@link #offer}: the ring is full; try again later. */
    static final int FULL = 1;
    /** {@link #offer}: the owner skipped the slot while this producer stalled; the frame is lost. */
    static final int LOST = 2;
    /** {@link #offer}: the owner closed the ring. */
    static final int CLOSED = 3;

    /** How long a claimed, unpublished slot waits before the owner checks its claimant's liveness. */
    static final long CLAIM_CHECK_NS = 10_000_000L;
    /** How long a claimed slot that names no claimant waits before it is skipped. */
    static final long CLAIM_TIMEOUT_NS = 1_000_000_000L;
    /** The smallest MTU a ring may declare: {@code Configuration.shmMtu}'s least (a smaller one leaves no payload). */
    static final int MIN_MTU = 512;
    /** Claims a producer tries before it calls the ring full (other producers took every ticket it saw). */
    static final int MAX_CLAIM_TRIES = 64;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle HEAD;

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(ShmRing.class, "head", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Arena arena;
    private final MemorySegment memory;
    private final Path file;
    private final boolean owner;
    private final long ownerId;
    private final long ownerPid;
    private final long ownerStart;
    private final int mask;
    private final int slotSize;
    private final int mtu;
    /** Whether the owner accepts batch slots: its header's feature word, read once. */
    private final boolean batches;
    /** Owner only: where a batch's second and later frames are copied, so that each is handed over from offset 0. */
    private final MemorySegment scratch;
    private final ByteBuffer scratchView;
    /** Owner only: each slot's frame bytes, sliced once. */
    private final MemorySegment[] frames;
    /** Owner only: byte buffers over the frames, made when a CRC must be checked. */
    private final ByteBuffer[] views;
    /** Owner only: each waiter's futex timeout ({@link Link#PROGRESS}, {@link Link#APPLICATION}). */
    private final MemorySegment[] timespecs;
    /** Owner only: per waiter, 1 if {@link #wakeup(int)} was called since its last {@link #await}. */
    private final java.util.concurrent.atomic.AtomicIntegerArray woken =
        new java.util.concurrent.atomic.AtomicIntegerArray(2);
    /** The owner's next ticket; written by the drainer (engine lock holder), read by the sleeper. */
    private long head;
    private long stallTicket = -1;
    private long stallSinceNs;
    private long stallCheckNs;
    private long badLength;
    private long badCrc;
    private long skipped;
    /** Producer view only: when the owner's liveness may next be read from {@code /proc}. */
    private long livenessCheckNs;
    /** Owner view only: set by {@link #close}; the owner never takes the shared state word's word for it. */
    private volatile boolean closing;

    /**
     * A view of a mapped ring whose geometry was checked (or written) by the caller: the values are taken once and
     * never read from the shared header again, since another process may change it at any moment.
     */
    private ShmRing(final Arena arena, final MemorySegment memory, final Path file, final boolean owner,
                    final int slotCount, final int slotSize, final int mtu) {
        this.arena = arena;
        this.memory = memory;
        this.file = file;
        this.owner = owner;
        this.ownerId = memory.get(ValueLayout.JAVA_LONG, OWNER_ID_OFFSET);
        this.ownerPid = memory.get(ValueLayout.JAVA_LONG, OWNER_PID_OFFSET);
        this.ownerStart = memory.get(ValueLayout.JAVA_LONG, OWNER_START_OFFSET);
        this.mask = slotCount - 1;
        this.slotSize = slotSize;
        this.mtu = mtu;
        this.batches = (memory.get(ValueLayout.JAVA_INT, FEATURES_OFFSET) & FEATURE_BATCHES) != 0;
        if (owner) {
            frames = new MemorySegment[mask + 1];
            views = new ByteBuffer[mask + 1];
            for (int i = 0; i <= mask; i++) {
                frames[i] = memory.asSlice(slotOffset(i, mask, slotSize) + SLOT_FRAME_OFFSET, mtu);
            }
            timespecs = new MemorySegment[] {arena.allocate(16, 8), arena.allocate(16, 8)};
            scratchView = ByteBuffer.allocateDirect(mtu);
            scratch = MemorySegment.ofBuffer(scratchView);
        } else {
            frames = null;
            views = null;
            timespecs = null;
            scratchView = null;
            scratch = null;
        }
    }

    /**
     * Creates and maps a new ring file, which peers may open once this returns.
     *
     * @param file      the ring's path (must not exist)
     * @param id        the owner NIC's id
     * @param slotCount the slot count, a power of two
     * @param mtu       the largest frame
     * @return the owner's view
     * @throws IOException if the file cannot be made
     */
    static ShmRing create(final Path file, final long id, final int slotCount, final int mtu) throws IOException {
        final int slotSize = slotSize(mtu);
        final long length = fileLength(slotCount, slotSize);
        // Built under a temporary name and renamed into place, so no peer ever maps a half-written header.
        final Path temporary = file.resolveSibling(Long.toHexString(id) + "." + ProcessStamp.PID + ".tmp");
        Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        final Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final MemorySegment memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
            memory.set(ValueLayout.JAVA_INT, MAGIC_OFFSET, MAGIC);
            memory.set(ValueLayout.JAVA_INT, VERSION_OFFSET, VERSION);
            memory.set(ValueLayout.JAVA_INT, SLOT_COUNT_OFFSET, slotCount);
            memory.set(ValueLayout.JAVA_INT, SLOT_SIZE_OFFSET, slotSize);
            memory.set(ValueLayout.JAVA_INT, MTU_OFFSET, mtu);
            memory.set(ValueLayout.JAVA_LONG, OWNER_ID_OFFSET, id);
            memory.set(ValueLayout.JAVA_LONG, OWNER_PID_OFFSET, ProcessStamp.PID);
            memory.set(ValueLayout.JAVA_LONG, OWNER_START_OFFSET, ProcessStamp.START);
            memory.set(ValueLayout.JAVA_INT, FEATURES_OFFSET, FEATURE_BATCHES);
            for (int i = 0; i < slotCount; i++) {
                memory.set(ValueLayout.JAVA_LONG, slotOffset(i, slotCount - 1, slotSize) + SLOT_SEQUENCE_OFFSET, i);
            }
            INT.setRelease(memory, (long) STATE_OFFSET, STATE_OPEN); // release: publishes the header above
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
            return new ShmRing(arena, memory, file, true, slotCount, slotSize, mtu);
        } catch (final IOException | RuntimeException e) {
            arena.close();
            Files.deleteIfExists(temporary);
            throw e;
        }
    }

    /**
     * Maps a peer's ring file.
     *
     * @param file the ring's path
     * @return the producer's view, or null if there is no such file or it is not an open ring
     */
    static ShmRing open(final Path file) {
        final Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final long length = channel.size();
            if (length < HEADER_LENGTH) {
                arena.close();
                return null;
            }
            final MemorySegment memory = channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
            // Each field read once, checked, and used as read: the file's writer may change them meanwhile.
            final int slotCount = memory.get(ValueLayout.JAVA_INT, SLOT_COUNT_OFFSET);
            final int slotSize = memory.get(ValueLayout.JAVA_INT, SLOT_SIZE_OFFSET);
            final int mtu = memory.get(ValueLayout.JAVA_INT, MTU_OFFSET);
            if (!valid(memory, length, slotCount, slotSize, mtu)) {
                arena.close();
                return null;
            }
            return new ShmRing(arena, memory, file, false, slotCount, slotSize, mtu);
        } catch (final IOException | RuntimeException e) {
            arena.close();
            return null;
        }
    }

    private static boolean valid(final MemorySegment memory, final long length, final int slotCount,
                                 final int slotSize, final int mtu) {
        return memory.get(ValueLayout.JAVA_INT, MAGIC_OFFSET) == MAGIC
            && memory.get(ValueLayout.JAVA_INT, VERSION_OFFSET) == VERSION
            && (int) INT.getAcquire(memory, (long) STATE_OFFSET) == STATE_OPEN // pairs with create's release
            && slotCount >= 2 && Integer.bitCount(slotCount) == 1
            && mtu >= MIN_MTU && mtu <= 65_535 && slotSize == slotSize(mtu)
            && fileLength(slotCount, slotSize) == length;
    }

    long ownerId() {
        return ownerId;
    }

    int mtu() {
        return mtu;
    }

    Path file() {
        return file;
    }

    /** @return whether the owner accepts batch slots ({@link #offerBatch}): its feature word when this view mapped it */
    boolean acceptsBatches() {
        return batches;
    }

    /**
     * @return whether the owner closed the ring (an opaque read: a late answer only delays noticing); the owner's own
     *         view answers from its own flag, since the shared state word is anyone's to write (a NIC sending to
     *         itself must not take a forged "closed" for its own close and unmap the ring it drains)
     */
    boolean closedByOwner() {
        if (owner) {
            return closing;
        }
        return (int) INT.getOpaque(memory, (long) STATE_OFFSET) == STATE_CLOSED;
    }

    /** @return whether the owner process still runs (reads {@code /proc}: for rare checks) */
    boolean ownerAlive() {
        return ProcessStamp.alive(ownerPid, ownerStart);
    }

    /**
     * Whether the owner is known gone: it closed the ring, or its process no longer runs. The process is looked
     * up at most once per {@link #CLAIM_CHECK_NS}, so a sender that finds the ring full may ask every time.
     *
     * @param nowNs the current time
     * @return true if frames sent here would never be read
     */
    boolean ownerGone(final long nowNs) {
        if (closedByOwner()) {
            return true;
        }
        if (nowNs - livenessCheckNs < 0) {
            return false;
        }
        livenessCheckNs = nowNs + CLAIM_CHECK_NS;
        return !ownerAlive();
    }

    /**
     * Whether a ring file is left over: its owner closed it without deleting it, or its owner process is gone.
     * Reads only the header. A file that is no ring of this version is not judged (false).
     *
     * @param file the file
     * @return true if it may be deleted
     */
    static boolean stale(final Path file) {
        final ByteBuffer header = ByteBuffer.allocate(OWNER_START_OFFSET + Long.BYTES)
            .order(java.nio.ByteOrder.nativeOrder());
        // Read-write: opening a FIFO planted in the group for reading alone would block until a writer came.
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
            java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            if (channel.size() < header.capacity()) {
                return false; // no regular ring file (a FIFO's size is 0)
            }
            while (header.hasRemaining() && channel.read(header) > 0) {
                continue;
            }
        } catch (final IOException e) {
            return false;
        }
        if (header.hasRemaining() || header.getInt(MAGIC_OFFSET) != MAGIC
            || header.getInt(VERSION_OFFSET) != VERSION) {
            return false;
        }
        // Judged by its owner's process alone: the state word is anyone's to write, and a live owner deletes its
        // own file when it closes.
        return !ProcessStamp.alive(header.getLong(OWNER_PID_OFFSET), header.getLong(OWNER_START_OFFSET));
    }

    // ---------------------------------------------------------------- producer

    /**
     * Copies a frame into the ring: the header, then the payload pieces, straight from where they are.
     * Allocation free.
     *
     * @param sender       the sending NIC's id
     * @param flags        the slot flags
     * @param header       the header bytes
     * @param headerLength the header length
     * @param payload      the payload pieces
     * @return {@link #SENT}, {@link #FULL}, {@link #LOST} or {@link #CLOSED}
     */
    int offer(final long sender, final int flags, final MemorySegment header, final int headerLength,
              final FrameGather payload) {
        if (closedByOwner()) {
            return CLOSED;
        }
        final long t = claim();
        if (t < 0) {
            return FULL;
        }
        final long slot = slotOffset(t, mask, slotSize);
        // Plain stores: the publishing CAS below orders all of them before the owner's acquire of the sequence.
        memory.set(ValueLayout.JAVA_INT, slot + SLOT_CLAIMANT_OFFSET, (int) ProcessStamp.PID);
        final long frame = slot + SLOT_FRAME_OFFSET;
        try {
            MemorySegment.copy(header, 0, memory, frame, headerLength);
            payload.copyTo(memory, frame + headerLength);
        } catch (final RuntimeException | Error e) {
            // The claim must not outlive this (a live claimant's slot is never skipped: the ring would stall for
            // every sender): publish the slot empty, which the owner drops as a bad length.
            memory.set(ValueLayout.JAVA_INT, slot + SLOT_LENGTH_OFFSET, 0);
            LONG.compareAndSet(memory, slot, t, t + 1);
            throw e;
        }
        return publish(t, slot, headerLength + payload.totalLength(), flags, sender);
    }

    /**
     * Publishes a batch: small frames of one sender, laid out as {@link ShmLink} stages them (the first frame from
     * offset 0, then each further one as a record: its length in {@link Staging#RECORD_PREFIX} bytes, then
     * its bytes, each record on a {@link Staging#RECORD_PREFIX}-byte boundary), in one slot, with one claim
     * and one publication. A batch of one frame is published as a plain slot. Only into a ring that
     * {@link #acceptsBatches()}. Allocation free.
     *
     * @param sender      the sending NIC's id
     * @param flags       the slot flags ({@link ShmRingDescriptor#FLAG_CRC} or 0)
     * @param records     the frames, laid out as above (the sender's own memory: copying cannot fail)
     * @param firstLength the first frame's length
     * @param end         where the last record ends, at most {@link #mtu()}
     * @return {@link #SENT}, {@link #FULL}, {@link #LOST} or {@link #CLOSED}
     * @throws IllegalArgumentException if the records exceed a slot or the first frame lies outside them
     */
    int offerBatch(final long sender, final int flags, final MemorySegment records, final int firstLength,
                   final int end) {
        if (end > mtu || firstLength < 1 || firstLength > end) {
            throw new IllegalArgumentException("a batch of " + end + " bytes whose first frame has " + firstLength
                + " bytes, in slots of " + mtu);
        }
        if (closedByOwner()) {
            return CLOSED;
        }
        final long t = claim();
        if (t < 0) {
            return FULL;
        }
        final long slot = slotOffset(t, mask, slotSize);
        // Plain stores, as in offer: the publishing CAS orders them before the owner's acquire of the sequence.
        memory.set(ValueLayout.JAVA_INT, slot + SLOT_CLAIMANT_OFFSET, (int) ProcessStamp.PID);
        MemorySegment.copy(records, 0, memory, slot + SLOT_FRAME_OFFSET, end);
        memory.set(ValueLayout.JAVA_INT, slot + SLOT_FIRST_LENGTH_OFFSET, firstLength);
        return publish(t, slot, end, end > firstLength ? flags | FLAG_BATCH : flags, sender);
    }

    /**
     * Fills in a claimed slot's length, flags and sender (plain stores) and publishes it with the CAS of its sequence
     * from {@code t} to {@code t + 1}, which orders them and everything copied in before the owner's acquire, and
     * fences the look at the waiter count; wakes a sleeping owner.
     *
     * @return {@link #SENT}, or {@link #LOST} if the owner skipped the slot meanwhile
     */
    private int publish(final long t, final long slot, final int length, final int flags, final long sender) {
        memory.set(ValueLayout.JAVA_INT, slot + SLOT_LENGTH_OFFSET, length);
        memory.set(ValueLayout.JAVA_INT, slot + SLOT_FLAGS_OFFSET, flags);
        memory.set(ValueLayout.JAVA_LONG, slot + SLOT_SENDER_OFFSET, sender);
        if (!LONG.compareAndSet(memory, slot, t, t + 1)) {
            return LOST;
        }
        if ((int) INT.getVolatile(memory, (long) WAITERS_OFFSET) != 0) {
            wakeSleepers();
        }
        return SENT;
    }

    /**
     * Claims the next ticket: waits for no one. Bounded: a ring whose writer keeps the sequences ahead of the tail
     * is not spun on for ever.
     *
     * @return the ticket claimed, or -1 if the ring is full (or written over: {@link #ownerGone} decides)
     */
    private long claim() {
        long t = (long) LONG.getVolatile(memory, (long) TAIL_OFFSET);
        int tries = 0;
        while (true) {
            final long s = (long) LONG.getAcquire(memory, slotOffset(t, mask, slotSize)); // pairs with the freeing
            if (s == t) {
                if (LONG.compareAndSet(memory, (long) TAIL_OFFSET, t, t + 1)) {
                    return t;
                }
            } else if (s - t < 0) {
                return -1; // the slot still holds the frame of the previous lap
            } else if (s - t > mask + 1) {
                return -1; // no lap puts a slot that far ahead: the ring was written over (ownerGone decides)
            }
            // Another producer took ticket t (its slot is ahead by one, or by a lap once drained): the tail moved.
            if (++tries == MAX_CLAIM_TRIES) {
                return -1;
            }
            t = (long) LONG.getVolatile(memory, (long) TAIL_OFFSET);
        }
    }

    private void wakeSleepers() {
        INT.getAndAdd(memory, (long) FUTEX_OFFSET, 1); // a sleeper that read the old value returns at once
        Futex.wake(memory.address() + FUTEX_OFFSET, Integer.MAX_VALUE);
    }

    // ---------------------------------------------------------------- owner

    /**
     * Hands the frames of up to {@code max} slots to the handler (every frame of a batch slot), in ring order; frames
     * with a bad length, or a bad CRC where the sender sealed one, are counted and dropped. Owner only, engine lock
     * held. Allocation free unless a CRC must be checked for the first time in a slot.
     *
     * @param handler the frame handler
     * @param max     the most slots
     * @param crc     the CRC checker
     * @return how many slots were taken, good frames or not
     */
    int drain(final FrameHandler handler, final int max, final FrameCrc crc) {
        int n = 0;
        long h = head;
        while (n < max) {
            final int index = (int) (h & mask);
            final long slot = slotOffset(h, mask, slotSize);
            final long s = (long) LONG.getAcquire(memory, slot); // pairs with the producer's publishing CAS
            if (s != h + 1) {
                if (s == h && stalled(h, slot)) {
                    h++;
                    HEAD.setRelease(this, h);
                    n++;
                    continue;
                }
                break;
            }
            try {
                deliver(handler, index, slot, crc);
            } finally {
                memory.set(ValueLayout.JAVA_INT, slot + SLOT_CLAIMANT_OFFSET, 0);
                LONG.setRelease(memory, slot, h + mask + 1); // release: frees the slot for ticket h + count
                h++;
                HEAD.setRelease(this, h); // release: pairs with the sleeper's acquire in isEmpty
            }
            n++;
        }
        return n;
    }

    private void deliver(final FrameHandler handler, final int index, final long slot, final FrameCrc crc) {
        // Each word read once into a local and checked there: the sender (any process) may change the slot meanwhile.
        final int length = memory.get(ValueLayout.JAVA_INT, slot + SLOT_LENGTH_OFFSET);
        final int flags = memory.get(ValueLayout.JAVA_INT, slot + SLOT_FLAGS_OFFSET);
        final long sender = memory.get(ValueLayout.JAVA_LONG, slot + SLOT_SENDER_OFFSET);
        if (length < Frame.HEADER_LENGTH || length > mtu || sender <= 0) {
            badLength++;
            return;
        }
        final int first = (flags & FLAG_BATCH) == 0 ? length
            : memory.get(ValueLayout.JAVA_INT, slot + SLOT_FIRST_LENGTH_OFFSET);
        if (first < Frame.HEADER_LENGTH || first > length) {
            badLength++;
            return;
        }
        if ((flags & FLAG_CRC) != 0 && !crc.verify(frames[index], view(index), first)) {
            badCrc++;
        } else {
            handler.onFrame(frames[index], first, sender);
        }
        if (first < length) {
            deliverRecords(handler, slot + SLOT_FRAME_OFFSET, first, length, (flags & FLAG_CRC) != 0, sender, crc);
        }
    }

    /**
     * Hands over a batch's frames after its first, each copied to {@link #scratch} so that it starts at offset 0 and
     * no longer changes, and checked there if sealed (a bad CRC drops that frame alone). Every length is read once
     * and checked against what is left of the slot before any of its bytes are read: a record that does not fit (or
     * is shorter than a header) is counted in {@code badLength} and ends the slot, since nothing after it can be
     * delimited.
     *
     * @param frame  the slot's frame start in {@link #memory}
     * @param first  the first frame's length, checked
     * @param length the bytes the slot's frames use from {@code frame}, checked against the MTU
     */
    private void deliverRecords(final FrameHandler handler, final long frame, final int first, final int length,
                                final boolean sealed, final long sender, final FrameCrc crc) {
        int at = Staging.recordAlign(first);
        while (at < length) {
            if (length - at < Staging.RECORD_PREFIX) {
                badLength++;
                return;
            }
            final int record = memory.get(ValueLayout.JAVA_INT, frame + at); // aligned: at is a multiple of 4
            at += Staging.RECORD_PREFIX;
            if (record < Frame.HEADER_LENGTH || record > length - at) {
                badLength++;
                return;
            }
            MemorySegment.copy(memory, frame + at, scratch, 0, record);
            if (sealed && !crc.verify(scratch, scratchView, record)) {
                badCrc++;
            } else {
                handler.onFrame(scratch, record, sender);
            }
            at = Staging.recordAlign(at + record);
        }
    }

    private ByteBuffer view(final int index) {
        if (views[index] == null) {
            views[index] = frames[index].asByteBuffer();
        }
        return views[index];
    }

    /** Whether the claimed, unpublished slot of ticket h should be skipped (and if so, skips it). */
    private boolean stalled(final long h, final long slot) {
        if ((long) LONG.getVolatile(memory, (long) TAIL_OFFSET) - h <= 0) {
            return false; // not claimed: the ring is just empty
        }
        final long now = System.nanoTime();
        if (stallTicket != h) {
            stallTicket = h;
            stallSinceNs = now;
            stallCheckNs = now + CLAIM_CHECK_NS;
            return false;
        }
        if (now - stallCheckNs < 0) {
            return false;
        }
        stallCheckNs = now + CLAIM_CHECK_NS;
        final int claimant = (int) INT.getOpaque(memory, slot + SLOT_CLAIMANT_OFFSET);
        final boolean abandoned = claimant == 0 ? now - stallSinceNs > CLAIM_TIMEOUT_NS
            : !ProcessStamp.alive(claimant, -1);
        if (abandoned && LONG.compareAndSet(memory, slot, h, h + mask + 1)) { // a late publication now fails
            memory.set(ValueLayout.JAVA_INT, slot + SLOT_CLAIMANT_OFFSET, 0);
            skipped++;
            return true;
        }
        return false;
    }

    /** @return whether no published frame waits at the head (any thread; acquire loads) */
    boolean isEmpty() {
        final long h = (long) HEAD.getAcquire(this);
        return (long) LONG.getAcquire(memory, slotOffset(h, mask, slotSize)) != h + 1;
    }

    /**
     * Waits for a frame: spins, then sleeps on the futex word. Owner only; the two waiters ({@link Link#PROGRESS},
     * {@link Link#APPLICATION}) may wait at once. Returns at once if the waiter was woken since its last await.
     *
     * @param waiter    which waiter
     * @param timeoutNs the longest wait
     * @param spinNs    how long to spin before sleeping
     */
    void await(final int waiter, final long timeoutNs, final long spinNs) {
        try {
            final long start = System.nanoTime();
            final long spinUntil = start + Math.min(spinNs, timeoutNs);
            while (isEmpty() && woken.get(waiter) == 0) {
                if (System.nanoTime() - spinUntil >= 0) {
                    sleep(waiter, timeoutNs - (System.nanoTime() - start));
                    return;
                }
                Thread.onSpinWait();
            }
        } finally {
            woken.set(waiter, 0); // the caller looks at its condition now: what the wakeup announced is seen
        }
    }

    private void sleep(final int waiter, final long ns) {
        if (ns <= 0) {
            return;
        }
        // The word first, then the count, then the looks: a wakeup or frame after the looks bumps the word, and
        // the futex wait returns at once.
        final int word = (int) INT.getVolatile(memory, (long) FUTEX_OFFSET);
        INT.getAndAdd(memory, (long) WAITERS_OFFSET, 1); // volatile: orders the count before the re-check below
        try {
            if (woken.get(waiter) == 0 && isEmpty() && !closing) { // its own flag: the header may be forged
                final MemorySegment timespec = timespecs[waiter];
                timespec.set(ValueLayout.JAVA_LONG, 0, ns / 1_000_000_000L);
                timespec.set(ValueLayout.JAVA_LONG, 8, ns % 1_000_000_000L);
                Futex.await(memory.address() + FUTEX_OFFSET, word, timespec.address());
            }
        } finally {
            INT.getAndAdd(memory, (long) WAITERS_OFFSET, -1);
        }
    }

    /**
     * Ends a waiter's sleep early, or makes its next await return at once (any thread of the owner's process):
     * bumps the futex word, and wakes if anyone sleeps.
     *
     * @param waiter which waiter
     */
    void wakeup(final int waiter) {
        woken.set(waiter, 1);
        wakeAll();
    }

    /** Bumps the futex word and wakes every sleeper (the ring closes). */
    private void wakeAll() {
        INT.getAndAdd(memory, (long) FUTEX_OFFSET, 1);
        if ((int) INT.getVolatile(memory, (long) WAITERS_OFFSET) != 0) {
            Futex.wake(memory.address() + FUTEX_OFFSET, Integer.MAX_VALUE);
        }
    }

    long badLength() {
        return badLength;
    }

    long badCrc() {
        return badCrc;
    }

    long skipped() {
        return skipped;
    }

    /** Unmaps the ring; the owner first marks it closed (peers then drop what they send) and deletes its file. */
    @Override
    public void close() {
        if (owner) {
            closing = true;
            INT.setRelease(memory, (long) STATE_OFFSET, STATE_CLOSED); // release: pairs with closedByOwner
            wakeAll();
            try {
                Files.deleteIfExists(file);
            } catch (final IOException e) {
                // Another process may have cleaned it up already, or the directory is gone: nothing to undo.
            }
        }
        arena.close();
    }
}
