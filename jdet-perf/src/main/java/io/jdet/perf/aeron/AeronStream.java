package io.jdet.perf.aeron;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.jdet.perf.PerfException;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.Spinner;
import io.jdet.perf.rig.StopSignal;
import io.jdet.perf.rig.Stream;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The Aeron stream baseline: the sender offers a burst's messages back to back (Aeron's driver packs small ones
 * into shared frames and its flow control paces the sender); the receiver polls them and, at the end of each
 * burst, offers back an 8-byte count of the messages it has taken, which is when the sender's burst is delivered
 * (as the UDP stream's acknowledgement). Allocation free once the assembler's buffer has grown.
 */
public final class AeronStream extends AeronIo implements Stream {
    private static final int FRAGMENT_LIMIT = 256;

    private final FragmentHandler dataHandler;
    private final FragmentHandler ackHandler;
    private final UnsafeBuffer ackBuffer;
    private final java.lang.foreign.Arena ackArena = java.lang.foreign.Arena.ofShared();
    private long received;
    private long target;
    private int burst = 1;
    private long acked;

    /**
     * Creates one end.
     *
     * @param link     the connected streams: data one way, counts the other
     * @param size     the message size
     * @param waitMode back off between empty polls (else spin)
     * @param verify   check every byte received
     * @param pattern  the bytes to send and expect
     * @param spinner  the deadline of every wait
     * @param label    the baseline's name, for errors
     */
    public AeronStream(final AeronLink link, final int size, final boolean waitMode, final boolean verify,
                       final Pattern pattern, final Spinner spinner, final String label) {
        super(link, size, waitMode, verify, pattern, spinner, label);
        this.dataHandler = new FragmentAssembler(this::onData);
        this.ackHandler = this::onAck;
        this.ackBuffer = new UnsafeBuffer(ackArena.allocate(Long.BYTES, Long.BYTES).address(), Long.BYTES);
    }

    @Override
    public void burst(final long firstSeq, final int count) {
        for (long seq = firstSeq; seq < firstSeq + count; seq++) {
            if (verify) {
                pattern.fill(sendMemory, 0, size, seq);
            }
            offer(size);
        }
        final long end = firstSeq + count;
        while (acked < end) {
            poll(ackHandler, FRAGMENT_LIMIT);
        }
    }

    private void onAck(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (length != Long.BYTES) {
            throw new PerfException("aeron stream: an acknowledgement of " + length + " bytes");
        }
        acked = Math.max(acked, buffer.getLong(offset));
    }

    @Override
    public void receive(final long total, final int burstSize, final StopSignal stop) {
        target = total;
        burst = burstSize;
        while (received < total) {
            poll(dataHandler, FRAGMENT_LIMIT);
        }
    }

    private void onData(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        if (received >= target) {
            throw new PerfException("aeron stream: message " + received + " arrived beyond the " + target
                + " announced");
        }
        check(buffer, offset, length, received);
        received++;
        if (received % burst == 0 || received == target) {
            ackBuffer.putLong(0, received);
            offer(ackBuffer, Long.BYTES);
        }
    }

    @Override
    public void close() {
        try {
            super.close();
        } finally {
            ackArena.close();
        }
    }
}
