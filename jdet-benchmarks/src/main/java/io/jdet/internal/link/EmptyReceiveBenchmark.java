package io.jdet.internal.link;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

/**
 * What each receive call costs on an empty non-blocking UDP socket, through the downcalls the UDP link uses: a
 * busy poll that finds nothing pays it every time. {@link #recvmmsg} (16 message headers, the batch receive),
 * {@link #recvmsg} (one header) and {@link #recvfrom} (no header: the link's receive after one that found nothing,
 * {@code UdpLink#batching}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@State(Scope.Thread)
public class EmptyReceiveBenchmark {
    private static final int BATCH = 16;
    private static final int BUFFER = 2048;
    private final Arena arena = Arena.ofShared();
    private int fd = -1;
    private MemorySegment msgs;
    private MemorySegment msg;
    private MemorySegment buffer;
    private MemorySegment name;
    private MemorySegment nameLength;

    /**
     * Opens a UDP socket on a loopback port nothing sends to, and lays out the calls' arguments.
     *
     * @throws Throwable if the socket cannot be opened or bound
     */
    @Setup
    public void open() throws Throwable {
        final MemorySegment errno = Posix.newErrnoState(arena);
        fd = (int) Posix.SOCKET.invokeExact(errno, Posix.AF_INET, Posix.SOCK_DGRAM, 0);
        final MemorySegment sa = arena.allocate(Posix.SOCKADDR_IN_SIZE);
        Posix.sockaddr(sa, 0x7f00_0001, 0);
        if (fd < 0 || (int) Posix.BIND.invokeExact(errno, fd, sa, Posix.SOCKADDR_IN_SIZE) != 0) {
            throw new IllegalStateException("cannot open a UDP socket on 127.0.0.1, errno " + Posix.errno(errno));
        }
        buffer = arena.allocate(BUFFER, 64);
        name = arena.allocate(Posix.SOCKADDR_IN_SIZE, 8);
        nameLength = arena.allocate(ValueLayout.JAVA_INT);
        final MemorySegment iov = arena.allocate(Posix.IOVEC_SIZE, 8);
        iov.set(ValueLayout.JAVA_LONG, 0, buffer.address());
        iov.set(ValueLayout.JAVA_LONG, 8, BUFFER);
        msg = arena.allocate(Posix.MSGHDR_SIZE, 8);
        msg.set(ValueLayout.JAVA_LONG, Posix.MSG_NAME, name.address());
        msg.set(ValueLayout.JAVA_INT, Posix.MSG_NAMELEN, Posix.SOCKADDR_IN_SIZE);
        msg.set(ValueLayout.JAVA_LONG, Posix.MSG_IOV, iov.address());
        msg.set(ValueLayout.JAVA_LONG, Posix.MSG_IOVLEN, 1);
        msgs = arena.allocate((long) Posix.MMSGHDR_SIZE * BATCH, 8);
        for (int i = 0; i < BATCH; i++) {
            msgs.asSlice((long) i * Posix.MMSGHDR_SIZE, Posix.MSGHDR_SIZE).copyFrom(msg);
        }
    }

    /** Closes the socket and frees the memory. */
    @TearDown
    public void close() {
        Descriptors.close(fd);
        arena.close();
    }

    /**
     * A batch receive that finds nothing.
     *
     * @return the call's result (-1: nothing waits)
     * @throws Throwable never in practice (the downcall's signature)
     */
    @Benchmark
    public int recvmmsg() throws Throwable {
        return (int) Posix.RECVMMSG_UNCAPTURED.invokeExact(fd, msgs, BATCH, Posix.MSG_DONTWAIT, MemorySegment.NULL);
    }

    /**
     * A one-header receive that finds nothing.
     *
     * @return the call's result (-1: nothing waits)
     * @throws Throwable never in practice (the downcall's signature)
     */
    @Benchmark
    public long recvmsg() throws Throwable {
        return (long) Posix.RECVMSG_UNCAPTURED.invokeExact(fd, msg, Posix.MSG_DONTWAIT);
    }

    /**
     * The link's single receive, finding nothing.
     *
     * @return the call's result (-1: nothing waits)
     * @throws Throwable never in practice (the downcall's signature)
     */
    @Benchmark
    public long recvfrom() throws Throwable {
        nameLength.set(ValueLayout.JAVA_INT, 0, Posix.SOCKADDR_IN_SIZE);
        return (long) Posix.RECVFROM_UNCAPTURED.invokeExact(fd, buffer, (long) BUFFER, Posix.MSG_DONTWAIT, name,
            nameLength);
    }
}
