package io.jdet.perf.aeron;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.PingPong;
import io.jdet.perf.rig.Spinner;
import org.agrona.DirectBuffer;

/**
 * The Aeron ping-pong baseline: each message is one offer on this end's publication; the peer polls it from its
 * subscription (reassembled when it spans several MTU-sized fragments) and offers its echo back. Allocation free
 * once the assembler's buffer has grown to the message size.
 */
public final class AeronPingPong extends AeronIo implements PingPong {
    private static final int FRAGMENT_LIMIT = 16;

    private final FragmentHandler handler;
    private long expected;
    private boolean arrived;

    /**
     * Creates one end.
     *
     * @param link     the connected streams
     * @param size     the message size
     * @param waitMode back off between empty polls (else spin)
     * @param verify   check every byte received
     * @param pattern  the bytes to send and expect
     * @param spinner  the deadline of every wait
     * @param label    the baseline's name, for errors
     */
    public AeronPingPong(final AeronLink link, final int size, final boolean waitMode, final boolean verify,
                         final Pattern pattern, final Spinner spinner, final String label) {
        super(link, size, waitMode, verify, pattern, spinner, label);
        this.handler = new FragmentAssembler(this::onMessage);
    }

    private void onMessage(final DirectBuffer buffer, final int offset, final int length, final Header header) {
        check(buffer, offset, length, expected);
        arrived = true;
    }

    @Override
    public void send(final long seq) {
        if (verify) {
            pattern.fill(sendMemory, 0, size, seq);
        }
        offer(size);
    }

    @Override
    public void receive(final long seq) {
        expected = seq;
        arrived = false;
        while (!arrived) {
            poll(handler, FRAGMENT_LIMIT);
        }
    }
}
