package io.jdet.internal.collective;

import io.jdet.CollectiveTuning;

/**
 * Builds the schedule of a collective with the algorithm its size and the group size call for (MPICH's choices and
 * switch points, Thakur, Rabenseifner and Gropp 2005): dissemination barrier; binomial broadcast, or binomial
 * scatter then recursive-doubling or ring all-gather for long messages; binomial scatter, gather and reduce; linear
 * scatterv, gatherv and alltoallv; recursive-doubling, Bruck or ring all-gather; Bruck, all-at-once or pairwise
 * all-to-all; recursive-doubling or ring (reduce-scatter plus all-gather) all-reduce.
 */
final class Algorithms {
    /** Gives a scratch buffer of at least the asked bytes, registered, as a buffer index of the schedule. */
    interface Scratch {
        int scratch(Schedule s, long bytes);
    }

    private final Schedule s;
    private final int r;
    private final int p;
    private final CollectiveTuning t;
    private final Scratch scratch;
    /** The allgather's blocks (buffer, offset, length per member) and the allreduce's chunk offsets, reused. */
    private final int[] blockBuf;
    private final long[] blockOff;
    private final long[] blockLen;
    private final long[] chunkOff;
    /** An all-reduce's src while its first round is built (its sends read it), else -1. */
    private int firstSendBuf = -1;

    /**
     * A member's schedule builder, made once per group and reused for every collective, so that building a
     * schedule allocates nothing.
     *
     * @param s       the schedule it fills
     * @param rank    the member's rank
     * @param size    the group's size
     * @param t       the switch points
     * @param scratch where scratch memory comes from
     */
    Algorithms(final Schedule s, final int rank, final int size, final CollectiveTuning t, final Scratch scratch) {
        this.s = s;
        this.r = rank;
        this.p = size;
        this.t = t;
        this.scratch = scratch;
        this.blockBuf = new int[size];
        this.blockOff = new long[size];
        this.blockLen = new long[size];
        this.chunkOff = new long[size + 1];
    }

    /** Builds one collective into a fresh schedule (for tests; a group keeps its {@link Algorithms}). */
    static void build(final Schedule s, final Request q, final int rank, final int size, final CollectiveTuning t,
                      final Scratch scratch) {
        new Algorithms(s, rank, size, t, scratch).build(q);
    }

    /**
     * Replaces the schedule's contents with one collective's rounds.
     *
     * @param q the collective
     * @throws IllegalStateException for a type that has no schedule
     */
    void build(final Request q) {
        s.reset();
        switch (q.type) {
            case BARRIER -> barrier();
            case BCAST -> bcast(q);
            case SCATTER -> scatter(q);
            case SCATTERV -> scatterv(q);
            case GATHER -> gather(q);
            case GATHERV -> gatherv(q);
            case ALLGATHER, ALLGATHERV -> allgather(q);
            case ALLTOALL -> alltoall(q);
            case ALLTOALLV -> alltoallv(q);
            case ALLREDUCE -> allreduce(q);
            case REDUCE -> reduce(q);
            default -> throw new IllegalStateException("no schedule for " + q.type);
        }
        s.finish();
    }

    private int buf(final Buf b) {
        return s.buffer(b.owner(), b.region(), b.offset(), b.addr(), b.key());
    }

    private int abs(final int relative, final int root) {
        return (relative + root) % p;
    }

    private int mod(final int v) {
        return ((v % p) + p) % p;
    }

    /** Whether two buffers share no byte. */
    private static boolean apart(final Buf a, final Buf b) {
        return a.length() == 0 || b.length() == 0
            || Long.compareUnsigned(a.addr(), b.addr() + b.length()) >= 0
            || Long.compareUnsigned(b.addr(), a.addr() + a.length()) >= 0;
    }

    private static boolean powerOfTwo(final int v) {
        return Integer.bitCount(v) == 1;
    }

    // ------------------------------------------------------------------ barrier

    private void barrier() {
        for (int d = 1; d < p; d <<= 1) {
            s.send(mod(r + d));
            s.recv(mod(r - d));
            s.round();
        }
    }

    // ------------------------------------------------------------------ bcast

