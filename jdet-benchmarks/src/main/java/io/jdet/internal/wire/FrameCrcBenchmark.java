package io.jdet.internal.wire;

import io.jdet.bench.BenchMain;
import io.jdet.internal.wire.Frame;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

/**
 * The frame checksum, CRC32C: {@link FrameCrc#seal} over an 80-byte header plus a payload held elsewhere (the
 * transmit side: header and registered memory as a gather list), and {@link FrameCrc#verify} over a contiguous
 * frame (the receive side: a ring slot). Allocation free.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class FrameCrcBenchmark {
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Payload bytes after the header. */
    @Param({"0", "1024", "4096", "64000"})
    int payload;

    private final FrameCrc crc = new FrameCrc();
    private Arena arena;
    private MemorySegment header;
    private ByteBuffer headerView;
    private FrameGather gather;
    private MemorySegment frame;
    private ByteBuffer frameView;
    private int frameCrc;

    /** Fills a header, a payload and a contiguous frame with the same bytes, and seals them once. */
    @Setup(Level.Trial)
    public void allocate() {
        arena = Arena.ofConfined();
        header = arena.allocate(Frame.HEADER_LENGTH, 8);
        headerView = header.asByteBuffer();
        Frame.writeBase(header, Frame.OP_SEND, Frame.FLAG_LAST, payload, 0x101, 0x202, 1, 0, 0, 1);
        Frame.writeExtension(header, 0, 0, 0, 0, payload, 0, 0);
        final MemorySegment data = arena.allocate(Math.max(payload, 1), 64);
        for (int i = 0; i < payload; i++) {
            data.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        gather = new FrameGather(1);
        if (payload > 0) {
            gather.add(data, data.asByteBuffer(), 0, payload);
        }
        frame = arena.allocate(Frame.HEADER_LENGTH + payload, 64);
        frameView = frame.asByteBuffer();
        crc.seal(header, headerView, Frame.HEADER_LENGTH, gather);
        frameCrc = header.get(LE_INT, FrameCrc.CRC_OFFSET);
        MemorySegment.copy(header, 0, frame, 0, Frame.HEADER_LENGTH);
        gather.copyTo(frame, Frame.HEADER_LENGTH);
        if (!verify()) {
            throw new IllegalStateException("seal and verify disagree");
        }
    }

    /** Frees the memory. */
    @TearDown(Level.Trial)
    public void free() {
        arena.close();
    }

    /**
     * Computes and stores the CRC of header plus gathered payload.
     *
     * @return the CRC
     */
    @Benchmark
    public int seal() {
        crc.seal(header, headerView, Frame.HEADER_LENGTH, gather);
        return header.get(LE_INT, FrameCrc.CRC_OFFSET);
    }

    /**
     * Checks a contiguous frame (restoring its CRC field first: verifying zeroes it).
     *
     * @return whether the CRC was right
     */
    @Benchmark
    public boolean verify() {
        frame.set(LE_INT, FrameCrc.CRC_OFFSET, frameCrc);
        return crc.verify(frame, frameView, Frame.HEADER_LENGTH + payload);
    }

    /**
     * Runs this class's benchmarks.
     *
     * @param args JMH options
     */
    public static void main(final String[] args) {
        BenchMain.run(FrameCrcBenchmark.class, args);
    }
}
