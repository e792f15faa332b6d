package io.jdet.internal.link;

import io.jdet.FaultPlan;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Wraps a link and injects faults into the frames it sends, as a {@link FaultPlan} says: loss, duplication,
 * reordering (a frame is held back and sent after the next one) and corruption (a byte flipped after the CRC
 * was computed, so the receiver must drop the frame). Faulty frames are staged in the wrapper's own memory, never
 * in registered memory. Allocation free.
 */
public final class FaultyLink extends ForwardingLink {
    private static final FrameGather EMPTY = new FrameGather(0);

    private final FaultPlan plan;
    private final SplittableRandom random;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment staging;
    private final MemorySegment held;
    private long heldPeer = -1;
    private int heldLength;
    private long dropped;
    private long duplicated;
    private long reordered;
    private long corrupted;

    /**
     * Wraps a link.
     *
     * @param inner the link that really carries the frames
     * @param plan  the faults to inject
     */
    public FaultyLink(final Link inner, final FaultPlan plan) {
        super(inner);
        this.plan = plan;
        this.random = new SplittableRandom(plan.seed());
        this.staging = arena.allocate(inner.mtu(), 8);
        this.held = arena.allocate(inner.mtu(), 8);
    }






    /** Corrupted frames must fail the receiver's CRC check, so every frame carries one while corruption is on. */
    @Override
    public boolean checksummed(final long peer) {
        return plan.corruptRate() > 0 || inner.checksummed(peer);
    }

    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        if (plan.lossRate() > 0 && random.nextDouble() < plan.lossRate()) {
            dropped++;
            return true;
        }
        if (plan.reorderRate() > 0 && heldPeer < 0 && random.nextDouble() < plan.reorderRate()) {
            heldLength = stage(held, header, headerLength, payload);
            heldPeer = peer;
            reordered++;
            return true;
        }
        final boolean sent;
        // A CRC field of 0 reads as "not computed" to a receiver over loopback (docs/PROTOCOL.md, section 4): such a
        // frame (one sealed frame in 2^32) is sent whole rather than corrupted where nothing would check it.
        if (plan.corruptRate() > 0 && random.nextDouble() < plan.corruptRate()
            && !FrameCrc.leftOut(header, headerLength)) {
            final int length = stage(staging, header, headerLength, payload);
            final long at = random.nextInt(length);
            staging.set(ValueLayout.JAVA_BYTE, at,
                (byte) (staging.get(ValueLayout.JAVA_BYTE, at) ^ (1 + random.nextInt(255))));
            corrupted++;
            sent = inner.send(peer, staging, length, EMPTY);
        } else {
            sent = inner.send(peer, header, headerLength, payload);
        }
        if (sent && plan.duplicateRate() > 0 && random.nextDouble() < plan.duplicateRate()) {
            duplicated++;
            inner.send(peer, header, headerLength, payload);
        }
        releaseHeld();
        return sent;
    }

    private static int stage(final MemorySegment into, final MemorySegment header, final int headerLength,
                             final FrameGather payload) {
        MemorySegment.copy(header, 0, into, 0, headerLength);
        payload.copyTo(into, headerLength);
        return headerLength + payload.totalLength();
    }

    private void releaseHeld() {
        if (heldPeer >= 0 && inner.send(heldPeer, held, heldLength, EMPTY)) {
            heldPeer = -1;
        }
    }

    @Override
    public int receive(final FrameHandler handler, final int max) {
        releaseHeld();
        return inner.receive(handler, max);
    }



    @Override
    public void addCounters(final Map<String, Long> counters) {
        inner.addCounters(counters);
        counters.merge("fault.dropped", dropped, Long::sum);
        counters.merge("fault.duplicated", duplicated, Long::sum);
        counters.merge("fault.reordered", reordered, Long::sum);
        counters.merge("fault.corrupted", corrupted, Long::sum);
    }

    @Override
    public void close() {
        try {
            inner.close();
        } finally {
            arena.close();
        }
    }
}
