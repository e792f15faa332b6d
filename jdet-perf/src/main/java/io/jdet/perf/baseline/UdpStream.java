package io.jdet.perf.baseline;

import io.jdet.perf.PerfException;
import io.jdet.perf.rig.StopSignal;
import io.jdet.perf.rig.Stream;

import java.io.IOException;
import java.nio.channels.DatagramChannel;

/**
 * The UDP stream baseline with a credit window, since plain UDP drops what the receiver's socket buffer cannot
 * hold: the sender keeps at most {@code window} datagrams unacknowledged; the receiver acknowledges cumulatively
 * (an 8-byte datagram count) every quarter window, at the end of each burst and at the end. Messages larger than a
 * datagram are split as in {@link UdpPingPong}. A burst is delivered when every datagram of it is acknowledged.
 */
public final class UdpStream extends BaselineIo implements Stream {
    private static final int ACK_BYTES = 8;

    private final int fragments;
    private final int window;
    private final int ackEvery;
    private long sent;
    private long acked;
    private long received;

    /**
     * Creates one end.
     *
     * @param channel a connected datagram channel, blocking or not as {@code setup} says
     * @param size    the message size
     * @param window  the most unacknowledged datagrams (what the receive buffer holds)
     * @param setup   how to run
     */
    UdpStream(final DatagramChannel channel, final int size, final int window, final Baselines.Setup setup) {
        super(channel, size, Math.max(size, ACK_BYTES), setup);
        this.fragments = Datagrams.fragments(size);
        this.window = window;
        this.ackEvery = Math.max(1, window / 4);
    }

    @Override
    public void burst(final long firstSeq, final int count) {
        for (long seq = firstSeq; seq < firstSeq + count; seq++) {
            if (verify) {
                pattern.fill(sendMemory, 0, size, seq);
            }
            for (int f = 0; f < fragments; f++) {
                while (sent - acked >= window) {
                    awaitAck();
                }
                sendBuffer.limit(Datagrams.end(size, f)).position(Datagrams.start(f));
                writeAll();
                sent++;
                if (!blocking && sent % ackEvery == 0) {
                    pollAck();
                }
            }
        }
        while (acked < sent) {
            awaitAck();
        }
    }

    private void awaitAck() {
        recvBuffer.clear().limit(ACK_BYTES);
        if (readSome() != ACK_BYTES) {
            throw new PerfException("udp-stream: a short acknowledgement");
        }
        acked = Math.max(acked, recvBuffer.getLong(0));
    }

    private void pollAck() {
        recvBuffer.clear().limit(ACK_BYTES);
        try {
            polls++;
            if (channel.read(recvBuffer) == ACK_BYTES) {
                acked = Math.max(acked, recvBuffer.getLong(0));
            }
        } catch (final IOException e) {
            throw failure("read", e);
        }
    }

    @Override
    public void receive(final long total, final int burst, final StopSignal stop) {
        final long all = total * fragments;
        final long perBurst = (long) burst * fragments;
        while (received < all) {
            final long message = received / fragments;
            final int f = (int) (received % fragments);
            final int start = Datagrams.start(f);
            final int length = Datagrams.end(size, f) - start;
            recvBuffer.limit(recvBuffer.capacity()).position(start);
            final int n = readSome();
            if (n != length) {
                throw new PerfException("udp-stream: datagram " + received + " has " + n + " bytes, not " + length
                    + " (lost or reordered datagrams)");
            }
            if (verify && !pattern.matchesPiece(recvMemory, start, start, length, message)) {
                throw new PerfException("udp-stream: message " + message + " arrived with wrong bytes");
            }
            received++;
            if (received % ackEvery == 0 || received % perBurst == 0 || received == all) {
                sendBuffer.clear().limit(ACK_BYTES);
                sendBuffer.putLong(0, received);
                writeAll();
            }
        }
    }
}
