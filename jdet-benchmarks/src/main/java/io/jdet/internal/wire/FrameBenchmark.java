package io.jdet.internal.wire;

import io.jdet.bench.BenchMain;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The frame header flyweight: writing a whole 80-byte header ({@link Frame#writeBase} plus
 * {@link Frame#writeExtension}, as the requester does for every frame) and reading the fields the receive path
 * reads, on native memory as the engine uses it. Allocation free.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class FrameBenchmark {
    private Arena arena;
    private MemorySegment header;
    private int seq;

    /** Allocates the header memory and writes a valid header into it. */
    @Setup(Level.Trial)
    public void allocate() {
        arena = Arena.ofConfined();
        header = arena.allocate(Frame.HEADER_LENGTH, 8);
        encode();
    }

    /** Frees the header memory. */
    @TearDown(Level.Trial)
    public void free() {
        arena.close();
    }

    /** Writes every header field of a send fragment. */
    @Benchmark
    public void encode() {
        final int s = ++seq;
        Frame.writeBase(header, Frame.OP_SEND, Frame.FLAG_LAST | Frame.FLAG_FORCE_ACK, 1024, 0x101, 0x202, s, s - 1,
            s - 2, s);
        Frame.writeExtension(header, 0, 0, 0, 0, 1024, 0, 42);
    }

    /**
     * Reads what {@code NicImpl.onFrame} and the responder read from a send fragment: the validation fields, the
     * addressing, the sequencing and the message fields.
     *
     * @param bh swallows every field
     */
    @Benchmark
    public void decode(final Blackhole bh) {
        final MemorySegment f = header;
        bh.consume(Frame.magic(f) == Frame.MAGIC && Frame.version(f) == Frame.VERSION);
        bh.consume(Frame.opcode(f));
        bh.consume(Frame.flags(f));
        bh.consume(Frame.payloadLength(f));
        bh.consume(Frame.dstQp(f));
        bh.consume(Frame.srcQp(f));
        bh.consume(Frame.seq(f));
        bh.consume(Frame.reqAck(f));
        bh.consume(Frame.rspAck(f));
        bh.consume(Frame.msgId(f));
        bh.consume(Frame.key(f));
        bh.consume(Frame.length(f));
        bh.consume(Frame.offset(f));
        bh.consume(Frame.immediate(f));
    }

    /**
     * Runs this class's benchmarks.
     *
     * @param args JMH options
     */
    public static void main(final String[] args) {
        BenchMain.run(FrameBenchmark.class, args);
    }
}