    private void bcast(final Request q) {
        final int b = buf(q.dst);
        final long n = q.dst.length();
        final int vr = mod(r - q.root);
        if (n < t.bcastShortMsg() || p < t.bcastMinProcs()) {
            int mask = 1;
            while (mask < p) {
                if ((vr & mask) != 0) {
                    s.recv(abs(vr - mask, q.root)).block(b, 0, n);
                    s.round();
                    break;
                }
                mask <<= 1;
            }
            for (mask >>= 1; mask > 0; mask >>= 1) {
                if (vr + mask < p) {
                    s.send(abs(vr + mask, q.root)).block(b, 0, n);
                }
            }
            return;
        }
        final long chunk = (n + p - 1) / p;
        // binomial scatter of the relative blocks
        int mask = 1;
        while (mask < p) {
            if ((vr & mask) != 0) {
                range(s.recv(abs(vr - mask, q.root)), b, vr, vr + mask, chunk, n);
                s.round();
                break;
            }
            mask <<= 1;
        }
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (vr + mask < p) {
                range(s.send(abs(vr + mask, q.root)), b, vr + mask, vr + 2 * mask, chunk, n);
            }
        }
        s.round();
        // all-gather of the blocks
        if (n < t.bcastLongMsg() && powerOfTwo(p)) {
            for (mask = 1; mask < p; mask <<= 1) {
                final int partner = vr ^ mask;
                final int mine = vr & ~(mask - 1);
                final int theirs = partner & ~(mask - 1);
                if (partner != 0) { // the root holds every block already: nothing goes to it
                    range(s.send(abs(partner, q.root)), b, mine, mine + mask, chunk, n);
                }
                if (vr != 0) {
                    range(s.recv(abs(partner, q.root)), b, theirs, theirs + mask, chunk, n);
                }
                s.round();
            }
        } else {
            for (int i = 0; i < p - 1; i++) {
                final int out = mod(vr - i);
                final int in = mod(vr - i - 1);
                if (vr != p - 1) {
                    range(s.send(abs(vr + 1, q.root)), b, out, out + 1, chunk, n);
                }
                if (vr != 0) {
                    range(s.recv(abs(vr - 1 + p, q.root)), b, in, in + 1, chunk, n);
                }
                s.round();
            }
        }
    }

    /** Adds relative blocks [from, to) (clipped to the group and the length) to the last message. */
    private void range(final Schedule msg, final int b, final int from, final int to, final long chunk,
                       final long n) {
        final long lo = Math.min((long) from * chunk, n);
        final long hi = Math.min((long) Math.min(to, p) * chunk, n);
        msg.block(b, lo, hi - lo);
    }

    // ------------------------------------------------------------------ scatter / gather

    private int subtree(final int vr) {
        return vr == 0 ? p : Math.min(Integer.lowestOneBit(vr), p - vr);
    }

    private void scatter(final Request q) {
        final int vr = mod(r - q.root);
        final int sub = subtree(vr);
        if (vr == 0) {
            final int src = buf(q.src);
            final long blk = q.src.length() / p;
            for (int mask = Integer.highestOneBit(Math.max(1, p - 1)); mask > 0; mask >>= 1) {
                if (mask < p) {
                    final Schedule m = s.send(abs(mask, q.root));
                    for (int c = mask; c < Math.min(2 * mask, p); c++) {
                        m.block(src, (long) abs(c, q.root) * blk, blk);
                    }
                }
            }
            if (q.dst != null) {
                s.copy(src, (long) r * blk, buf(q.dst), 0, blk);
            }
            return;
        }
        final long blk = q.dst.length();
        final int dst = buf(q.dst);
        if (sub == 1) {
            s.recv(abs(vr - Integer.lowestOneBit(vr), q.root)).block(dst, 0, blk);
            return;
        }
        final int tmp = scratch.scratch(s, sub * blk);
        s.recv(abs(vr - Integer.lowestOneBit(vr), q.root)).block(tmp, 0, sub * blk);
        s.round();
        for (int mask = Integer.lowestOneBit(vr) >> 1; mask > 0; mask >>= 1) {
            if (vr + mask < p) {
                final int end = Math.min(vr + 2 * mask, p);
                s.send(abs(vr + mask, q.root)).block(tmp, mask * blk, (end - vr - mask) * blk);
            }
        }
        s.copy(tmp, 0, dst, 0, blk);
    }

    private void gather(final Request q) {
        final int vr = mod(r - q.root);
        final int sub = subtree(vr);
        if (vr == 0) {
            final int dst = buf(q.dst);
            final long blk = q.dst.length() / p;
            for (int mask = 1; mask < p; mask <<= 1) {
                final Schedule m = s.recv(abs(mask, q.root));
                for (int c = mask; c < Math.min(2 * mask, p); c++) {
                    m.block(dst, (long) abs(c, q.root) * blk, blk);
                }
            }
            if (q.src != null) {
                s.copy(buf(q.src), 0, dst, (long) r * blk, blk);
            }
            return;
        }
        final long blk = q.src.length();
        final int src = buf(q.src);
        final int parent = abs(vr - Integer.lowestOneBit(vr), q.root);
        if (sub == 1) {
            s.send(parent).block(src, 0, blk);
            return;
        }
        final int tmp = scratch.scratch(s, sub * blk);
        for (int mask = 1; mask < Integer.lowestOneBit(vr); mask <<= 1) {
            if (vr + mask < p) {
                final int end = Math.min(vr + 2 * mask, p);
                s.recv(abs(vr + mask, q.root)).block(tmp, mask * blk, (end - vr - mask) * blk);
            }
        }
        s.copy(src, 0, tmp, 0, blk);
        s.round();
        s.send(parent).block(tmp, 0, sub * blk);
    }

    private void scatterv(final Request q) {
        if (r == q.root) {
            for (int i = 1; i < p; i++) {
                final int j = mod(r + i);
                s.send(j).block(buf(q.srcV[j]), 0, q.srcV[j].length());
            }
            if (q.dst != null && q.srcV[r] != null) {
                s.copy(buf(q.srcV[r]), 0, buf(q.dst), 0, Math.min(q.dst.length(), q.srcV[r].length()));
            }
            return;
        }
        s.recv(q.root).block(buf(q.dst), 0, q.dst.length());
    }

    private void gatherv(final Request q) {
        if (r == q.root) {
            for (int i = 1; i < p; i++) {
                final int j = mod(r + i);
                s.recv(j).block(buf(q.dstV[j]), 0, q.dstV[j].length());
            }
            if (q.src != null && q.dstV[r] != null) {
                s.copy(buf(q.src), 0, buf(q.dstV[r]), 0, Math.min(q.src.length(), q.dstV[r].length()));
            }
            return;
        }
        s.send(q.root).block(buf(q.src), 0, q.src.length());
    }

    // ------------------------------------------------------------------ allgather

    private void allgather(final Request q) {
        final int[] bb = blockBuf;
        final long[] bo = blockOff;
        final long[] bl = blockLen;
        java.util.Arrays.fill(bo, 0);
        long total = 0;
        if (q.dstV == null) {
            final int d = buf(q.dst);
            final long blk = q.dst.length() / p;
            for (int j = 0; j < p; j++) {
                bb[j] = d;
                bo[j] = j * blk;
                bl[j] = blk;
            }
            total = q.dst.length();
        } else {
            for (int j = 0; j < p; j++) {
                bb[j] = buf(q.dstV[j]);
                bl[j] = q.dstV[j].length();
                total += bl[j];
            }
        }
        // This member's own block goes from src to its place while the first step's transfers are in flight; that
        // step sends it (in all three algorithms the first step sends this member's block alone) from src, and no
        // step receives into it.
        final int own = q.src != null ? buf(q.src) : -1;
        if (own >= 0) {
            s.copyEarly(own, 0, bb[r], bo[r], bl[r]);
        }
        if (powerOfTwo(p) && total < t.allgatherLongMsg()) {
            for (int mask = 1; mask < p; mask <<= 1) {
                final int partner = r ^ mask;
                sendOwnOr(s.send(partner), own, bl[r], mask == 1, bb, bo, bl, r & ~(mask - 1), mask);
                blocks(s.recv(partner), bb, bo, bl, partner & ~(mask - 1), mask);
                s.round();
            }
        } else if (total < t.allgatherShortMsg()) {
            for (int d = 1; d < p; d <<= 1) {
                final int c = Math.min(d, p - d);
                sendOwnOr(s.send(mod(r - d)), own, bl[r], d == 1, bb, bo, bl, r, c);
                blocks(s.recv(mod(r + d)), bb, bo, bl, r + d, c);
                s.round();
            }
        } else {
            for (int i = 0; i < p - 1; i++) {
                sendOwnOr(s.send(mod(r + 1)), own, bl[r], i == 0, bb, bo, bl, r - i, 1);
                blocks(s.recv(mod(r - 1)), bb, bo, bl, r - i - 1, 1);
                s.round();
            }
        }
    }

    /** The first step's message from src (this member's block alone), or the blocks from the destination. */
    private void sendOwnOr(final Schedule m, final int own, final long ownLen, final boolean first, final int[] bb,
                           final long[] bo, final long[] bl, final int from, final int count) {
        if (first && own >= 0) {
            m.block(own, 0, ownLen);
        } else {
            blocks(m, bb, bo, bl, from, count);
        }
    }

    /** Adds blocks from, from + 1, ..., from + count - 1 (mod p) to the last message. */
    private void blocks(final Schedule m, final int[] bb, final long[] bo, final long[] bl, final int from,
                        final int count) {
        for (int k = 0; k < count; k++) {
            final int j = mod(from + k);
            m.block(bb[j], bo[j], bl[j]);
        }
    }

    // ------------------------------------------------------------------ alltoall

    private void alltoall(final Request q) {
        final int src = buf(q.src);
        final int dst = buf(q.dst);
        final long blk = q.src.length() / p;
        if (blk <= t.alltoallShortMsg() && p >= t.alltoallMinProcs()) {
            final long n = q.src.length();
            final int tmp = scratch.scratch(s, 2 * n);
            final long in = n;
            s.copy(src, r * blk, tmp, 0, (p - r) * blk);
            s.copy(src, 0, tmp, (p - r) * blk, r * blk);
            s.round();
            for (int d = 1; d < p; d <<= 1) {
                final Schedule out = s.send(mod(r + d));
                for (int i = 0; i < p; i++) {
                    if ((i & d) != 0) {
                        out.block(tmp, i * blk, blk);
                    }
                }
                final Schedule got = s.recv(mod(r - d));
                for (int i = 0; i < p; i++) {
                    if ((i & d) != 0) {
                        got.block(tmp, in + i * blk, blk);
                    }
                }
                for (int i = 0; i < p; i++) {
                    if ((i & d) != 0) {
                        s.copy(tmp, in + i * blk, tmp, i * blk, blk);
                    }
                }
                s.round();
            }
            for (int i = 0; i < p; i++) {
                s.copy(tmp, i * blk, dst, mod(r - i) * blk, blk);
            }
            return;
        }
        s.copyEarly(src, r * blk, dst, r * blk, blk); // no transfer touches this member's own block
        final boolean pairwise = blk > t.alltoallMediumMsg();
        for (int i = 1; i < p; i++) {
            final int to = pairwise && powerOfTwo(p) ? r ^ i : mod(r + i);
            final int from = pairwise && powerOfTwo(p) ? r ^ i : mod(r - i);
            s.send(to).block(src, to * blk, blk);
            s.recv(from).block(dst, from * blk, blk);
            if (pairwise) {
                s.round();
            }
        }
    }

    private void alltoallv(final Request q) {
        s.copy(buf(q.srcV[r]), 0, buf(q.dstV[r]), 0, Math.min(q.srcV[r].length(), q.dstV[r].length()));
        for (int i = 1; i < p; i++) {
            final int to = mod(r + i);
            final int from = mod(r - i);
            s.send(to).block(buf(q.srcV[to]), 0, q.srcV[to].length());
            s.recv(from).block(buf(q.dstV[from]), 0, q.dstV[from].length());
        }
    }

    // ------------------------------------------------------------------ reductions

    private void allreduce(final Request q) {
        final int d = buf(q.dst);
        final long n = q.dst.length();
        // src goes into dst while the first round's transfers are in flight: that round's sends read src instead
        // (the same layout), its receives go to scratch memory, and its reduction runs after the copy. Not when src
        // overlaps dst, which the verb allows: the copy would change bytes of src that a send still reads (by
        // rendezvous, zero copy, or in chunks over several pumps), so it gets a round of its own before any
        // transfer. src the very bytes of dst is in place.
        firstSendBuf = -1;
        if (q.src != null && q.src.addr() != q.dst.addr()) {
            final int src = buf(q.src);
            if (apart(q.src, q.dst)) {
                firstSendBuf = src;
                s.copyEarly(src, 0, d, 0, n);
            } else {
                s.copy(src, 0, d, 0, n);
                s.round();
            }
        }
        final long count = n / 8;
        if (n < t.allreduceShortMsg() || count < p) {
            final int tmp = scratch.scratch(s, n);
            final int pof2 = Integer.highestOneBit(p);
            final int rem = p - pof2;
            int newRank;
            if (r < 2 * rem) {
                if (r % 2 == 0) {
                    s.send(r + 1).block(firstSend(d), 0, n);
                    newRank = -1;
                } else {
                    s.recv(r - 1).block(tmp, 0, n);
                    s.reduce(tmp, 0, d, 0, n);
                    newRank = r / 2;
                }
                endRound();
            } else {
                newRank = r - rem;
            }
            if (newRank != -1) {
                for (int mask = 1; mask < pof2; mask <<= 1) {
                    final int nd = newRank ^ mask;
                    final int peer = nd < rem ? nd * 2 + 1 : nd + rem;
                    s.send(peer).block(firstSend(d), 0, n);
                    s.recv(peer).block(tmp, 0, n);
                    s.reduce(tmp, 0, d, 0, n);
                    endRound();
                }
            }
            if (r < 2 * rem) {
                if (r % 2 == 1) {
                    s.send(r - 1).block(d, 0, n);
                } else {
                    s.recv(r + 1).block(d, 0, n);
                }
                s.round();
            }
            return;
        }
        final long[] off = chunkOff;
        for (int c = 0; c < p; c++) {
            off[c + 1] = off[c] + 8 * (count / p + (c < count % p ? 1 : 0));
        }
        if (powerOfTwo(p) && n < t.allreduceRingMsg()) {
            rabenseifner(d, n, off);
            return;
        }
        final int tmp = scratch.scratch(s, off[1]);
        for (int i = 0; i < p - 1; i++) {
            final int out = mod(r - i);
            final int in = mod(r - i - 1);
            s.send(mod(r + 1)).block(firstSend(d), off[out], off[out + 1] - off[out]);
            s.recv(mod(r - 1)).block(tmp, 0, off[in + 1] - off[in]);
            s.reduce(tmp, 0, d, off[in], off[in + 1] - off[in]);
            endRound();
        }
        for (int i = 0; i < p - 1; i++) {
            final int out = mod(r + 1 - i);
            final int in = mod(r - i);
            s.send(mod(r + 1)).block(d, off[out], off[out + 1] - off[out]);
            s.recv(mod(r - 1)).block(d, off[in], off[in + 1] - off[in]);
            s.round();
        }
    }

    /**
     * Where a send of {@code d}'s bytes reads them: from the all-reduce's src in the first round (whose early copy
     * into {@code d} may not have run yet), from {@code d} after.
     */
    private int firstSend(final int d) {
        return firstSendBuf >= 0 ? firstSendBuf : d;
    }

    /** Ends a round of an all-reduce: only the first reads src. */
    private void endRound() {
        s.round();
        firstSendBuf = -1;
    }

    /**
     * Rabenseifner's all-reduce on a power-of-two group (Thakur, Rabenseifner, Gropp 2005): a reduce-scatter by
     * recursive halving leaves chunk r, reduced, at rank r; an all-gather by recursive doubling spreads the chunks.
     * 2 lg p messages, 2 (p - 1) / p of the data each way.
     */
    private void rabenseifner(final int d, final long n, final long[] off) {
        final int tmp = scratch.scratch(s, Math.max(off[p / 2], n - off[p / 2]));
        int lo = 0;
        int hi = p;
        for (int mask = p >> 1; mask > 0; mask >>= 1) {
            final int partner = r ^ mask;
            final int mid = lo + (hi - lo) / 2;
            final boolean upper = (r & mask) != 0;
            final int sendLo = upper ? lo : mid;
            final int sendHi = upper ? mid : hi;
            lo = upper ? mid : lo;
            hi = upper ? hi : mid;
            s.send(partner).block(firstSend(d), off[sendLo], off[sendHi] - off[sendLo]);
            s.recv(partner).block(tmp, 0, off[hi] - off[lo]);
            s.reduce(tmp, 0, d, off[lo], off[hi] - off[lo]);
            endRound();
        }
        for (int mask = 1; mask < p; mask <<= 1) {
            final int partner = r ^ mask;
            final int width = hi - lo;
            final int theirLo = (r & mask) == 0 ? hi : lo - width;
            s.send(partner).block(d, off[lo], off[hi] - off[lo]);
            s.recv(partner).block(d, off[theirLo], off[theirLo + width] - off[theirLo]);
            s.round();
            lo = Math.min(lo, theirLo);
            hi = lo + 2 * width;
        }
    }

    private void reduce(final Request q) {
        final int vr = mod(r - q.root);
        final long n = (q.src != null ? q.src : q.dst).length();
        final int tmp = scratch.scratch(s, vr == 0 ? n : 2 * n);
        final int acc;
        final long accOff;
        if (vr == 0) {
            acc = buf(q.dst);
            accOff = 0;
            if (q.src != null) {
                s.copy(buf(q.src), 0, acc, 0, n);
            }
        } else {
            acc = tmp;
            accOff = n;
            s.copy(buf(q.src), 0, acc, accOff, n);
        }
        s.round();
        for (int mask = 1; mask < p; mask <<= 1) {
            if ((vr & mask) == 0) {
                final int child = vr | mask;
                if (child < p) {
                    s.recv(abs(child, q.root)).block(tmp, 0, n);
                    s.reduce(tmp, 0, acc, accOff, n);
                    s.round();
                }
            } else {
                s.send(abs(vr & ~mask, q.root)).block(acc, accOff, n);
                s.round();
                break;
            }
        }
    }
}
