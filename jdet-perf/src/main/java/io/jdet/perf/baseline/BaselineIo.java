package io.jdet.perf.baseline;

import io.jdet.perf.PerfException;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.Spinner;
import io.jdet.perf.rig.Watchdog;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;

/**
 * What the four baselines share: direct send and receive buffers (with memory-segment views for the verification
 * pattern), the channel, and the two ways of waiting. Non-blocking (poll mode): an empty read or a full write spins
 * under the {@link Spinner}'s deadline. Blocking (wait mode): each call blocks, and a {@link Watchdog} closes the
 * channel if no call returns for the timeout. Reads and writes on direct buffers allocate nothing.
 */
abstract class BaselineIo implements AutoCloseable {
    protected final ByteChannel channel;
    protected final int size;
    protected final boolean blocking;
    protected final boolean verify;
    protected final Pattern pattern;
    protected final Spinner spinner;
    protected final ByteBuffer sendBuffer;
    protected final ByteBuffer recvBuffer;
    protected final MemorySegment sendMemory;
    protected final MemorySegment recvMemory;
    private final Watchdog watchdog;
    protected long polls;

    BaselineIo(final ByteChannel channel, final int size, final int bufferBytes, final Baselines.Setup setup) {
        this.channel = channel;
        this.size = size;
        this.blocking = setup.blocking();
        this.verify = setup.verify();
        this.pattern = setup.pattern();
        this.spinner = setup.spinner();
        this.sendBuffer = ByteBuffer.allocateDirect(bufferBytes);
        this.recvBuffer = ByteBuffer.allocateDirect(bufferBytes);
        this.sendMemory = MemorySegment.ofBuffer(sendBuffer);
        this.recvMemory = MemorySegment.ofBuffer(recvBuffer);
        this.watchdog = blocking ? Watchdog.guard(spinner.timeoutNs(), spinner.abort(), channel) : null;
    }

    /**
     * Reads once into the receive buffer's current window, waiting for data.
     *
     * @return bytes read, more than 0
     */
    protected final int readSome() {
        try {
            spinner.reset();
            while (true) {
                final int n = channel.read(recvBuffer);
                polls++;
                if (n > 0) {
                    progressed();
                    return n;
                }
                if (n < 0) {
                    throw new PerfException("the peer closed the connection");
                }
                if (blocking) {
                    throw new PerfException("a blocking read returned nothing");
                }
                spinner.idle();
            }
        } catch (final IOException e) {
            throw failure("read", e);
        }
    }

    /** Writes the send buffer's current window completely. */
    protected final void writeAll() {
        try {
            spinner.reset();
            while (sendBuffer.hasRemaining()) {
                if (channel.write(sendBuffer) == 0) {
                    spinner.idle();
                } else {
                    progressed();
                }
            }
        } catch (final IOException e) {
            throw failure("write", e);
        }
    }

    protected final void progressed() {
        if (watchdog != null) {
            watchdog.pet();
        }
    }

    protected final PerfException failure(final String what, final IOException e) {
        if (watchdog != null && watchdog.fired()) {
            return new PerfException("timed out after " + spinner.timeoutNs() / 1_000_000 + " ms in a blocking "
                + what + " of " + getClass().getSimpleName(), e);
        }
        return new PerfException(getClass().getSimpleName() + " " + what + " failed: " + e, e);
    }

    /**
     * Reads and writes so far (det_perf's {@code pc}).
     *
     * @return the count
     */
    public long polls() {
        return polls;
    }

    @Override
    public void close() {
        if (watchdog != null) {
            watchdog.close();
        }
        try {
            channel.close();
        } catch (final IOException e) {
            // Nothing to do about a failed close of a finished channel.
        }
    }
}
