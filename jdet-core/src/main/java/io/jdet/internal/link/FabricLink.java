package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * The in-process link: a NIC on a named {@link Fabric}. Sending copies the frame's header into the receiving NIC's
 * {@link FrameRing}, and its payload too unless it is one large piece of lent registered memory: then the slot
 * carries a reference, and the receiving engine copies the payload once, straight from the sender's memory into
 * the target ({@link FrameHandler#takesPayloadApart()}). {@link #settle()} copies what is still lent into the
 * slots when the sender needs its memory back. A full ring pushes back ({@link #send} returns false) instead of dropping. Memory cannot
 * corrupt a frame, so frames carry no CRC ({@link #checksummed}) unless fault injection corrupts them on purpose.
 * Its address is {@code loop:<fabric>/<number>}.
 *
 * <p>Between {@link #cork} and {@link #uncork} (a post, an engine pass) small frames bound for the same peer are
 * staged in the link and leave together, in one slot of the peer's ring ({@link FrameRing#offerBatch}): a burst of
 * small messages then costs one claim, one publication and one wake-up of the receiver, as frames sharing a datagram
 * do over UDP. The first frame of a batch with nothing staged and no company announced goes at once, alone, so that a
 * lone message (a ping-pong) pays no staging copy; the frames after it in the batch are staged, and so are those of a
 * batch that follows a post flagged {@code MORE} ({@link #uncorkHolding}, which also leaves what is staged for the
 * next post). A frame that lends its payload, or a frame of {@link FrameRing#LEND_MIN} bytes or more, goes into a
 * slot of its own, after what is staged for its peer.
 */
public final class FabricLink implements Link {
    private final Fabric fabric;
    private final int id;
    private final int mtu;
    private final FrameRing ring;
    /** Whether this endpoint seals its frames (and the receiver checks them). */
    private final boolean crc;
    private final FrameCrc rxCrc = new FrameCrc();
    /** Inbound frames dropped, by cause: see {@link FrameRing#drain}. */
    private final long[] rxDrops = new long[2];
    /**
     * Whether a frame sent since the last {@link #settle} may have lent its payload: a settle with nothing lent
     * skips the scan of every ring on the fabric. Volatile, since closing may run without the engine lock.
     */
    private volatile boolean lentSinceSettle;
    private long peerGone;
    private long sendErrors;
    private boolean closed;
    /** The batch of small frames (written on every post: padded, see {@link Staging.Batch}). Allocated last. */
    private final Staging.Batch tx;

    /**
     * Attaches a new endpoint to a fabric.
     *
     * @param fabricName the fabric's name
     * @param mtu        the frame size limit wanted; a fabric keeps the size its first NIC asked for, and every
     *                   later NIC adopts it, so that every ring slot holds every frame any peer sends
     * @param ringFrames the inbound ring size, a power of two
     * @throws IllegalArgumentException if the ring cannot be made (see {@link FrameRing}); nothing is left attached
     */
    public FabricLink(final String fabricName, final int mtu, final int ringFrames) {
        this(fabricName, mtu, ringFrames, true);
    }

    /**
     * Attaches a new endpoint to a fabric, saying whether its frames carry a CRC.
     *
     * @param fabricName  the fabric's name
     * @param mtu         the frame size limit wanted (see {@link #FabricLink(String, int, int)})
     * @param ringFrames  the inbound ring size, a power of two
     * @param checksummed whether the engine seals this endpoint's frames: only when fault injection corrupts them
     * @throws IllegalArgumentException if the ring cannot be made; nothing is left attached
     */
    public FabricLink(final String fabricName, final int mtu, final int ringFrames, final boolean checksummed) {
        this.crc = checksummed;
        final Fabric.Membership membership = Fabric.join(fabricName, mtu);
        this.fabric = membership.fabric();
        this.id = membership.id();
        this.mtu = fabric.mtu();
        try {
            this.ring = new FrameRing(ringFrames, this.mtu);
            this.tx = new Staging.Batch(this.mtu);
        } catch (final RuntimeException | Error e) {
            fabric.leave(id);
            throw e;
        }
        fabric.publish(id, this);
    }

    @Override
    public String address() {
        return "loop:" + fabric.name() + "/" + id;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    @Override
    public boolean checksummed(final long peer) {
        return crc;
    }

    @Override
    public long resolve(final String address) {
        final String prefix = "loop:" + fabric.name() + "/";
        if (address == null || !address.startsWith(prefix)) {
            return -1;
        }
        try {
            final int peer = Integer.parseInt(address.substring(prefix.length()));
            return fabric.endpoint(peer) != null ? peer : -1;
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    @Override
    public String describe(final long peer) {
        return "loop:" + fabric.name() + "/" + peer;
    }

    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        final int length = headerLength + payload.totalLength();
        if (tx.corked > 0 && length < FrameRing.LEND_MIN && length <= mtu) {
            if (tx.stages()) {
                return stage(peer, header, headerLength, payload, length);
            }
            // This one goes alone, now; once it is in the ring, the frames after it in the batch are staged.
            return tx.sentAlone(sendAlone(peer, header, headerLength, payload));
        }
        if (tx.frames > 0 && !publishStaged() && tx.peer == peer) {
            return false; // what is staged for this peer leaves first, in order; its ring has no room now
        }
        return sendAlone(peer, header, headerLength, payload);
    }

    /** Sends a frame in a slot of its own (what is staged for another peer may wait: order is kept per peer). */
    private boolean sendAlone(final long peer, final MemorySegment header, final int headerLength,
                              final FrameGather payload) {
        final FabricLink target = fabric.endpoint(peer);
        if (target == null) {
            peerGone++;
            return true;
        }
        if (!lentSinceSettle && FrameRing.lends(crc, payload)) {
            lentSinceSettle = true; // before the offer: a settle that starts after it sees the frame in the ring
        }
        try {
            return target.ring.offer(id, crc, header, headerLength, payload);
        } catch (final IllegalStateException | WrongThreadException sourceUnusable) {
            // The frame's memory was closed (or is confined to another thread): the ring published the slot as
            // aborted, and the frame is lost, as on a wire; the protocol retransmits or gives up.
            sendErrors++;
            return true;
        }
    }

    /**
     * Appends a frame to the staging, after publishing what is staged for another peer or what leaves it no room.
     * When the other peer's ring is full, its frames stay staged and this one goes alone, so that a peer that stops
     * taking frames holds up no other.
     *
     * @return false if the frame's own peer's ring is full and the staging has no room (the caller retries later)
     */
    private boolean stage(final long peer, final MemorySegment header, final int headerLength,
                          final FrameGather payload, final int length) {
        if (tx.frames > 0 && peer != tx.peer && !publishStaged()) {
            return sendAlone(peer, header, headerLength, payload);
        }
        if (tx.full(length) && !publishStaged()) {
            return false;
        }
        try {
            tx.append(peer, mtu, header, headerLength, payload, length);
        } catch (final IllegalStateException | WrongThreadException sourceUnusable) {
            sendErrors++; // the frame's memory was closed: lost, as on a wire (see send); nothing was staged
        }
        return true;
    }

    /**
     * Publishes the staged frames in one slot of their peer's ring (dropped, and counted, if the peer has gone).
     *
     * @return false if the ring is full: they stay staged
     */
    private boolean publishStaged() {
        final FabricLink target = fabric.endpoint(tx.peer);
        if (target == null) {
            peerGone += tx.frames;
            tx.clear();
        } else if (target.ring.offerBatch(id, crc, tx.staging, tx.first, tx.end)) {
            tx.published();
        } else {
            return false;
        }
        return true;
    }

    @Override
    public void cork() {
        tx.cork();
    }

    @Override
    public void uncork() {
        if (tx.uncork()) {
            publishStaged(); // a full ring keeps them staged: the next send, uncork or flush tries again
        }
    }

    @Override
    public void uncorkHolding() {
        tx.uncorkHolding();
    }

    @Override
    public void push() {
        if (tx.frames > 0) {
            publishStaged(); // a full ring keeps them staged: the next send, uncork or flush tries again
        }
    }

    @Override
    public void flush() {
        if (tx.flushes()) {
            publishStaged();
        }
    }

    /**
     * Copies into the rings the payload of every frame this endpoint lent and its receiver has not consumed yet,
     * on every endpoint of the fabric (this one included, for a NIC that talks to itself). Raises nothing.
     */
    @Override
    public void settle() {
        // Inside a frame handler (the engine drains this ring), waiting for another consumer could deadlock: one
        // in the middle of reading a lent frame finishes it within its own handler call instead.
        if (!lentSinceSettle) {
            return;
        }
        lentSinceSettle = false;
        final boolean wait = !ring.consuming();
        for (final FabricLink endpoint : fabric.endpoints()) {
            if (endpoint != null) {
                endpoint.ring.settle(id, wait);
            }
        }
    }

    /** A frame waits in the ring: {@link Link#inputWaiting}. */
    @Override
    public boolean inputWaiting() {
        return !ring.isEmpty();
    }

    /**
     * Whether a frame waits in the ring, or frames wait staged (held by a post flagged MORE, or for room in a full
     * peer ring): a poll that finds its queue empty skips its engine pass only when this is false (NicImpl's idle
     * passes), and the pass is what sends them (WrFlags.MORE: they go at the next engine pass), which a lock release
     * ({@link #flush}) leaves staged. Any thread (a racy read of the batch state only makes a poll run or skip one
     * pass).
     */
    @Override
    public boolean mayHaveInput() {
        return tx.frames > 0 || !ring.isEmpty();
    }

    @Override
    public int receive(final FrameHandler handler, final int max) {
        return ring.drain(handler, max, rxCrc, rxDrops);
    }

    @Override
    public void await(final int waiter, final long timeoutNs) {
        ring.await(waiter, timeoutNs);
    }

    @Override
    public void wakeup(final int waiter) {
        ring.wakeup(waiter);
    }

    @Override
    public void addCounters(final Map<String, Long> counters) {
        counters.merge("link.rx.bad_crc", rxDrops[FrameRing.BAD_CRC], Long::sum);
        counters.merge("link.rx.aborted", rxDrops[FrameRing.ABORTED], Long::sum);
        counters.merge("link.tx.peer_gone", peerGone, Long::sum);
        counters.merge("link.tx.errors", sendErrors, Long::sum);
        counters.merge("link.tx.batches", tx.batches, Long::sum);
        counters.merge("link.tx.batched_frames", tx.batchedFrames, Long::sum);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // What a post flagged MORE left behind leaves before the NIC does; a full ring drops it, here and now: the
        // lock release that follows a NIC's close flushes the link, and nothing may leave a closed endpoint.
        if (tx.frames > 0 && !publishStaged()) {
            sendErrors += tx.frames;
        }
        tx.clear();
        settle();
        fabric.leave(id);
        ring.close();
    }
}
