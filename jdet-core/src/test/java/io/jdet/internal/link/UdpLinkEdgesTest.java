package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static io.jdet.internal.link.LinkFrames.counters;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The UDP link's edges: failed opens, hostile datagrams, sends it cannot make, closing under a waiter. */
@Timeout(30)
class UdpLinkEdgesTest {
    private static final String LOCAL = "udp:127.0.0.1";

    private static final int RLIMIT_NOFILE = 7;
    private static final MethodHandle GETRLIMIT = libc("getrlimit",
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    private static final MethodHandle SETRLIMIT = libc("setrlimit",
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    private static final MethodHandle DUP = libc("dup",
        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    @SuppressWarnings("restricted")
    private static MethodHandle libc(final String name, final FunctionDescriptor descriptor) {
        final Linker linker = Linker.nativeLinker();
        return linker.downcallHandle(linker.defaultLookup().find(name).orElseThrow(), descriptor);
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    private static int port(final UdpLink link) {
        return Integer.parseInt(link.address().substring(link.address().lastIndexOf(':') + 1));
    }

    /** Receives until n datagrams were taken (good or dropped), or fails at the deadline. */
    private static void receive(final UdpLink link, final FrameHandler handler, final int n) {
        final int[] taken = {0};
        Tests.await(n + " datagrams taken", () -> {
            taken[0] += link.receive(handler, 16);
            return taken[0] >= n;
        });
        assertEquals(n, taken[0]);
    }

    /** Runs an await of a minute on another thread and fails unless it returns within the test deadline. */
    private static void assertAwaitReturns(final UdpLink link, final String why) throws InterruptedException {
        final Thread waiter = Thread.ofPlatform().start(() -> link.await(60_000_000_000L));
        waiter.join(Tests.TIMEOUT.toMillis());
        assertFalse(waiter.isAlive(), why);
    }

    @Test
    void shouldLeaveNoDescriptorOpenWhenOpeningFails() throws IOException {
        try (UdpLink taken = new UdpLink(LOCAL)) {
            final long before = openDescriptors();
            for (int i = 0; i < 50; i++) {
                final DetException injected = assertThrows(DetException.class,
                    () -> new UdpLink(LOCAL, () -> {
                        throw new IllegalStateException("injected");
                    }));
                assertEquals(Errno.ENODEV, injected.errno());
                assertTrue(injected.getMessage().contains("injected"), injected.getMessage());
                final DetException inUse = assertThrows(DetException.class, () -> new UdpLink(taken.address()));
                assertEquals(Errno.EADDRINUSE, inUse.errno(), inUse.getMessage());
                assertTrue(inUse.getMessage().contains("address in use"), inUse.getMessage());
            }
            final long after = openDescriptors();
            assertTrue(after - before < 10, "100 failed opens left " + (after - before) + " descriptors open");
        }
    }

    @Test
    void shouldFailWithEnodevAndLeaveNothingOpenWhenTheProcessIsOutOfDescriptors() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment limit = arena.allocate(16, 8);
            assertEquals(0, (int) GETRLIMIT.invokeExact(RLIMIT_NOFILE, limit));
            final long soft = limit.get(ValueLayout.JAVA_LONG, 0);
            final int lowestFree = (int) DUP.invokeExact(0);
            assertTrue(lowestFree > 0);
            assertEquals(0, (int) Posix.CLOSE.invokeExact(lowestFree));
            try {
                // No descriptor free: the interface lookup fails. One free: the lookup's socket comes and goes, the
                // link's socket takes the descriptor, and the eventfd fails.
                for (final int room : new int[] {0, 1}) {
                    limit.set(ValueLayout.JAVA_LONG, 0, lowestFree + room);
                    assertEquals(0, (int) SETRLIMIT.invokeExact(RLIMIT_NOFILE, limit));
                    final DetException e = assertThrows(DetException.class, () -> new UdpLink(LOCAL));
                    limit.set(ValueLayout.JAVA_LONG, 0, soft);
                    assertEquals(0, (int) SETRLIMIT.invokeExact(RLIMIT_NOFILE, limit));
                    assertEquals(Errno.ENODEV, e.errno());
                    assertTrue(e.getMessage().contains(room == 0 ? "Too many open files" : "eventfd"),
                        e.getMessage());
                    final int next = (int) DUP.invokeExact(0);
                    assertEquals(0, (int) Posix.CLOSE.invokeExact(next));
                    assertEquals(lowestFree, next, "the descriptor that was opened is closed again");
                }
            } finally {
                limit.set(ValueLayout.JAVA_LONG, 0, soft);
                final int ignored = (int) SETRLIMIT.invokeExact(RLIMIT_NOFILE, limit);
            }
        }
    }

    @Test
    void shouldFailWithEnodevOffLinux() {
        final String os = System.getProperty("os.name");
        System.setProperty("os.name", "Plan 9");
        try {
            final DetException e = assertThrows(DetException.class, () -> new UdpLink(LOCAL));
            assertEquals(Errno.ENODEV, e.errno());
        } finally {
            System.setProperty("os.name", os);
        }
    }

    @Test
    void shouldCloseWhileAnotherThreadWaitsInPoll() throws InterruptedException {
        final UdpLink link = new UdpLink(LOCAL);
        final Thread waiter = Thread.ofPlatform().start(() -> link.await(20_000_000_000L));
        Tests.await("the waiter is inside await", () -> link.unlockedCalls() == 1);
        link.close();
        waiter.join(Tests.TIMEOUT.toMillis());
        assertFalse(waiter.isAlive(), "close woke the waiter");
        assertEquals(0, link.unlockedCalls());
        link.close(); // twice does nothing
        link.await(1_000_000_000L); // returns at once on a closed link
        link.wakeup();
        final FrameGather none = new FrameGather(0);
        assertThrows(IllegalStateException.class,
            () -> link.send(UdpAddress.handle(0x7F000001, 9), LinkFrames.header(1, none), HEADER, none));
        assertThrows(IllegalStateException.class, () -> link.receive(new LinkFrames.Received(), 4));
    }

    @Test
    void shouldDropRuntsAndCorruptDatagramsAndDeliverGoodOnesWithTheirSource() throws IOException {
        try (UdpLink link = new UdpLink(LOCAL); UdpLink peer = new UdpLink(LOCAL);
             DatagramChannel raw = DatagramChannel.open()) {
            final InetSocketAddress target = new InetSocketAddress("127.0.0.1", port(link));
            raw.send(ByteBuffer.allocate(HEADER - 1), target);
            raw.send(ByteBuffer.allocate(0), target);
            final ByteBuffer corrupt = ByteBuffer.allocate(HEADER + 10);
            corrupt.put(0, (byte) 1);
            corrupt.put(FrameCrc.CRC_OFFSET, (byte) 1); // a CRC, and a wrong one (a 0 from loopback is none)
            raw.send(corrupt, target);
            final FrameGather payload = LinkFrames.payload(100, 0x42);
            final MemorySegment header = LinkFrames.header(7, payload);
            final long toLink = peer.resolve(link.address());
            assertTrue(peer.send(toLink, header, HEADER, payload));
            assertTrue(peer.send(toLink, header, HEADER, payload)); // the cached destination
            final LinkFrames.Received received = new LinkFrames.Received();
            receive(link, received, 5);
            assertEquals(2, received.frames.size());
            assertEquals(HEADER + 100, received.frames.get(0).length);
            assertEquals(peer.address(), link.describe(received.peers.get(0)));
            assertEquals(link.resolve(peer.address()), received.peers.get(0));
            final Map<String, Long> counters = counters(link);
            assertEquals(2L, counters.get("link.rx.truncated"));
            assertEquals(1L, counters.get("link.rx.bad_crc"));
            assertEquals(0L, counters.get("link.rx.not_ipv4"));
        }
    }

    @Test
    void shouldHandOverNoMoreThanAskedAndKeepTheRestForTheNextCall() {
        try (UdpLink link = new UdpLink(LOCAL); UdpLink peer = new UdpLink(LOCAL)) {
            final FrameGather payload = LinkFrames.payload(10, 1);
            final MemorySegment header = LinkFrames.header(1, payload);
            for (int i = 0; i < 3; i++) {
                assertTrue(peer.send(peer.resolve(link.address()), header, HEADER, payload));
            }
            final LinkFrames.Received received = new LinkFrames.Received();
            Tests.await("a datagram arrived", () -> link.receive(received, 1) == 1);
            assertEquals(1, received.frames.size());
            receive(link, received, 2);
            assertEquals(3, received.frames.size());
            assertEquals(0, link.receive(received, 16), "nothing waits");
        }
    }

    @Test
    void shouldStageHeapMemoryAndLongGatherListsInOnePiece() {
        try (UdpLink link = new UdpLink(LOCAL); UdpLink peer = new UdpLink(LOCAL)) {
            final byte[] heap = new byte[200];
            java.util.Arrays.fill(heap, (byte) 9);
            final FrameGather fromHeap = new FrameGather(1);
            fromHeap.add(MemorySegment.ofArray(heap), ByteBuffer.wrap(heap), 0, heap.length);
            final ByteBuffer bytes = ByteBuffer.allocateDirect(1100);
            final MemorySegment memory = MemorySegment.ofBuffer(bytes);
            memory.fill((byte) 3);
            final FrameGather manyPieces = new FrameGather(1100);
            for (int i = 0; i < 1100; i++) {
                manyPieces.add(memory, bytes, i, 1);
            }
            final FrameGather none = new FrameGather(0);
            final byte[] heapHeader = LinkFrames.header(3, none).toArray(ValueLayout.JAVA_BYTE);
            final long toLink = peer.resolve(link.address());
            assertTrue(peer.send(toLink, LinkFrames.header(1, fromHeap), HEADER, fromHeap));
            assertTrue(peer.send(toLink, LinkFrames.header(2, manyPieces), HEADER, manyPieces));
            assertTrue(peer.send(toLink, MemorySegment.ofArray(heapHeader), HEADER, none));
            final LinkFrames.Received received = new LinkFrames.Received();
            receive(link, received, 3);
            assertEquals(3, received.frames.size(), "every CRC right");
            final byte[] expected = new byte[1100];
            java.util.Arrays.fill(expected, (byte) 3);
            assertArrayEquals(expected, java.util.Arrays.copyOfRange(received.frames.get(1), HEADER, HEADER + 1100));
        }
    }

    @Test
    void shouldLoseFramesTheKernelRefusesAndCountThem() {
        try (UdpLink link = new UdpLink(LOCAL); Arena arena = Arena.ofConfined()) {
            final MemorySegment big = arena.allocate(70_000);
            final FrameGather tooLong = new FrameGather(1);
            tooLong.add(big, big.asByteBuffer(), 0, 70_000);
            final FrameGather tooLongOnHeap = new FrameGather(1);
            tooLongOnHeap.add(MemorySegment.ofArray(new byte[70_000]), ByteBuffer.allocate(70_000), 0, 70_000);
            final FrameGather none = new FrameGather(0);
            final long self = link.resolve(link.address());
            assertTrue(link.send(self, LinkFrames.header(1, none), HEADER, tooLong), "EMSGSIZE: lost");
            assertTrue(link.send(self, LinkFrames.header(1, none), HEADER, tooLongOnHeap), "too long to stage");
            final long broadcast = UdpAddress.handle(0xFFFFFFFF, 9);
            assertTrue(link.send(broadcast, LinkFrames.header(1, none), HEADER, none), "EACCES: lost");
            assertEquals(3L, counters(link).get("link.tx.errors"));
            assertEquals(null, counters(link).get("link.tx.staged"), "every frame is staged: nothing to count");
        }
    }

    @Test
    void shouldWakeAWaiterAndReturnWhenADatagramWaits() throws InterruptedException {
        try (UdpLink link = new UdpLink(LOCAL); UdpLink peer = new UdpLink(LOCAL)) {
            link.await(0);
            link.await(-5);
            link.wakeup();
            assertAwaitReturns(link, "a wakeup before the wait ends it");
            final Thread waiter = Thread.ofPlatform().start(() -> link.await(60_000_000_000L));
            Tests.await("the waiter is inside await", () -> link.unlockedCalls() == 1);
            link.wakeup();
            waiter.join(Tests.TIMEOUT.toMillis());
            assertFalse(waiter.isAlive(), "a wakeup during the wait ends it");
            final FrameGather none = new FrameGather(0);
            assertTrue(peer.send(peer.resolve(link.address()), LinkFrames.header(1, none), HEADER, none));
            assertAwaitReturns(link, "a waiting datagram ends the wait");
            assertAwaitReturns(link, "the datagram still waits: the wait still ends");
            receive(link, new LinkFrames.Received(), 1);
            assertEquals(65_507, link.mtu());
            assertTrue(link.toString().contains(link.address()), link.toString());
        }
    }
}
