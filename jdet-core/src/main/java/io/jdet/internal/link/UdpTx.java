package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The UDP link's transmit side: datagrams staged for one {@code sendmmsg}, each a list of iovecs that gathers its
 * frames' bytes straight from where they lie.
 *
 * <p>What a datagram gathers: a frame's header (the engine reuses that memory for the next frame) and every payload
 * piece shorter than {@link #GATHER_MIN} or not lent ({@link FrameGather#lent}) are copied into the datagram's
 * staging slot, contiguous with what was copied before, so that small frames sharing a datagram cost one iovec
 * together. A lent piece of at least {@link #GATHER_MIN} bytes is not copied: an iovec points at it in registered
 * memory, and the kernel copies it once, into its socket buffer, during {@code sendmmsg}. The engine has already
 * computed the frame CRC over it in one pass ({@code FrameCrc}, the JDK's CRC32C intrinsic), so the sender reads
 * each payload byte twice (CRC, kernel copy) instead of three times (CRC, staging copy, kernel copy).
 *
 * <p>Registered memory kept alive: the kernel must never read memory the application freed. Closing a shared
 * arena fails while a downcall that was passed one of its segments runs ({@link Arena#close}), and a downcall
 * refuses a segment whose arena is already closed. So each {@code sendmmsg} goes through {@code syscall(2)} with
 * the gathered pieces' segments as extra arguments, one per distinct arena ({@link #KEEP} at most in one batch; a
 * piece of a further arena is copied instead); the kernel ignores arguments beyond {@code sendmmsg}'s four. If an
 * arena was closed between staging and the call, the call is refused before it starts: every staged datagram is
 * then materialized (copied into its slot by Java accesses, which fail cleanly for the closed arena), the ones that
 * cannot be are dropped as a wire would drop them (the protocol retransmits, and the engine finds the region
 * unusable), and the rest go. The other way a lent reference ends is {@link #settle}: the engine calls it before
 * deregistration, a flush or closing lets the application reuse the memory; it sends what is staged or, if the
 * kernel has no room, materializes it.
 *
 * <p>Segmented sends (UDP GSO): a run of staged datagrams for one peer, all of one length but a last that may be
 * shorter, goes as one message with a {@code UDP_SEGMENT} cmsg, which the kernel cuts back into those datagrams
 * after one pass through its IP stack ({@link #send}, {@link #segmenting}); docs/PROTOCOL.md section 10.
 *
 * <p>Called by the holder of the NIC's engine lock only. Allocation free.
 */
final class UdpTx {
    /** A staging slot per datagram: larger than any UDP payload. */
    static final int SLOT = 65_536;
    /** Datagrams staged and sent by one {@code sendmmsg}. */
    static final int BATCH = 16;
    /** Payload pieces shorter than this are copied into the slot: an iovec each would cost more than the copy. */
    static final int GATHER_MIN = 1024;
    /** The most iovecs of one datagram. */
    static final int IOVS = 32;
    /** The most distinct arenas one batch gathers from (extra arguments of the {@code syscall}). */
    static final int KEEP = Posix.KEEP_ARGS;
    /** The most datagrams one segmented send carries ({@code UDP_MAX_SEGMENTS} of every kernel since 4.18). */
    static final int GSO_MAX_SEGMENTS = 64;
    /** The most bytes one segmented send carries: the largest UDP payload, which the kernel then cuts. */
    static final int GSO_MAX_BYTES = UdpAddress.MAX_UDP_PAYLOAD;
    /** A {@code UDP_SEGMENT} cmsg: its header and a 2-byte segment size, padded to 8 bytes ({@code CMSG_SPACE(2)}). */
    private static final int GSO_CMSG_SPACE = Posix.CMSGHDR_SIZE + 8;

    private final int fd;
    private final int mtu;
    private final MemorySegment errno;
    /** The staging slots, one per datagram. */
    private final MemorySegment slots;
    /** Scratch for materializing a datagram before it is copied back into its slot. */
    private final MemorySegment scratch;
    private final MemorySegment msgs;
    private final MemorySegment iovs;
    private final MemorySegment[] msgFrom = new MemorySegment[BATCH];
    private final MemorySegment[] nameSlots = new MemorySegment[BATCH];
    /** The peer each slot's name holds, so that it is rewritten only when the peer changes. */
    private final long[] namePeers = new long[BATCH];
    private final long[] peers = new long[BATCH];
    /** Each datagram's length, its iovec count, the bytes of its slot in use. */
    private final int[] lengths = new int[BATCH];
    private final int[] iovCounts = new int[BATCH];
    private final int[] slotUsed = new int[BATCH];
    /** Whether each datagram's last iovec is the copied run that ends at {@link #slotUsed}: the next copy extends it. */
    private final boolean[] lastCopied = new boolean[BATCH];
    /** Each iovec's source for Java reads (materializing): its segment and the offset in it. */
    private final MemorySegment[] iovSegments = new MemorySegment[BATCH * IOVS];
    private final long[] iovOffsets = new long[BATCH * IOVS];
    /** One segment per distinct arena the batch gathers from, passed to the call; {@link MemorySegment#NULL} unused. */
    private final MemorySegment[] keep = new MemorySegment[KEEP];
    private int kept;
    /** Staged datagrams: [first, count) wait; the last may still take frames. */
    private int first;
    private int count;
    /** Whether a staged datagram gathers from registered memory. */
    private boolean gathering;

    /**
     * Segmented sends (UDP GSO): a run of staged datagrams for one peer, all of one length but the last, which may
     * be shorter, goes as one message that the kernel cuts back into those datagrams, so the IP stack, the route and
     * the device see it once. Off where the kernel has no {@code UDP_SEGMENT} (before 4.18: it would ignore the
     * cmsg and send the run as one datagram), and for good once the kernel refuses to cut a run that it then takes
     * datagram by datagram (a route whose device cannot compute UDP checksums, a path MTU below the segment); the
     * datagrams then go one by one, as before.
     */
    private boolean segmenting;
    /**
     * After a refused segmented send, where the datagrams of that run end: they go one by one, and if the kernel
     * takes them, segmenting stays off; if it refuses them too, the peer was at fault, not the cutting. -1: none.
     */
    private int refusedRunEnd = -1;
    /** The batch's messages when some are segmented: their headers, their iovecs (copied), their cmsgs. */
    private final MemorySegment gsoMsgs;
    private final MemorySegment gsoIovs;
    private final MemorySegment gsoControl;
    /** How many staged datagrams each of those messages carries. */
    private final int[] gsoDatagrams = new int[BATCH];

    /** Sends still to answer as if the kernel had no room (EAGAIN), without calling it: set by tests only. */
    int refuseForTests;

    private long coalesced;
    private long gathered;
    private long sendErrors;
    private long dropped;
    private long segmentedSends;
    private long segmentedDatagrams;
    private long segmentingRefused;

    /**
     * Lays out the batch in the link's memory.
     *
     * @param arena the link's arena
     * @param fd    the socket
     * @param mtu   the largest datagram
     */
    UdpTx(final Arena arena, final int fd, final int mtu) {
        this.fd = fd;
        this.mtu = mtu;
        this.errno = Posix.newErrnoState(arena);
        this.slots = arena.allocate((long) SLOT * BATCH, 64);
        this.scratch = arena.allocate(SLOT, 64);
        this.msgs = arena.allocate((long) Posix.MMSGHDR_SIZE * BATCH, 8);
        this.iovs = arena.allocate((long) Posix.IOVEC_SIZE * IOVS * BATCH, 8);
        final MemorySegment names = arena.allocate((long) Posix.SOCKADDR_IN_SIZE * BATCH, 8);
        for (int k = 0; k < BATCH; k++) {
            final long msg = (long) k * Posix.MMSGHDR_SIZE;
            nameSlots[k] = names.asSlice((long) k * Posix.SOCKADDR_IN_SIZE, Posix.SOCKADDR_IN_SIZE);
            namePeers[k] = -1;
            msgs.set(ValueLayout.ADDRESS, msg + Posix.MSG_NAME, nameSlots[k]);
            msgs.set(ValueLayout.JAVA_INT, msg + Posix.MSG_NAMELEN, Posix.SOCKADDR_IN_SIZE);
            msgs.set(ValueLayout.ADDRESS, msg + Posix.MSG_IOV, iovs.asSlice(iovAt(k, 0), Posix.IOVEC_SIZE * IOVS));
            msgFrom[k] = msgs.asSlice(msg);
        }
        java.util.Arrays.fill(keep, MemorySegment.NULL);
        this.segmenting = kernelSegments(arena, fd);
        this.gsoMsgs = arena.allocate((long) Posix.MMSGHDR_SIZE * BATCH, 8);
        this.gsoIovs = arena.allocate((long) Posix.IOVEC_SIZE * IOVS * BATCH, 8);
        this.gsoControl = arena.allocate((long) GSO_CMSG_SPACE * BATCH, 8);
        for (int m = 0; m < BATCH; m++) {
            final long cmsg = (long) m * GSO_CMSG_SPACE;
            gsoControl.set(ValueLayout.JAVA_LONG, cmsg, Posix.CMSGHDR_SIZE + 2); // CMSG_LEN(2)
            gsoControl.set(ValueLayout.JAVA_INT, cmsg + Posix.CMSG_LEVEL, Posix.SOL_UDP);
            gsoControl.set(ValueLayout.JAVA_INT, cmsg + Posix.CMSG_TYPE, Posix.UDP_SEGMENT);
        }
    }

    /** Whether the kernel knows {@code UDP_SEGMENT} (since 4.18): it answers {@code getsockopt} for it. */
    private static boolean kernelSegments(final Arena arena, final int fd) {
        final MemorySegment value = arena.allocate(ValueLayout.JAVA_INT);
        final MemorySegment length = arena.allocate(ValueLayout.JAVA_INT);
        length.set(ValueLayout.JAVA_INT, 0, 4);
        try {
            return (int) Posix.GETSOCKOPT.invokeExact(Posix.newErrnoState(arena), fd, Posix.SOL_UDP,
                Posix.UDP_SEGMENT, value, length) == 0;
        } catch (final Throwable t) {
            return false;
        }
    }

    private static long iovAt(final int k, final int j) {
        return ((long) k * IOVS + j) * Posix.IOVEC_SIZE;
    }

    /** @return whether datagrams wait */
    boolean staged() {
        return first < count;
    }

    /** @return how many datagrams wait */
    int stagedCount() {
        return count - first;
    }

    /**
     * Appends a frame to the last staged datagram if it is bound for the same peer and has room, else to a new one.
     * Copies what {@link UdpTx} says is copied; a Java access, which throws if a copied piece's arena was closed.
     *
     * @return false if every datagram is staged and the kernel takes none of them now
     * @throws IllegalStateException if the arena of a piece to copy is closed (nothing is staged then)
     */
    boolean stage(final long peer, final MemorySegment header, final int headerLength, final FrameGather payload) {
        final int length = headerLength + payload.totalLength();
        if (length > SLOT) {
            sendErrors++; // larger than any datagram: lost, as EMSGSIZE would lose it
            return true;
        }
        // At worst the header's run, then each piece and a copied run after it (a frame that needs more than a
        // datagram has starts one of its own, and copies what does not fit)
        final int iovsNeeded = Math.min(IOVS, 1 + 2 * payload.count());
        int k = count - 1;
        if (k < first || peers[k] != peer || lengths[k] + length > mtu || iovCounts[k] + iovsNeeded > IOVS) {
            if (count == BATCH && !send()) {
                return false;
            }
            k = count;
            peers[k] = peer;
            lengths[k] = 0;
            iovCounts[k] = 0;
            slotUsed[k] = 0;
            lastCopied[k] = false;
            if (namePeers[k] != peer) {
                Posix.sockaddr(nameSlots[k], UdpAddress.handleIp(peer), UdpAddress.handlePort(peer));
                namePeers[k] = peer;
            }
            count++;
        } else {
            coalesced++;
        }
        final int iovsBefore = iovCounts[k];
        final int usedBefore = slotUsed[k];
        final boolean copiedBefore = lastCopied[k];
        final long runBefore = copiedBefore ? iovs.get(ValueLayout.JAVA_LONG, iovAt(k, iovsBefore - 1) + 8) : 0;
        try {
            copy(k, header, 0, headerLength);
            for (int i = 0; i < payload.count(); i++) {
                final MemorySegment segment = payload.segment(i);
                // Two iovecs of room: the piece's, and one for a copied run after it
                if (payload.length(i) >= GATHER_MIN && payload.lent(i) && segment.isNative()
                    && iovCounts[k] + 2 <= IOVS && kept(segment)) {
                    point(k, segment, payload.offset(i), payload.length(i));
                } else {
                    copy(k, segment, payload.offset(i), payload.length(i));
                }
            }
        } catch (final IllegalStateException e) {
            // A copied piece's arena is closed: take the frame back out, whole, and let the caller see why.
            iovCounts[k] = iovsBefore;
            slotUsed[k] = usedBefore;
            lastCopied[k] = copiedBefore;
            if (copiedBefore) {
                iovs.set(ValueLayout.JAVA_LONG, iovAt(k, iovsBefore - 1) + 8, runBefore);
            }
            if (iovsBefore == 0) {
                count--;
            }
            throw e;
        }
        lengths[k] += length;
        return true;
    }

    /** Whether the segment's arena is among those the batch keeps alive, or now joins them. */
    private boolean kept(final MemorySegment segment) {
        final MemorySegment.Scope scope = segment.scope();
        for (int i = 0; i < kept; i++) {
            if (keep[i].scope().equals(scope)) {
                return true;
            }
        }
        if (kept == KEEP || !scope.isAlive()) {
            return false; // copied instead (and a closed arena's piece then fails in Java)
        }
        keep[kept++] = segment;
        return true;
    }

    private void copy(final int k, final MemorySegment from, final long offset, final int length) {
        if (length == 0) {
            return;
        }
        final long at = (long) k * SLOT + slotUsed[k];
        MemorySegment.copy(from, offset, slots, at, length);
        final int j = iovCounts[k];
        if (lastCopied[k]) {
            final long len = iovAt(k, j - 1) + 8;
            iovs.set(ValueLayout.JAVA_LONG, len, iovs.get(ValueLayout.JAVA_LONG, len) + length);
        } else {
            iovs.set(ValueLayout.JAVA_LONG, iovAt(k, j), slots.address() + at);
            iovs.set(ValueLayout.JAVA_LONG, iovAt(k, j) + 8, length);
            iovSegments[k * IOVS + j] = slots;
            iovOffsets[k * IOVS + j] = at;
            iovCounts[k] = j + 1;
            lastCopied[k] = true;
        }
        slotUsed[k] += length;
    }

    private void point(final int k, final MemorySegment segment, final long offset, final int length) {
        final int j = iovCounts[k];
        iovs.set(ValueLayout.JAVA_LONG, iovAt(k, j), segment.address() + offset);
        iovs.set(ValueLayout.JAVA_LONG, iovAt(k, j) + 8, length);
        iovSegments[k * IOVS + j] = segment;
        iovOffsets[k * IOVS + j] = offset;
        iovCounts[k] = j + 1;
        lastCopied[k] = false;
        gathering = true;
        gathered++;
    }

    /** Takes back the last staged datagram (a lone frame the kernel refused: the caller is told to retry). */
    void unstageLast() {
        count--;
        if (first == count) {
            clear();
        }
    }

    /**
     * Sends the staged datagrams, as many per {@code sendmmsg} as there are; runs of them as segmented sends
     * ({@link #segmenting}).
     *
     * @return true if none is left staged; false if the kernel had no room (they stay, and go at the next call)
     */
    boolean send() {
        while (first < count) {
            if (refuseForTests > 0) {
                refuseForTests--;
                return false;
            }
            final int messages = segmenting ? group() : 0;
            final int n;
            try {
                if (messages > 0) {
                    n = Posix.sendmmsgKeeping(fd, gsoMsgs, messages, errno, keep);
                } else {
                    for (int k = first; k < count; k++) {
                        msgs.set(ValueLayout.JAVA_LONG, (long) k * Posix.MMSGHDR_SIZE + Posix.MSG_IOVLEN,
                            iovCounts[k]);
                    }
                    n = Posix.sendmmsgKeeping(fd, msgFrom[first], count - first, errno, keep);
                }
            } catch (final IllegalStateException e) {
                if (kept == 0) {
                    throw e; // not a closed arena of the batch's: a fault of the link's own
                }
                materializeAll(); // an arena the batch gathers from was closed: nothing was sent
                continue;
            }
            if (n > 0) {
                if (refusedRunEnd >= 0) {
                    // The refused run went datagram by datagram: the kernel would not cut it. Off for good.
                    refusedRunEnd = -1;
                    segmentingRefused++;
                }
                first += messages > 0 ? sent(n) : n;
                continue;
            }
            final int err = Posix.errno(errno);
            if (err == Posix.EAGAIN || err == Posix.ENOBUFS) {
                return false;
            }
            if (messages > 0 && gsoDatagrams[0] > 1
                && (err == Posix.EINVAL || err == Posix.EIO || err == Posix.EMSGSIZE)) {
                // Perhaps the kernel refuses to cut this run (no checksum offload on the route's device, a path MTU
                // below the segment), perhaps the peer refuses any send: these datagrams go one by one, which tells.
                segmenting = false;
                refusedRunEnd = first + gsoDatagrams[0];
                continue;
            }
            if (err != Posix.EINTR) {
                if (refusedRunEnd >= 0) {
                    refusedRunEnd = -1;
                    segmenting = true; // refused datagram by datagram too: the peer, not the cutting, was at fault
                }
                // Unreachable or refused peer, a closed socket: that datagram (or run of them) is lost, as on a wire.
                final int lost = messages > 0 ? gsoDatagrams[0] : 1;
                sendErrors += lost;
                first += lost;
            }
        }
        clear();
        return true;
    }

    /**
     * Lays the staged datagrams out as messages in {@link #gsoMsgs}: each run of datagrams for one peer, of one
     * length but the last (at most that length), at most {@link #GSO_MAX_SEGMENTS} and {@link #GSO_MAX_BYTES},
     * becomes one message with a {@code UDP_SEGMENT} cmsg of that length, whose iovecs are the run's in order; any
     * other datagram a message of its own.
     *
     * @return the messages, or 0 if no run has two datagrams (the batch then goes as it is staged)
     */
    private int group() {
        boolean any = false;
        for (int k = first; k + 1 < count && !any; k++) {
            any = peers[k + 1] == peers[k] && lengths[k + 1] <= lengths[k]
                && lengths[k] + lengths[k + 1] <= GSO_MAX_BYTES;
        }
        if (!any) {
            return 0;
        }
        int m = 0;
        long iov = 0;
        for (int k = first; k < count; m++) {
            final int size = lengths[k];
            int end = k + 1;
            int bytes = size;
            while (end < count && end - k < GSO_MAX_SEGMENTS && peers[end] == peers[k] && lengths[end] <= size
                && bytes + lengths[end] <= GSO_MAX_BYTES) {
                bytes += lengths[end++];
                if (lengths[end - 1] < size) {
                    break; // a shorter datagram can only end a run
                }
            }
            final long msg = (long) m * Posix.MMSGHDR_SIZE;
            final long iovStart = iov;
            for (int d = k; d < end; d++) {
                final long from = iovAt(d, 0);
                final long bytesOfIovs = (long) iovCounts[d] * Posix.IOVEC_SIZE;
                MemorySegment.copy(iovs, from, gsoIovs, iov, bytesOfIovs);
                iov += bytesOfIovs;
            }
            gsoMsgs.set(ValueLayout.ADDRESS, msg + Posix.MSG_NAME, nameSlots[k]);
            gsoMsgs.set(ValueLayout.JAVA_INT, msg + Posix.MSG_NAMELEN, Posix.SOCKADDR_IN_SIZE);
            gsoMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_IOV, gsoIovs.address() + iovStart);
            gsoMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_IOVLEN, (iov - iovStart) / Posix.IOVEC_SIZE);
            if (end - k > 1) {
                final long cmsg = (long) m * GSO_CMSG_SPACE;
                gsoControl.set(ValueLayout.JAVA_SHORT, cmsg + Posix.CMSGHDR_SIZE, (short) size);
                gsoMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_CONTROL, gsoControl.address() + cmsg);
                gsoMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_CONTROLLEN, GSO_CMSG_SPACE);
            } else {
                gsoMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_CONTROL, 0L);
                gsoMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_CONTROLLEN, 0L);
            }
            gsoDatagrams[m] = end - k;
            k = end;
        }
        return m;
    }

    /** @return how many staged datagrams the first {@code messages} messages of {@link #group} carried */
    private int sent(final int messages) {
        int datagrams = 0;
        for (int m = 0; m < messages; m++) {
            datagrams += gsoDatagrams[m];
            if (gsoDatagrams[m] > 1) {
                segmentedSends++;
                segmentedDatagrams += gsoDatagrams[m];
            }
        }
        return datagrams;
    }

    private void clear() {
        first = count = 0;
        if (refusedRunEnd >= 0) {
            refusedRunEnd = -1;
            segmenting = true; // the refused run never went (its memory was freed): nothing was learnt
        }
        for (int i = 0; i < kept; i++) {
            keep[i] = MemorySegment.NULL;
        }
        kept = 0;
        gathering = false;
    }

    /**
     * Makes the staged datagrams independent of registered memory: sends them, or if the kernel has no room,
     * copies what they gather into their slots.
     */
    void settle() {
        if (gathering && !send()) {
            materializeAll();
        }
    }

    /**
     * Copies every staged datagram into its slot (after an arena was closed under the batch, or to settle); those
     * that would read freed memory are dropped, as a wire drops a datagram.
     */
    private void materializeAll() {
        for (int k = first; k < count; k++) {
            materialize(k);
        }
        compact();
        for (int i = 0; i < kept; i++) {
            keep[i] = MemorySegment.NULL;
        }
        kept = 0;
        gathering = false;
    }

    /**
     * Copies datagram {@code k} into its own slot as one iovec, by Java reads; marks it dropped ({@code peers[k]}
     * -1) if one of its pieces lies in a closed arena.
     */
    private void materialize(final int k) {
        long at = 0;
        try {
            for (int j = 0; j < iovCounts[k]; j++) {
                final int len = (int) iovs.get(ValueLayout.JAVA_LONG, iovAt(k, j) + 8);
                MemorySegment.copy(iovSegments[k * IOVS + j], iovOffsets[k * IOVS + j], scratch, at, len);
                at += len;
            }
        } catch (final IllegalStateException e) {
            peers[k] = -1;
            dropped++;
            return;
        }
        final long slot = (long) k * SLOT;
        MemorySegment.copy(scratch, 0, slots, slot, at);
        iovs.set(ValueLayout.JAVA_LONG, iovAt(k, 0), slots.address() + slot);
        iovs.set(ValueLayout.JAVA_LONG, iovAt(k, 0) + 8, at);
        iovSegments[k * IOVS] = slots;
        iovOffsets[k * IOVS] = slot;
        iovCounts[k] = 1;
        slotUsed[k] = (int) at;
        lastCopied[k] = true;
    }

    /** Removes the datagrams {@link #materialize} dropped, keeping the order of the rest. */
    private void compact() {
        int to = first;
        for (int k = first; k < count; k++) {
            if (peers[k] == -1) {
                continue;
            }
            if (to != k) {
                moveDatagram(k, to);
            }
            to++;
        }
        count = to;
        if (first == count) {
            first = count = 0;
        }
    }

    /** Moves a materialized datagram (one iovec into its slot) to an earlier index. */
    private void moveDatagram(final int from, final int to) {
        final long src = (long) from * SLOT;
        final long dst = (long) to * SLOT;
        MemorySegment.copy(slots, src, slots, dst, slotUsed[from]);
        peers[to] = peers[from];
        lengths[to] = lengths[from];
        slotUsed[to] = slotUsed[from];
        iovCounts[to] = 1;
        lastCopied[to] = true;
        iovs.set(ValueLayout.JAVA_LONG, iovAt(to, 0), slots.address() + dst);
        iovs.set(ValueLayout.JAVA_LONG, iovAt(to, 0) + 8, slotUsed[from]);
        iovSegments[to * IOVS] = slots;
        iovOffsets[to * IOVS] = dst;
        if (namePeers[to] != peers[to]) {
            Posix.sockaddr(nameSlots[to], UdpAddress.handleIp(peers[to]), UdpAddress.handlePort(peers[to]));
            namePeers[to] = peers[to];
        }
    }

    /** Drops a frame too large for any datagram (as EMSGSIZE would), counted with the send errors. */
    void countError() {
        sendErrors++;
    }

    /**
     * Adds the transmit counters.
     *
     * @param counters where to add them
     */
    void addCounters(final java.util.Map<String, Long> counters) {
        counters.merge("link.tx.errors", sendErrors, Long::sum);
        counters.merge("link.tx.coalesced", coalesced, Long::sum);
        counters.merge("link.tx.gathered", gathered, Long::sum);
        counters.merge("link.tx.freed_dropped", dropped, Long::sum);
        counters.merge("link.tx.segmented_sends", segmentedSends, Long::sum);
        counters.merge("link.tx.segmented_datagrams", segmentedDatagrams, Long::sum);
        counters.merge("link.tx.segmenting_refused", segmentingRefused, Long::sum);
    }
}
