package io.jdet.internal.collective;

import io.jdet.DataSegment;
import io.jdet.QueuePair;
import io.jdet.WrFlags;
import io.jdet.internal.verbs.MrImpl;
import io.jdet.internal.verbs.MwImpl;
import io.jdet.internal.verbs.QpImpl;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The connection to one peer: a queue pair, receive slots in the group's slot region, and credits. Every message
 * travels as sends of at most one slot each, into the peer's pre-posted slots; the sender spends a credit per data
 * chunk and the receiver hands credits back when it has copied a chunk out, piggybacked on its own chunks or, when
 * half its slots are owed and nothing goes the other way, in a credit-only send that uses one of the spare slots.
 * So a receiver is never sent more than it has posted (no receiver-not-ready retries) and early chunks simply wait
 * in their slots. The immediate carries: bit 31 credit-only, bits 16 to 30 credits returned, bit 15 the end of a
 * rendezvous, bits 0 to 14 the collective's ordinal, checked by the receiver; a credit-only send's low bits say
 * whether it is a rendezvous advertisement.
 *
 * <p>A message of at most {@link #eagerBytes} is sent eagerly: each chunk is copied into one of this channel's
 * bounce slots and sent from there, so the send operation is done once posted and the collective's step waits
 * only for the arrival of the data, never for the peer's acknowledgement (as TCP's copy into the socket buffer).
 * A longer message is sent from the caller's memory (zero copy): until its chunks' completions say the peer has
 * them, a retransmission may read that memory again, so the group lets no later step write it
 * ({@link #readsInFlight}; only this peer's own rendezvous writes, which follow them, may) and completes the
 * collective only once they are in. Sends are signaled only every {@link #signalEvery}-th (and every zero-copy
 * chunk): an unsignaled send asks the peer for no immediate acknowledgement, so acks ride on the peer's own traffic
 * or its delayed ack, and one signaled completion retires its unsignaled predecessors
 * ({@link io.jdet.WorkCompletion#reapCount}).
 *
 * <p>A message of at least {@link #rendezvousBytes} goes by rendezvous (Gloo's way): when it is the next one the
 * receiver expects from this peer, the receiver grants this queue pair alone remote write on its destination (a type
 * 2 window it binds itself, {@link MwImpl#grantRemoteWrite}) and advertises address, key, length and ordinal in a
 * credit-only send; the sender, whose message to this peer waits for that advertisement, writes it straight from
 * its memory into the destination, the last write with an immediate (bit 15) that tells the receiver it is all
 * there. No bounce copy, no copy out of a slot, no credit per chunk: one copy at the receiver, the placement, as for
 * any RDMA write. A destination of several blocks is advertised with address 0, which asks for the eager chunks
 * instead. The receiver's step ends when the last write arrives, and its grant ends then; the acknowledgement the
 * writer waits for rides on this member's next message to it in the same step (the next advertisement, say), or
 * goes on its own at the end of the step ({@link #flushAck}). The writer's next step need not wait for it unless it
 * writes what the writes read.
 */
final class Channel {
    static final long KIND_RECV = 1;
    static final long KIND_SEND = 2;
    static final long KIND_CREDIT = 3;
    /** Spare slots beyond the credits, for credit-only sends. */
    static final int SPARE = 4;
    static final int MAX_SGE = 16;
    private static final int CREDIT_ONLY = 0x8000_0000;
    /** What a send-queue entry holds, for {@link #completed}: a credit-only send, a bounce slot, caller memory. */
    private static final byte WR_CREDIT = 0;
    private static final byte WR_BOUNCE = 1;
    private static final byte WR_ZERO_COPY = 2;
    /**
     * The longest message sent eagerly through bounce slots (internal switch {@code jdet.co.eager.bytes}, for
     * measuring; 0 sends everything zero copy).
     */
    static final long EAGER_BYTES = Long.getLong("jdet.co.eager.bytes", 1L << 62);
    /** The immediate bit of a rendezvous's last write. */
    private static final int RENDEZVOUS_DONE = 0x8000;
    private static final int ORDINAL_MASK = 0x7fff;
    /** The low immediate bits of a credit-only send that carries a rendezvous advertisement. */
    private static final int ADVERT = 2;
    /** An advertisement: address (8 bytes), key (4), ordinal (4), length (8). */
    private static final int ADVERT_BYTES = 24;
    /**
     * The most bytes of one rendezvous write; each is signaled, so that a long message never fills the send queue
     * with writes only a later completion could retire. Package-private for tests.
     */
    static final int MAX_WRITE = 1 << 20;

    final int peer;
    final QueuePair qp;
    final int sqDepth;
    private final MemorySegment slots;
    private final long slotAddress;
    private final int slotKey;
    private final int slotBytes;
    private final int dataSlots;
    private final int threshold;

    int credits;
    private int toReturn;
    /**
     * A rendezvous into this member ended: its writer waits for the acknowledgement, which goes at the end of the
     * group's step ({@link #flushAck}) unless a message of that step to the peer carried it.
     */
    private boolean ackOwed;
    /** Send-queue entries posted and not yet retired by a completion, oldest first in {@link #wrKind}. */
    int sqInUse;
    private final byte[] wrKind;
    /** The message each zero-copy entry of {@link #wrKind} reads (its schedule operation), for {@link #readsInFlight}. */
    private final int[] wrOp;
    private int wrHead;
    /** Zero-copy chunks posted since the group last collected the count (it waits for their completions). */
    int postedChunks;
    private final long eagerBytes;
    private final int bounceFirst;
    private final int bounceCount;
    private int bounceNext;
    private int bounceInUse;
    private final int signalEvery;
    private int sinceSignal;
    /** The least length that goes by rendezvous. */
    private final long rendezvousBytes;
    /** The window this channel grants its destinations through, to its queue pair alone. */
    private final MwImpl window;
    /** Receiving: an advertisement was sent for the next expected message; it asked for eager chunks. */
    private boolean advertSent;
    private boolean advertEager;
    /** Sending: the peer's advertisement for the next message to it, once it arrived. */
    private boolean peerAdvert;
    private long peerAddress;
    private int peerKey;
    private int peerOrdinal;
    private long peerLength;

    private final int[] inSlot;
    private final int[] inLen;
    private final int[] inTag;
    private final boolean[] inDone;
    private int inHead;
    private int inCount;

    final IntQueue sendQ = new IntQueue();
    final IntQueue recvQ = new IntQueue();
    private long sendOff;
    private long recvOff;

    private final DataSegment[] gather = new DataSegment[MAX_SGE];
    private final DataSegment[] recvSegment = {new DataSegment()};

    Channel(final int peer, final QueuePair qp, final int sqDepth, final MemorySegment slots, final long slotAddress,
            final int slotKey, final int slotBytes, final int dataSlots, final long rendezvousBytes,
            final MwImpl window) {
        this.peer = peer;
        this.qp = qp;
        this.sqDepth = sqDepth;
        this.slots = slots;
        this.slotAddress = slotAddress;
        this.slotKey = slotKey;
        this.slotBytes = slotBytes;
        this.dataSlots = dataSlots;
        this.threshold = Math.max(1, dataSlots / 2);
        this.credits = dataSlots;
        this.wrKind = new byte[sqDepth];
        this.wrOp = new int[sqDepth];
        this.eagerBytes = EAGER_BYTES;
        this.bounceFirst = dataSlots + SPARE;
        this.bounceCount = dataSlots;
        this.signalEvery = Math.max(1, Math.min(dataSlots, sqDepth) / 2);
        this.rendezvousBytes = rendezvousBytes;
        this.window = window;
        final int n = dataSlots + SPARE;
        inSlot = new int[n];
        inLen = new int[n];
        inTag = new int[n];
        inDone = new boolean[n];
        for (int i = 0; i < MAX_SGE; i++) {
            gather[i] = new DataSegment();
        }
    }

    /** Receive slots per peer: the queue pair's receive queue depth. */
    static int slotsPerPeer(final int dataSlots) {
        return dataSlots + SPARE;
    }

    /** Slots of memory per peer: the receive slots, then as many bounce slots as data slots. */
    static int regionSlots(final int dataSlots) {
        return slotsPerPeer(dataSlots) + dataSlots;
    }

    static long id(final long kind, final int peer, final int slot) {
        return kind << 56 | (long) peer << 32 | slot & 0xffff_ffffL;
    }

    void postRecv(final int slot) {
        recvSegment[0].set(slotAddress + (long) slot * slotBytes, slotBytes, slotKey);
        qp.recv(id(KIND_RECV, peer, slot), recvSegment, 1);
    }

    /** Posts every slot's receive; done once, before the queue pair connects. */
    void postAll() {
        for (int s = 0; s < dataSlots + SPARE; s++) {
            postRecv(s);
        }
    }

    /**
     * A receive completed: a chunk sent into receive {@code slot}, a credit-only send (credits, perhaps an
     * advertisement), or a rendezvous's last write with immediate (its data went to the destination, not the slot).
     *
     * @return true if it carried data and waits to be consumed
     * @throws IllegalStateException if the peer overran its credits or sent a malformed advertisement
     */
    boolean arrived(final int slot, final int length, final int immediate) {
        credits += immediate >>> 16 & 0x7fff;
        if ((immediate & CREDIT_ONLY) != 0) {
            if ((immediate & 0xffff) == ADVERT) {
                takeAdvert((long) slot * slotBytes, length);
            }
            postRecv(slot);
            return false;
        }
        if (inCount == inSlot.length) {
            throw new IllegalStateException("peer " + peer + " overran its credits");
        }
        final int at = (inHead + inCount) % inSlot.length;
        inSlot[at] = slot;
        inLen[at] = length;
        inTag[at] = immediate & ORDINAL_MASK;
        inDone[at] = (immediate & RENDEZVOUS_DONE) != 0;
        inCount++;
        return true;
    }

    private void takeAdvert(final long at, final int length) {
        if (length != ADVERT_BYTES || peerAdvert) {
            throw new IllegalStateException("peer " + peer + " sent a malformed or unexpected rendezvous "
                + "advertisement");
        }
        peerAddress = slots.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
        peerKey = slots.get(ValueLayout.JAVA_INT_UNALIGNED, at + 8);
        peerOrdinal = slots.get(ValueLayout.JAVA_INT_UNALIGNED, at + 12);
        peerLength = slots.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 16);
        peerAdvert = true;
    }

    private boolean rendezvous(final Schedule s, final int op) {
        return s.total[op] >= rendezvousBytes;
    }

    /**
     * Copies arrived chunks into the receives queued for this peer.
     *
     * @return how many receive operations finished
     * @throws IllegalStateException if a chunk belongs to another collective or overruns its message
     */
    int matchRecvs(final Schedule s, final int tag) {
        int done = 0;
        while (inCount > 0 && !recvQ.isEmpty()) {
            final int op = recvQ.peek();
            final int slot = inSlot[inHead];
            final int len = inLen[inHead];
            if (inTag[inHead] != (tag & ORDINAL_MASK)) {
                throw new IllegalStateException("peer " + peer + " sent collective " + inTag[inHead] + ", expected "
                    + (tag & ORDINAL_MASK) + ": the members posted different collectives");
            }
            if (rendezvous(s, op) && !advertSent) {
                throw new IllegalStateException("peer " + peer + " sent data before this member advertised its "
                    + "destination: the members disagree on a length");
            }
            if (inDone[inHead]) {
                // The completion reports the last write's bytes only: a message longer than MAX_WRITE (or of more
                // than MAX_SGE source blocks) arrives by several writes, all placed before the last (in order).
                if (!advertSent || advertEager || len < 1 || len > s.total[op]) {
                    throw new IllegalStateException("peer " + peer + " ended a rendezvous of " + len + " bytes where "
                        + (advertSent && !advertEager ? s.total[op] + " were advertised" : "none was advertised"));
                }
                window.revokeGrant();
                ackOwed = true;
                advertSent = false;
                inHead = (inHead + 1) % inSlot.length;
                inCount--;
                postRecv(slot);
                toReturn++;
                recvQ.poll();
                done++;
                continue;
            }
            if (advertSent && !advertEager) {
                throw new IllegalStateException("peer " + peer + " sent a chunk into a rendezvous");
            }
            final long remaining = s.total[op] - recvOff;
            if (len > remaining || len == 0 && remaining > 0) {
                throw new IllegalStateException("peer " + peer + " sent " + len + " bytes where " + remaining
                    + " remained: the members disagree on a length");
            }
            scatter(s, op, recvOff, (long) slot * slotBytes, len);
            recvOff += len;
            inHead = (inHead + 1) % inSlot.length;
            inCount--;
            postRecv(slot);
            toReturn++;
            if (recvOff == s.total[op]) {
                recvQ.poll();
                recvOff = 0;
                advertSent = false;
                done++;
            }
        }
        return done;
    }

    private void scatter(final Schedule s, final int op, final long at, final long slotOff, final int len) {
        copyBlocks(s, op, at, len, slotOff, false);
    }

    /**
     * Posts as many chunks of the queued sends as credits, bounce slots and the send queue allow, then a
     * credit-only send if half the slots are owed.
     *
     * @return how many send operations were fully posted
     */
    int pumpSends(final Schedule s, final int tag) {
        int done = 0;
        if (!advertSent && !recvQ.isEmpty() && recvOff == 0 && rendezvous(s, recvQ.peek()) && sqInUse < sqDepth
            && bounceInUse < bounceCount) {
            advertise(s, recvQ.peek(), tag);
        }
        while (!sendQ.isEmpty() && credits > 0 && sqInUse < sqDepth) {
            final int op = sendQ.peek();
            final long total = s.total[op];
            if (rendezvous(s, op)) {
                if (!peerAdvert) {
                    break;
                }
                if (peerOrdinal != tag || peerLength != total) {
                    throw new IllegalStateException("peer " + peer + " advertised " + peerLength + " bytes for "
                        + "collective " + peerOrdinal + " where " + total + " go for " + tag
                        + ": the members disagree on a length");
                }
                if (peerAddress != 0) {
                    if (!writeRendezvous(s, op, total, tag)) {
                        break;
                    }
                    done++;
                    continue;
                }
            }
            final int max = (int) Math.min(slotBytes, total - sendOff);
            final int n;
            final byte kind;
            if (total <= eagerBytes) {
                if (bounceInUse == bounceCount) {
                    break;
                }
                final int slot = bounceFirst + bounceNext;
                n = copyChunk(s, op, sendOff, max, (long) slot * slotBytes);
                gather[0].set(slotAddress + (long) slot * slotBytes, n, slotKey);
                sgeCount = 1;
                bounceNext = bounceNext + 1 == bounceCount ? 0 : bounceNext + 1;
                bounceInUse++;
                kind = WR_BOUNCE;
            } else {
                n = gatherChunk(s, op, sendOff, max);
                postedChunks++;
                kind = WR_ZERO_COPY;
            }
            final int imm = Math.min(toReturn, 0x7fff) << 16 | tag & ORDINAL_MASK;
            qp.send(id(KIND_SEND, peer, 0), gather, sgeCount, WrFlags.IMMEDIATE | signal(kind), imm);
            toReturn -= Math.min(toReturn, 0x7fff);
            credits--;
            pushed(kind, op);
            sendOff += n;
            if (sendOff == total) {
                sendQ.poll();
                sendOff = 0;
                peerAdvert = false;
                done++;
            }
        }
        if (toReturn >= threshold && sqInUse < sqDepth) {
            final int give = Math.min(toReturn, 0x7fff);
            qp.send(id(KIND_CREDIT, peer, 0), gather, 0, WrFlags.IMMEDIATE | signal(WR_CREDIT),
                CREDIT_ONLY | give << 16);
            toReturn -= give;
            pushed(WR_CREDIT, -1);
        }
        return done;
    }

    /**
     * Writes what is left of message {@code op} into the peer's advertised destination, as far as the send queue
     * allows: signaled writes of up to {@link #MAX_WRITE} bytes and {@link #MAX_SGE} blocks, the last one with the
     * immediate that ends the rendezvous (it consumes a receive at the peer, hence a credit).
     *
     * @return whether the whole message is posted
     */
    private boolean writeRendezvous(final Schedule s, final int op, final long total, final int tag) {
        while (sqInUse < sqDepth) {
            final int n = gatherChunk(s, op, sendOff, (int) Math.min(MAX_WRITE, total - sendOff));
            final long at = peerAddress + sendOff;
            postedChunks++;
            if (sendOff + n < total) {
                qp.write(id(KIND_SEND, peer, 0), gather, sgeCount, at, peerKey, 0, 0);
                pushed(WR_ZERO_COPY, op);
                sendOff += n;
                continue;
            }
            final int imm = Math.min(toReturn, 0x7fff) << 16 | RENDEZVOUS_DONE | tag & ORDINAL_MASK;
            qp.write(id(KIND_SEND, peer, 0), gather, sgeCount, at, peerKey, WrFlags.IMMEDIATE, imm);
            toReturn -= Math.min(toReturn, 0x7fff);
            credits--;
            pushed(WR_ZERO_COPY, op);
            sendQ.poll();
            sendOff = 0;
            peerAdvert = false;
            return true;
        }
        return false;
    }

    /**
     * Tells the peer where the next message it sends this member goes, from a bounce slot: a grant of remote write
     * on the destination to this queue pair alone, or address 0 (eager chunks) when the destination is several
     * blocks or memory no region holds.
     */
    private void advertise(final Schedule s, final int op, final int tag) {
        long address = 0;
        int key = 0;
        final int b = s.first[op];
        if (grantable(s, op)) {
            address = s.address(b);
            key = window.grantRemoteWrite((QpImpl) qp, (MrImpl) s.owners[s.blockBuf[b]], address, s.total[op]);
        }
        final int slot = bounceFirst + bounceNext;
        final long at = (long) slot * slotBytes;
        slots.set(ValueLayout.JAVA_LONG_UNALIGNED, at, address);
        slots.set(ValueLayout.JAVA_INT_UNALIGNED, at + 8, key);
        slots.set(ValueLayout.JAVA_INT_UNALIGNED, at + 12, tag);
        slots.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 16, s.total[op]);
        gather[0].set(slotAddress + at, ADVERT_BYTES, slotKey);
        bounceNext = bounceNext + 1 == bounceCount ? 0 : bounceNext + 1;
        bounceInUse++;
        qp.send(id(KIND_CREDIT, peer, 0), gather, 1, WrFlags.IMMEDIATE | signal(WR_BOUNCE), CREDIT_ONLY | ADVERT);
        pushed(WR_BOUNCE, -1);
        advertSent = true;
        advertEager = address == 0;
    }

    /** SUPPRESSED unless this send must report: every zero-copy chunk and every {@link #signalEvery}-th send. */
    private int signal(final byte kind) {
        if (kind == WR_ZERO_COPY || ++sinceSignal >= signalEvery) {
            sinceSignal = 0;
            return 0;
        }
        return WrFlags.SUPPRESSED;
    }

    /** Whether receive {@code op}'s destination can be granted: one block of a region this library registered. */
    private static boolean grantable(final Schedule s, final int op) {
        return s.count[op] == 1 && s.owners[s.blockBuf[s.first[op]]] instanceof MrImpl;
    }

    /**
     * Whether receive {@code op} will arrive by the peer's writes into its destination after this member's
     * advertisement, rather than through the slots: a rendezvous whose destination can be granted.
     */
    boolean placedByPeerWrite(final Schedule s, final int op) {
        return rendezvous(s, op) && grantable(s, op);
    }

    /**
     * Whether a zero-copy send to this peer that is not yet acknowledged reads any of the bytes at
     * {@code [from, from + length)}: its memory may not change while a retransmission could read it.
     */
    boolean readsInFlight(final Schedule s, final long from, final long length) {
        int last = -1;
        for (int i = 0; i < sqInUse; i++) {
            final int at = wrHead + i < sqDepth ? wrHead + i : wrHead + i - sqDepth;
            if (wrKind[at] == WR_ZERO_COPY && wrOp[at] != last) {
                last = wrOp[at];
                if (s.overlaps(last, from, length)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Sends the acknowledgement a rendezvous's writer waits for, if no message of this step carried it: the engine
     * would leave it for the application's next pass on this NIC, and this member may not come back soon (its
     * collective may be done). The caller holds the engine's data-path lock. Raises nothing.
     */
    void flushAck() {
        if (ackOwed) {
            ackOwed = false;
            ((QpImpl) qp).ackNow();
        }
    }

    private void pushed(final byte kind, final int op) {
        final int at = wrHead + sqInUse;
        final int i = at >= sqDepth ? at - sqDepth : at;
        wrKind[i] = kind;
        wrOp[i] = op;
        sqInUse++;
    }

    /**
     * A send completion retired {@code reaped} send-queue entries, oldest first (the signaled one and the unsignaled
     * ones before it): their bounce slots are free again.
     *
     * @return how many of them were zero-copy chunks
     */
    int completed(final int reaped) {
        int zeroCopy = 0;
        for (int i = 0; i < reaped && sqInUse > 0; i++) {
            final byte k = wrKind[wrHead];
            wrHead = wrHead + 1 == sqDepth ? 0 : wrHead + 1;
            sqInUse--;
            if (k == WR_BOUNCE) {
                bounceInUse--;
            } else if (k == WR_ZERO_COPY) {
                zeroCopy++;
            }
        }
        return zeroCopy;
    }

    /** Copies up to {@code max} bytes of the message from {@code at} into the slot region at {@code slotOff}. */
    private int copyChunk(final Schedule s, final int op, final long at, final int max, final long slotOff) {
        return copyBlocks(s, op, at, max, slotOff, true);
    }

    /**
     * Copies up to {@code max} bytes between the message's blocks, from byte {@code at} of the message on, and the
     * slot region at {@code slotOff}: into the slots when {@code intoSlots}, out of them otherwise.
     *
     * @return the bytes copied
     */
    private int copyBlocks(final Schedule s, final int op, final long at, final int max, final long slotOff,
                           final boolean intoSlots) {
        long skip = at;
        long slotAt = slotOff;
        int left = max;
        for (int b = s.first[op], end = b + s.count[op]; b < end && left > 0; b++) {
            final int bl = s.blockLen[b];
            if (skip >= bl) {
                skip -= bl;
                continue;
            }
            final int n = (int) Math.min(bl - skip, left);
            final MemorySegment block = s.segs[s.blockBuf[b]];
            if (intoSlots) {
                MemorySegment.copy(block, s.blockOff[b] + skip, slots, slotAt, n);
            } else {
                MemorySegment.copy(slots, slotAt, block, s.blockOff[b] + skip, n);
            }
            slotAt += n;
            left -= n;
            skip = 0;
        }
        return max - left;
    }

    private int sgeCount;

    /** Fills {@link #gather} with up to {@code max} bytes of the message from {@code at}; returns the bytes. */
    private int gatherChunk(final Schedule s, final int op, final long at, final int max) {
        sgeCount = 0;
        long skip = at;
        int left = max;
        int got = 0;
        for (int b = s.first[op], end = b + s.count[op]; b < end && left > 0 && sgeCount < MAX_SGE; b++) {
            final int bl = s.blockLen[b];
            if (skip >= bl) {
                skip -= bl;
                continue;
            }
            final int n = (int) Math.min(bl - skip, left);
            final int buf = s.blockBuf[b];
            gather[sgeCount++].set(s.addrs[buf] + s.blockOff[b] + skip, n, s.keys[buf]);
            left -= n;
            got += n;
            skip = 0;
        }
        return got;
    }

    /** Forgets queued work after a failure or close. */
    void clear() {
        sendQ.clear();
        recvQ.clear();
        sendOff = 0;
        recvOff = 0;
        advertSent = false;
        peerAdvert = false;
        ackOwed = false;
    }
}
