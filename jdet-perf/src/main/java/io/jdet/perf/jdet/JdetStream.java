package io.jdet.perf.jdet;

import io.jdet.WorkCompletion;
import io.jdet.WrFlags;
import io.jdet.perf.PerfException;
import io.jdet.perf.TestKind;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.Spinner;
import io.jdet.perf.rig.StopSignal;
import io.jdet.perf.rig.Stream;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The jdet burst tests, as det_perf runs them: each burst posts its work requests with every completion but the
 * last suppressed, then takes completions until that last one (which frees the whole burst's slots) arrives.
 * {@code bw-send} sends into receives the other end keeps posted; {@code bw-write} writes into the peer's receive
 * buffer; {@code bw-read} reads the peer's send buffer (jdet keeps at most max_or reads in flight);
 * {@code bw-atomic} fetch-and-adds 1 to a counter at the peer. Message {@code seq} uses buffer slot
 * {@code seq mod slots} at both ends, whose bytes are pattern message {@code slot}, so a slot rewritten by a later
 * message holds the same bytes. Allocation free.
 *
 * <p>Verifying checks every {@code bw-send} message as it arrives, but the one-sided tests only where they can be seen
 * without a completion per message: {@code bw-read}'s slots after each burst, {@code bw-write}'s target slots at
 * the end of each phase, {@code bw-atomic}'s returned values after each burst and the peer's counter. A slot used
 * more than once before its check shows only its last message: in {@code bw-write} whenever a phase has more
 * messages than the buffer's slots (burst + 1, fewer where that would pass {@link QpShape#SLOT_BUDGET}), in
 * {@code bw-read} when a burst has (above 32 KiB with the default burst).
 */
public final class JdetStream implements Stream, JdetQp.ReceiveSink {
    /**
     * Every post of a burst but the last is flagged {@link WrFlags#MORE}, so a burst of small messages shares
     * datagrams over UDP as an application streaming them would post it; {@code -Djdet.perf.more=false} posts each
     * on its own (for comparing the two).
     */
    private static final int MORE = Boolean.parseBoolean(System.getProperty("jdet.perf.more", "true")) ? WrFlags.MORE
        : 0;

    private static final ValueLayout.OfLong COUNTER = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int STOP_CHECK_POLLS = 256;

    private final JdetQp q;
    private final TestKind kind;
    private final int size;
    private final int slots;
    private final boolean verify;
    private final Pattern pattern;
    private final Spinner spinner;
    private long received;
    private long recvPosted;
    private long recvLimit;

    /**
     * Sets the test up on a connected queue pair. Call before the start barrier.
     *
     * @param q       the queue pair and buffers, connected
     * @param verify  whether to check what arrives (see above for the one-sided tests)
     * @param pattern the bytes to send and expect
     */
    public JdetStream(final JdetQp q, final boolean verify, final Pattern pattern) {
        this.q = q;
        this.kind = q.shape().kind();
        this.size = q.shape().size();
        this.slots = q.shape().slots();
        this.verify = verify;
        this.pattern = pattern;
        this.spinner = q.spinner();
        q.sink(this);
        if (verify && kind != TestKind.BW_ATOMIC) {
            for (int slot = 0; slot < slots; slot++) {
                pattern.fill(q.sendBuffer(), (long) slot * size, size, slot);
            }
        }
    }

    /** Posts the receives of the receiving end of {@code bw-send}, as many as the queue holds. */
    @Override
    public void expect(final long total) {
        if (kind != TestKind.BW_SEND) {
            return;
        }
        recvLimit = total;
        while (recvPosted < recvLimit && recvPosted - received < q.shape().receives()) {
            postNextRecv();
        }
    }

    private void postNextRecv() {
        final long id = recvPosted++;
        q.postRecv(id, slotOffset(id), size);
    }

    private long slotOffset(final long seq) {
        return (seq % slots) * size;
    }

    @Override
    public void burst(final long firstSeq, final int count) {
        post(firstSeq, count);
        finish(firstSeq, count);
    }

    /**
     * The first half of {@link #burst}: posts the burst's work requests without waiting, so that one thread can
     * put bursts on several queue pairs in flight before it waits for any ({@code --qps}).
     *
     * @param firstSeq the first message's number
     * @param count    how many messages
     */
    public void post(final long firstSeq, final int count) {
        final ConnectInfo peer = q.remote();
        for (int j = 0; j < count; j++) {
            final long seq = firstSeq + j;
            final int flags = j == count - 1 ? 0 : WrFlags.SUPPRESSED | MORE;
            final long offset = slotOffset(seq);
            switch (kind) {
                case BW_SEND -> q.qp().send(seq, q.segment(q.sendRegion(), offset, size), 1, flags, 0);
                case BW_WRITE -> q.qp().write(seq, q.segment(q.sendRegion(), offset, size), 1,
                    peer.recvAddr() + offset, peer.recvKey(), flags, 0);
                case BW_READ -> q.qp().read(seq, q.segment(q.recvRegion(), offset, size), 1,
                    peer.sendAddr() + offset, peer.sendKey(), flags);
                case BW_ATOMIC -> q.qp().fetchAdd(seq, 1, q.segment(q.sendRegion(), offset, 8)[0],
                    peer.recvAddr(), peer.recvKey(), flags);
                default -> throw new IllegalStateException(kind + " is not a burst test");
            }
            q.posted();
        }
    }

    /**
     * The second half of {@link #burst}: waits for the burst's last completion and checks what it brought.
     *
     * @param firstSeq the first message's number, as given to {@link #post}
     * @param count    how many messages, as given to {@link #post}
     */
    public void finish(final long firstSeq, final int count) {
        q.awaitSends(0);
        if (verify) {
            verifyBurst(firstSeq, count);
        }
    }

    private void verifyBurst(final long firstSeq, final int count) {
        final long from = firstSeq + count - Math.min(count, slots);
        for (long seq = from; seq < firstSeq + count; seq++) {
            if (kind == TestKind.BW_READ && !pattern.matches(q.recvBuffer(), slotOffset(seq), size, seq % slots)) {
                throw new PerfException("bw-read: read " + seq + " of " + size + " bytes brought wrong bytes");
            }
            if (kind == TestKind.BW_ATOMIC && q.sendBuffer().get(COUNTER, slotOffset(seq)) != seq) {
                throw new PerfException("bw-atomic: fetch-and-add " + seq + " returned "
                    + q.sendBuffer().get(COUNTER, slotOffset(seq)) + ", not " + seq);
            }
        }
    }

    @Override
    public void receive(final long total, final int burst, final StopSignal stop) {
        if (kind == TestKind.BW_SEND) {
            receiveSends(total, stop);
            return;
        }
        serveUntilStop(stop);
        if (kind == TestKind.BW_WRITE && verify) {
            for (long slot = 0; slot < Math.min(total, slots); slot++) {
                if (!pattern.matches(q.recvBuffer(), slot * size, size, slot)) {
                    throw new PerfException("bw-write: slot " + slot + " of the target buffer holds wrong bytes");
                }
            }
        }
        if (kind == TestKind.BW_ATOMIC && q.recvBuffer().get(COUNTER, 0) != total) {
            throw new PerfException("bw-atomic: the counter is " + q.recvBuffer().get(COUNTER, 0) + " after "
                + total + " fetch-and-adds of 1");
        }
    }

    private void receiveSends(final long total, final StopSignal stop) {
        spinner.reset();
        while (received < total) {
            if (q.waitMode()) {
                q.awaitProgress();
            } else if (q.progress() == 0) {
                spinner.idle();
                if (spinner.periodic() && stop.stopRequested() && q.progress() == 0) {
                    throw new PerfException("bw-send: the sender stopped after " + received + " of " + total
                        + " messages");
                }
            } else {
                spinner.reset();
            }
        }
    }

    /** The target of one-sided operations: keep the receive path running until the sender says it is done. */
    private void serveUntilStop(final StopSignal stop) {
        if (q.waitMode()) {
            // Blocked here, the NIC's progress thread serves the peer's frames.
            if (!stop.awaitStop(spinner.timeoutNs())) {
                throw new PerfException(kind.label() + ": timed out after " + spinner.timeoutNs() / 1_000_000
                    + " ms waiting for the sender to finish");
            }
            return;
        }
        spinner.waitingFor("the sender to finish " + kind.label()).reset();
        long polls = 0;
        while (++polls % STOP_CHECK_POLLS != 0 || !stop.stopRequested()) {
            q.progress();
            spinner.idle();
        }
    }

    @Override
    public void onReceive(final WorkCompletion wc) {
        final long seq = received++;
        if (wc.id() != seq || wc.length() != size) {
            throw new PerfException("bw-send: receive " + wc.id() + " took message " + seq + " of " + wc.length()
                + " bytes, expected " + size);
        }
        if (verify && !pattern.matches(q.recvBuffer(), slotOffset(seq), size, seq % slots)) {
            throw new PerfException("bw-send: message " + seq + " of " + size + " bytes arrived with wrong bytes");
        }
        if (recvPosted < recvLimit && recvPosted - received < q.shape().receives()) {
            postNextRecv();
        }
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
