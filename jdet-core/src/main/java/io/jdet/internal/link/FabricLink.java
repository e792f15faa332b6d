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
 * corrupt a frame, so frames carry no CRC ({@link #checksummed()}) unless fault injection corrupts them on purpose.
 * Its address is {@code loop:<fabric>/<number>}.
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
    public boolean checksummed() {
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

    @Override
    public boolean mayHaveInput() {
        return !ring.isEmpty();
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
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        settle();
        fabric.leave(id);
        ring.close();
    }
}
