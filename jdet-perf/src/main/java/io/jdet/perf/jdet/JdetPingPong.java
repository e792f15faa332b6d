package io.jdet.perf.jdet;

import io.jdet.WcFlags;
import io.jdet.WorkCompletion;
import io.jdet.WrFlags;
import io.jdet.perf.PerfException;
import io.jdet.perf.TestKind;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.PingPong;
import io.jdet.perf.rig.Spinner;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The jdet ping-pongs. {@code lat-send}: each message is a send into a pre-posted receive, answered the same way.
 * {@code lat-write}: each message is an RDMA write into the peer's receive buffer, whose receiver polls the
 * buffer's last byte until the message's marker appears (jdet writes the last byte last, as MPI relies on); in wait
 * mode, where there is nothing to poll, the write carries an immediate value and the receiver waits for the
 * receive completion that consumes. Messages alternate between two send slots, and a slot is rewritten only once
 * the write or send that used it has completed. Allocation free.
 */
public final class JdetPingPong implements PingPong, JdetQp.ReceiveSink {
    private final JdetQp q;
    private final boolean write;
    private final boolean pollLastByte;
    private final int size;
    private final boolean verify;
    private final Pattern pattern;
    private final Spinner spinner;
    private long arrived;

    /**
     * Sets the test up on a connected queue pair and posts its receives. Call before the start barrier.
     *
     * @param q       the queue pair and buffers, connected
     * @param verify  whether to check every byte that arrives
     * @param pattern the bytes to send and expect
     */
    public JdetPingPong(final JdetQp q, final boolean verify, final Pattern pattern) {
        this.q = q;
        this.write = q.shape().kind() == TestKind.LAT_WRITE;
        this.pollLastByte = write && !q.waitMode();
        this.size = q.shape().size();
        this.verify = verify;
        this.pattern = pattern;
        this.spinner = q.spinner();
        q.sink(this);
        for (int i = 0; i < q.shape().receives(); i++) {
            q.postRecv(i, write ? 0 : (long) i * size, write ? 0 : size);
        }
    }

    @Override
    public void send(final long seq) {
        q.awaitSends(1);
        final long offset = (seq & 1) * size;
        final MemorySegment buffer = q.sendBuffer();
        if (verify) {
            pattern.fill(buffer, offset, size, seq);
        }
        if (write) {
            buffer.set(ValueLayout.JAVA_BYTE, offset + size - 1, Pattern.marker(seq));
            final ConnectInfo peer = q.remote();
            q.qp().write(seq, q.segment(q.sendRegion(), offset, size), 1, peer.recvAddr(), peer.recvKey(),
                pollLastByte ? 0 : WrFlags.IMMEDIATE, (int) seq);
        } else {
            q.qp().send(seq, q.segment(q.sendRegion(), offset, size), 1, 0, 0);
        }
        q.posted();
    }

    @Override
    public void receive(final long seq) {
        if (pollLastByte) {
            final byte marker = Pattern.marker(seq);
            final MemorySegment buffer = q.recvBuffer();
            spinner.reset();
            while (buffer.get(ValueLayout.JAVA_BYTE, size - 1) != marker) {
                if (q.progress() == 0) {
                    spinner.idle();
                }
            }
            if (verify && !pattern.matches(buffer, 0, size - 1, seq)) {
                throw corrupt(seq);
            }
            return;
        }
        while (arrived <= seq) {
            q.awaitProgress();
        }
    }

    @Override
    public void onReceive(final WorkCompletion wc) {
        final long seq = arrived++;
        final int slot = (int) wc.id();
        if (write) {
            if ((wc.flags() & WcFlags.IMMEDIATE) == 0 || wc.immediate() != (int) seq
                || q.recvBuffer().get(ValueLayout.JAVA_BYTE, size - 1) != Pattern.marker(seq)) {
                throw new PerfException("lat-write: write " + seq + " arrived without its immediate or marker");
            }
            if (verify && !pattern.matches(q.recvBuffer(), 0, size - 1, seq)) {
                throw corrupt(seq);
            }
            q.postRecv(slot, 0, 0);
            return;
        }
        if (wc.length() != size) {
            throw new PerfException("lat-send: message " + seq + " has " + wc.length() + " bytes, not " + size);
        }
        if (verify && !pattern.matches(q.recvBuffer(), (long) slot * size, size, seq)) {
            throw corrupt(seq);
        }
        q.postRecv(slot, (long) slot * size, size);
    }

    private PerfException corrupt(final long seq) {
        return new PerfException(q.shape().kind().label() + ": message " + seq + " of " + size
            + " bytes arrived with wrong bytes");
    }

    @Override
    public long polls() {
        return q.polls();
    }

    @Override
    public void close() {
        q.close();
    }
}
