package io.jdet.perf.baseline;

import io.jdet.perf.PerfException;
import io.jdet.perf.rig.StopSignal;
import io.jdet.perf.rig.Stream;

import java.nio.channels.SocketChannel;

/**
 * The TCP stream baseline: each message is written whole; the receiver reads in chunks of up to 256 KiB, as a
 * stream reader would, and answers one byte at the end of each burst, which delivers the burst.
 */
public final class TcpStream extends BaselineIo implements Stream {
    private static final int CHUNK = 256 << 10;

    /** Bytes received so far, across phases. */
    private long position;

    /**
     * Creates one end.
     *
     * @param channel a connected socket channel with TCP_NODELAY, blocking or not as {@code setup} says
     * @param size    the message size
     * @param setup   how to run
     */
    TcpStream(final SocketChannel channel, final int size, final Baselines.Setup setup) {
        super(channel, size, Math.max(size, CHUNK), setup);
    }

    @Override
    public void burst(final long firstSeq, final int count) {
        for (long seq = firstSeq; seq < firstSeq + count; seq++) {
            if (verify) {
                pattern.fill(sendMemory, 0, size, seq);
            }
            sendBuffer.clear().limit(size);
            writeAll();
        }
        recvBuffer.clear().limit(1);
        readSome();
    }

    @Override
    public void receive(final long total, final int burst, final StopSignal stop) {
        final long all = total * size;
        final long perBurst = (long) burst * size;
        while (position < all) {
            final long boundary = Math.min(all, (position / perBurst + 1) * perBurst);
            recvBuffer.clear().limit((int) Math.min(recvBuffer.capacity(), boundary - position));
            final int n = readSome();
            if (verify) {
                check(position, n);
            }
            position += n;
            if (position == boundary) {
                sendBuffer.clear().limit(1);
                writeAll();
            }
        }
    }

    private void check(final long position, final int n) {
        int offset = 0;
        while (offset < n) {
            final long message = (position + offset) / size;
            final int inMessage = (int) ((position + offset) % size);
            final int length = Math.min(n - offset, size - inMessage);
            if (!pattern.matchesPiece(recvMemory, offset, inMessage, length, message)) {
                throw new PerfException("tcp-stream: message " + message + " arrived with wrong bytes");
            }
            offset += length;
        }
    }
}
