package io.jdet.internal.collective;

import io.jdet.DataSegment;
import io.jdet.QueuePair;
import io.jdet.WrFlags;

import java.lang.foreign.MemorySegment;

/**
 * The connection to one peer: a queue pair, receive slots in the group's slot region, and credits. Every message
 * travels as sends of at most one slot each, into the peer's pre-posted slots; the sender spends a credit per data
 * chunk and the receiver hands credits back when it has copied a chunk out, piggybacked on its own chunks or, when
 * half its slots are owed and nothing goes the other way, in a credit-only send that uses one of the spare slots.
 * So a receiver is never sent more than it has posted (no receiver-not-ready retries) and early chunks simply wait
 * in their slots. The immediate carries: bit 31 credit-only, bits 16 to 30 credits returned, bits 0 to 15 the
 * collective's ordinal, checked by the receiver.
 */
final class Channel {
    static final long KIND_RECV = 1;
    static final long KIND_SEND = 2;
    static final long KIND_CREDIT = 3;
    /** Spare slots beyond the credits, for credit-only sends. */
    static final int SPARE = 4;
    static final int MAX_SGE = 16;
    private static final int CREDIT_ONLY = 0x8000_0000;

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
    int sqInUse;
    /** Data chunks posted since the group last collected the count. */
    int postedChunks;

    private final int[] inSlot;
    private final int[] inLen;
    private final int[] inTag;
    private int inHead;
    private int inCount;

    final IntQueue sendQ = new IntQueue();
    final IntQueue recvQ = new IntQueue();
    private long sendOff;
    private long recvOff;

    private final DataSegment[] gather = new DataSegment[MAX_SGE];
    private final DataSegment[] recvSegment = {new DataSegment()};

    Channel(final int peer, final QueuePair qp, final int sqDepth, final MemorySegment slots, final long slotAddress,
            final int slotKey, final int slotBytes, final int dataSlots) {
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
        final int n = dataSlots + SPARE;
        inSlot = new int[n];
        inLen = new int[n];
        inTag = new int[n];
        for (int i = 0; i < MAX_SGE; i++) {
            gather[i] = new DataSegment();
        }
    }

    static int slotsPerPeer(final int dataSlots) {
        return dataSlots + SPARE;
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
     * A chunk arrived in a slot.
     *
     * @return true if it carried data and waits to be consumed
     */
    boolean arrived(final int slot, final int length, final int immediate) {
        credits += immediate >>> 16 & 0x7fff;
        if ((immediate & CREDIT_ONLY) != 0) {
            postRecv(slot);
            return false;
        }
        if (inCount == inSlot.length) {
            throw new IllegalStateException("peer " + peer + " overran its credits");
        }
        final int at = (inHead + inCount) % inSlot.length;
        inSlot[at] = slot;
        inLen[at] = length;
        inTag[at] = immediate & 0xffff;
        inCount++;
        return true;
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
            if (inTag[inHead] != (tag & 0xffff)) {
                throw new IllegalStateException("peer " + peer + " sent collective " + inTag[inHead] + ", expected "
                    + (tag & 0xffff) + ": the members posted different collectives");
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
                done++;
            }
        }
        return done;
    }

    private void scatter(final Schedule s, final int op, final long at, final long slotOff, final int len) {
        long skip = at;
        long from = slotOff;
        int left = len;
        for (int b = s.first[op], end = b + s.count[op]; b < end && left > 0; b++) {
            final int bl = s.blockLen[b];
            if (skip >= bl) {
                skip -= bl;
                continue;
            }
            final int n = (int) Math.min(bl - skip, left);
            MemorySegment.copy(slots, from, s.segs[s.blockBuf[b]], s.blockOff[b] + skip, n);
            from += n;
            left -= n;
            skip = 0;
        }
    }

    /**
     * Posts as many chunks of the queued sends as credits and the send queue allow, then a credit-only send if
     * half the slots are owed.
     *
     * @return how many send operations were fully posted
     */
    int pumpSends(final Schedule s, final int tag) {
        int done = 0;
        while (!sendQ.isEmpty() && credits > 0 && sqInUse < sqDepth) {
            final int op = sendQ.peek();
            final long total = s.total[op];
            final int n = gatherChunk(s, op, sendOff, (int) Math.min(slotBytes, total - sendOff));
            final int imm = Math.min(toReturn, 0x7fff) << 16 | tag & 0xffff;
            qp.send(id(KIND_SEND, peer, 0), gather, sgeCount, WrFlags.IMMEDIATE, imm);
            toReturn -= Math.min(toReturn, 0x7fff);
            credits--;
            sqInUse++;
            postedChunks++;
            sendOff += n;
            if (sendOff == total) {
                sendQ.poll();
                sendOff = 0;
                done++;
            }
        }
        if (toReturn >= threshold && sqInUse < sqDepth) {
            final int give = Math.min(toReturn, 0x7fff);
            qp.send(id(KIND_CREDIT, peer, 0), gather, 0, WrFlags.IMMEDIATE, CREDIT_ONLY | give << 16);
            toReturn -= give;
            sqInUse++;
        }
        return done;
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
    }
}
