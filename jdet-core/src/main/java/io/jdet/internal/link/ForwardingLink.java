package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * A link that hands every call to another: the base of the wrappers that add to a carrying link (fault injection,
 * capture), which override only what they change. Same threading as the wrapped link.
 */
public abstract class ForwardingLink implements Link {
    /** The link that really carries the frames. */
    protected final Link inner;

    /**
     * Wraps a link.
     *
     * @param inner the link that carries the frames
     */
    protected ForwardingLink(final Link inner) {
        this.inner = inner;
    }

    @Override
    public String address() {
        return inner.address();
    }

    @Override
    public int mtu() {
        return inner.mtu();
    }

    @Override
    public boolean checksummed(final long peer) {
        return inner.checksummed(peer);
    }

    @Override
    public long resolve(final String address) {
        return inner.resolve(address);
    }

    @Override
    public String describe(final long peer) {
        return inner.describe(peer);
    }

    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        return inner.send(peer, header, headerLength, payload);
    }

    @Override
    public void settle() {
        inner.settle();
    }

    @Override
    public void flush() {
        inner.flush();
    }

    @Override
    public void push() {
        inner.push();
    }

    @Override
    public boolean inputWaiting() {
        return inner.inputWaiting();
    }

    @Override
    public int receive(final FrameHandler handler, final int max) {
        return inner.receive(handler, max);
    }

    @Override
    public void cork() {
        inner.cork();
    }

    @Override
    public void uncork() {
        inner.uncork();
    }

    @Override
    public void uncorkHolding() {
        inner.uncorkHolding();
    }

    @Override
    public void await(final int waiter, final long timeoutNs) {
        inner.await(waiter, timeoutNs);
    }

    @Override
    public void wakeup(final int waiter) {
        inner.wakeup(waiter);
    }

    @Override
    public void addCounters(final Map<String, Long> counters) {
        inner.addCounters(counters);
    }

    @Override
    public void close() {
        inner.close();
    }
}
