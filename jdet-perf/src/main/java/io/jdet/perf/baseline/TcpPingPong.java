package io.jdet.perf.baseline;

import io.jdet.perf.PerfException;
import io.jdet.perf.rig.PingPong;

import java.nio.channels.SocketChannel;

/** The TCP ping-pong baseline: the message is written whole, and echoed once the peer has read all of it. */
public final class TcpPingPong extends BaselineIo implements PingPong {

    /**
     * Creates one end.
     *
     * @param channel a connected socket channel with TCP_NODELAY, blocking or not as {@code setup} says
     * @param size    the message size
     * @param setup   how to run
     */
    TcpPingPong(final SocketChannel channel, final int size, final Baselines.Setup setup) {
        super(channel, size, size, setup);
    }

    @Override
    public void send(final long seq) {
        if (verify) {
            pattern.fill(sendMemory, 0, size, seq);
        }
        sendBuffer.clear().limit(size);
        writeAll();
    }

    @Override
    public void receive(final long seq) {
        recvBuffer.clear().limit(size);
        while (recvBuffer.hasRemaining()) {
            readSome();
        }
        if (verify && !pattern.matches(recvMemory, 0, size, seq)) {
            throw new PerfException("tcp-pingpong: message " + seq + " arrived with wrong bytes");
        }
    }
}
