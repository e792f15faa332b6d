package io.jdet.perf.aeron;

import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import io.jdet.perf.PerfException;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.Spinner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What the Aeron ping-pong and stream share: this end's exclusive publication to the peer and subscription from
 * it, send and receive memory (wrapped by Agrona buffers, with memory-segment views for the verification pattern),
 * and the wait: in poll mode a failed offer or an empty poll spins under the {@link Spinner}'s deadline; in wait
 * mode it first backs off as Aeron's default idle strategy does (spin, yield, park up to 1 ms), Aeron having no
 * blocking receive. The data path allocates nothing.
 */
abstract class AeronIo implements AutoCloseable {
    protected final ExclusivePublication publication;
    protected final Subscription subscription;
    protected final int size;
    protected final boolean verify;
    protected final Pattern pattern;
    protected final Spinner spinner;
    protected final MemorySegment sendMemory;
    protected final MemorySegment recvMemory;
    protected final UnsafeBuffer sendBuffer;
    protected final UnsafeBuffer recvBuffer;
    private final IdleStrategy backoff;
    private final Arena arena = Arena.ofShared();
    private final String label;
    protected long polls;

    AeronIo(final AeronLink link, final int size, final boolean waitMode, final boolean verify,
            final Pattern pattern, final Spinner spinner, final String label) {
        this.publication = link.publication();
        this.subscription = link.subscription();
        this.size = size;
        this.verify = verify;
        this.pattern = pattern;
        this.spinner = spinner;
        this.label = label;
        this.backoff = waitMode ? new BackoffIdleStrategy() : null;
        this.sendMemory = arena.allocate(Math.max(size, Long.BYTES), 64);
        this.recvMemory = arena.allocate(Math.max(size, Long.BYTES), 64);
        this.sendBuffer = new UnsafeBuffer(sendMemory.address(), (int) sendMemory.byteSize());
        this.recvBuffer = new UnsafeBuffer(recvMemory.address(), (int) recvMemory.byteSize());
    }

    /**
     * Offers {@code length} bytes of the send buffer, waiting out back pressure.
     *
     * @param length the bytes
     * @throws PerfException if the publication closed or lost its subscriber, or the wait times out
     */
    protected final void offer(final int length) {
        offer(sendBuffer, length);
    }

    /**
     * Offers the first {@code length} bytes of a buffer, waiting out back pressure.
     *
     * @param buffer the bytes
     * @param length how many
     * @throws PerfException if the publication closed or lost its subscriber, or the wait times out
     */
    protected final void offer(final UnsafeBuffer buffer, final int length) {
        long result = publication.offer(buffer, 0, length);
        if (result >= 0) {
            return;
        }
        spinner.reset();
        while (result < 0) {
            if (result == Publication.CLOSED || result == Publication.NOT_CONNECTED
                || result == Publication.MAX_POSITION_EXCEEDED) {
                throw new PerfException(label + ": Aeron offer failed: " + Publication.errorString(result));
            }
            idle();
            result = publication.offer(buffer, 0, length);
        }
        progressed();
    }

    /**
     * Polls the subscription once.
     *
     * @param handler the fragment handler
     * @param limit   the most fragments
     * @return fragments taken
     */
    protected final int poll(final FragmentHandler handler, final int limit) {
        polls++;
        final int n = subscription.poll(handler, limit);
        if (n > 0) {
            progressed();
        } else {
            idle();
        }
        return n;
    }

    private void progressed() {
        spinner.reset();
        if (backoff != null) {
            backoff.reset();
        }
    }

    private void idle() {
        if (backoff != null) {
            backoff.idle();
        }
        spinner.idle();
        if (spinner.periodic() && !subscription.isConnected()) {
            throw new PerfException(label + ": the peer's Aeron publication went away");
        }
    }

    /**
     * Checks a message's length, and its bytes when verifying (copying them out of the term first).
     *
     * @param buffer the term buffer
     * @param offset where the message starts
     * @param length its length
     * @param seq    its number
     * @throws PerfException if it is not the message expected
     */
    protected final void check(final org.agrona.DirectBuffer buffer, final int offset, final int length,
                               final long seq) {
        if (length != size) {
            throw new PerfException(label + ": message " + seq + " has " + length + " bytes, not " + size);
        }
        if (verify) {
            buffer.getBytes(offset, recvBuffer, 0, length);
            if (!pattern.matches(recvMemory, 0, size, seq)) {
                throw new PerfException(label + ": message " + seq + " arrived with wrong bytes");
            }
        }
    }

    /**
     * Subscription polls so far.
     *
     * @return the count
     */
    public final long polls() {
        return polls;
    }

    /** Frees the buffers; the link (publication and subscription) is its owner's to close. */
    @Override
    public void close() {
        arena.close();
    }
}
