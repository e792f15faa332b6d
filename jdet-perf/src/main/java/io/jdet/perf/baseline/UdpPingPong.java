package io.jdet.perf.baseline;

import io.jdet.perf.PerfException;
import io.jdet.perf.rig.PingPong;

import java.nio.channels.DatagramChannel;

/**
 * The UDP ping-pong baseline: a message goes as one datagram, or as datagrams of at most
 * {@link Datagrams#MAX_DATAGRAM} bytes when it is larger, and the peer echoes it the same way once it has all of
 * it. Loopback does not lose or reorder datagrams at this pace; if one is lost, the wait times out.
 */
public final class UdpPingPong extends BaselineIo implements PingPong {
    private final int fragments;

    /**
     * Creates one end.
     *
     * @param channel a connected datagram channel, blocking or not as {@code setup} says
     * @param size    the message size
     * @param setup   how to run
     */
    UdpPingPong(final DatagramChannel channel, final int size, final Baselines.Setup setup) {
        super(channel, size, size, setup);
        this.fragments = Datagrams.fragments(size);
    }

    @Override
    public void send(final long seq) {
        if (verify) {
            pattern.fill(sendMemory, 0, size, seq);
        }
        for (int f = 0; f < fragments; f++) {
            sendBuffer.limit(Datagrams.end(size, f)).position(Datagrams.start(f));
            writeAll();
        }
    }

    @Override
    public void receive(final long seq) {
        for (int f = 0; f < fragments; f++) {
            final int start = Datagrams.start(f);
            final int length = Datagrams.end(size, f) - start;
            recvBuffer.limit(recvBuffer.capacity()).position(start);
            final int n = readSome();
            if (n != length) {
                throw new PerfException("udp-pingpong: datagram " + f + " of message " + seq + " has " + n
                    + " bytes, not " + length + " (lost or reordered datagrams)");
            }
        }
        if (verify && !pattern.matches(recvMemory, 0, size, seq)) {
            throw new PerfException("udp-pingpong: message " + seq + " arrived with wrong bytes");
        }
    }
}
