package io.jdet.internal.collective;

import io.jdet.internal.protocol.Region;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One collective as rounds of operations, kept in growable primitive arrays so that a group reuses one schedule.
 * A round's sends and receives run concurrently; its local copies and reductions run once its receives are done
 * and its sends posted, and the next round starts then, unless they, or the next round's receives and early
 * copies, would write bytes that a zero-copy send not yet acknowledged still reads (a retransmission reads them
 * again): then both wait for the acknowledgements. A receive that the send's own peer writes by rendezvous is
 * exempt (the peer holds the send before it can write). A collective completes once every send is acknowledged.
 * A message is a list of blocks (buffer, offset, length), gathered when sent and scattered when received. A buffer
 * is a caller's segment inside its region's memory: the offsets callers give are from the segment's start, and a
 * block keeps its offset in the region's memory ({@link #blockOff}), which {@link #segs} holds.
 */
final class Schedule {
    static final byte SEND = 0;
    static final byte RECV = 1;
    static final byte COPY = 2;
    static final byte REDUCE = 3;
    /** A local copy run as soon as its round's transfers are posted, while they are in flight. */
    static final byte EARLY_COPY = 4;

    /** Each buffer's region memory, that memory's address, and the buffer's local key and start in that memory. */
    MemorySegment[] segs = new MemorySegment[8];
    long[] addrs = new long[8];
    int[] keys = new int[8];
    /** Each buffer's region, where known (null for memory no region holds, in tests): a rendezvous grants it. */
    Region[] owners = new Region[8];
    private long[] starts = new long[8];
    int buffers;

    int[] blockBuf = new int[32];
    long[] blockOff = new long[32];
    int[] blockLen = new int[32];
    int blocks;

    byte[] kind = new byte[32];
    int[] peer = new int[32];
    int[] first = new int[32];
    int[] count = new int[32];
    long[] total = new long[32];
    int ops;

    int[] roundStart = new int[16];
    int rounds;

    void reset() {
        Arrays.fill(segs, 0, buffers, null);
        Arrays.fill(owners, 0, buffers, null);
        buffers = 0;
        blocks = 0;
        ops = 0;
        rounds = 0;
        roundStart[0] = 0;
    }

    /**
     * Adds a buffer.
     *
     * @param region  the memory of the region the buffer lies in
     * @param start   where the buffer starts in it
     * @param address the buffer's address
     * @param key     its local key
     * @return the buffer's index
     */
    int buffer(final MemorySegment region, final long start, final long address, final int key) {
        return buffer(null, region, start, address, key);
    }

    /**
     * Adds a buffer of a known region.
     *
     * @param owner   the region (null if none)
     * @param region  the memory of the region the buffer lies in
     * @param start   where the buffer starts in it
     * @param address the buffer's address
     * @param key     its local key
     * @return the buffer's index
     */
    int buffer(final Region owner, final MemorySegment region, final long start, final long address,
               final int key) {
        if (buffers == segs.length) {
            segs = Arrays.copyOf(segs, buffers * 2);
            addrs = Arrays.copyOf(addrs, buffers * 2);
            keys = Arrays.copyOf(keys, buffers * 2);
            owners = Arrays.copyOf(owners, buffers * 2);
            starts = Arrays.copyOf(starts, buffers * 2);
        }
        segs[buffers] = region;
        addrs[buffers] = address - start;
        keys[buffers] = key;
        owners[buffers] = owner;
        starts[buffers] = start;
        return buffers++;
    }

    private int op(final byte k, final int p) {
        if (ops == kind.length) {
            final int n = ops * 2;
            kind = Arrays.copyOf(kind, n);
            peer = Arrays.copyOf(peer, n);
            first = Arrays.copyOf(first, n);
            count = Arrays.copyOf(count, n);
            total = Arrays.copyOf(total, n);
        }
        kind[ops] = k;
        peer[ops] = p;
        first[ops] = blocks;
        count[ops] = 0;
        total[ops] = 0;
        return ops++;
    }

    /** Starts a message to a peer; add its blocks with {@link #block}. */
    Schedule send(final int to) {
        op(SEND, to);
        return this;
    }

    /** Starts a message from a peer; add its blocks with {@link #block}. */
    Schedule recv(final int from) {
        op(RECV, from);
        return this;
    }

    /** Adds bytes to the last message, merged with the previous block when they are adjacent. */
    Schedule block(final int buf, final long off, final long len) {
        final int o = ops - 1;
        if (len == 0) {
            return this;
        }
        total[o] += len;
        if (count[o] > 0) {
            final int b = blocks - 1;
            if (blockBuf[b] == buf && blockOff[b] + blockLen[b] == starts[buf] + off
                && blockLen[b] + len <= Integer.MAX_VALUE) {
                blockLen[b] += (int) len;
                return this;
            }
        }
        addBlock(buf, off, len);
        count[o]++;
        return this;
    }

    private void addBlock(final int buf, final long off, final long len) {
        if (blocks == blockBuf.length) {
            final int n = blocks * 2;
            blockBuf = Arrays.copyOf(blockBuf, n);
            blockOff = Arrays.copyOf(blockOff, n);
            blockLen = Arrays.copyOf(blockLen, n);
        }
        blockBuf[blocks] = buf;
        blockOff[blocks] = starts[buf] + off;
        blockLen[blocks] = (int) len;
        blocks++;
    }

    /** A local copy, run when the round's transfers are done. */
    void copy(final int srcBuf, final long srcOff, final int dstBuf, final long dstOff, final long len) {
        local(COPY, srcBuf, srcOff, dstBuf, dstOff, len);
    }

    /**
     * A local copy run once the round's transfers are posted, while they are in flight, instead of after them: for a
     * copy (a member's own block) that no transfer of its round reads at its destination or writes at either end,
     * so that it overlaps the wait for the peers instead of adding to it.
     */
    void copyEarly(final int srcBuf, final long srcOff, final int dstBuf, final long dstOff, final long len) {
        local(EARLY_COPY, srcBuf, srcOff, dstBuf, dstOff, len);
    }

    /** A local reduction of src into dst, run when the round's transfers are done. */
    void reduce(final int srcBuf, final long srcOff, final int dstBuf, final long dstOff, final long len) {
        local(REDUCE, srcBuf, srcOff, dstBuf, dstOff, len);
    }

    private void local(final byte k, final int srcBuf, final long srcOff, final int dstBuf, final long dstOff,
                       final long len) {
        if (len == 0 || k != REDUCE && srcBuf == dstBuf && srcOff == dstOff) {
            return;
        }
        final int o = op(k, -1);
        addBlock(srcBuf, srcOff, len);
        addBlock(dstBuf, dstOff, len);
        count[o] = 2;
        total[o] = len;
    }

    /**
     * Where block {@code b} lies: its address.
     *
     * @param b the block
     * @return the address of its first byte
     */
    long address(final int b) {
        return addrs[blockBuf[b]] + blockOff[b];
    }

    /**
     * Whether a block of operation {@code op} (for a local operation: its source or its destination) shares a byte
     * with {@code [from, from + length)}.
     */
    boolean overlaps(final int op, final long from, final long length) {
        for (int b = first[op], end = b + count[op]; b < end; b++) {
            final long at = address(b);
            if (at < from + length && from < at + blockLen[b]) {
                return true;
            }
        }
        return false;
    }

    /** Ends the current round. */
    void round() {
        if (rounds + 2 > roundStart.length) {
            roundStart = Arrays.copyOf(roundStart, roundStart.length * 2);
        }
        rounds++;
        roundStart[rounds] = ops;
    }

    /** Ends the last round if it holds operations. */
    void finish() {
        if (ops > roundStart[rounds]) {
            round();
        }
    }
}
