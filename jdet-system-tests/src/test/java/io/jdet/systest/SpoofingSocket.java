package io.jdet.systest;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A raw IPv4 socket ({@code socket(AF_INET, SOCK_RAW, IPPROTO_RAW)}, so the caller writes the IP header) through the
 * foreign function API: sends UDP datagrams with any source address and port, as an off-path spoofer does. Needs
 * root (CAP_NET_RAW); {@link #open()} returns null where it cannot be had, for {@link Preconditions} to decide.
 */
final class SpoofingSocket implements AutoCloseable {
    private static final int AF_INET = 2;
    private static final int SOCK_RAW = 3;
    private static final int IPPROTO_RAW = 255;
    private static final int IPPROTO_UDP = 17;
    private static final MethodHandle SOCKET;
    private static final MethodHandle SENDTO;
    private static final MethodHandle CLOSE;

    static {
        final Linker linker = Linker.nativeLinker();
        SOCKET = linker.downcallHandle(linker.defaultLookup().find("socket").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT));
        SENDTO = linker.downcallHandle(linker.defaultLookup().find("sendto").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        CLOSE = linker.downcallHandle(linker.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment packet = arena.allocate(65_536, 8);
    private final MemorySegment address = arena.allocate(16, 4);
    /** Datagrams sent. */
    long sent;

    private SpoofingSocket(final int fd) {
        this.fd = fd;
    }

    /** @return the socket, or null without the privilege for a raw socket */
    static SpoofingSocket open() {
        try {
            final int fd = (int) SOCKET.invokeExact(AF_INET, SOCK_RAW, IPPROTO_RAW);
            return fd < 0 ? null : new SpoofingSocket(fd);
        } catch (final Throwable e) {
            return null;
        }
    }

    /** @return the socket; skips the test (fails it in CI) where no raw socket can be had */
    static SpoofingSocket require() {
        final SpoofingSocket s = open();
        Preconditions.require(s != null, "a raw IPv4 socket needs root (CAP_NET_RAW)");
        return s;
    }

    /**
     * Sends one UDP datagram with a forged source.
     *
     * @param srcIp   the source address claimed
     * @param srcPort the source port claimed
     * @param dstIp   the destination address
     * @param dstPort the destination port
     * @param payload the UDP payload (a jdet frame), from position to limit
     */
    void send(final InetAddress srcIp, final int srcPort, final InetAddress dstIp, final int dstPort,
              final ByteBuffer payload) {
        final int n = payload.remaining();
        final ByteBuffer p = packet.asByteBuffer().order(ByteOrder.BIG_ENDIAN);
        p.put((byte) 0x45).put((byte) 0).putShort((short) (28 + n)).putShort((short) 0).putShort((short) 0x4000)
            .put((byte) 64).put((byte) IPPROTO_UDP).putShort((short) 0).put(srcIp.getAddress())
            .put(dstIp.getAddress()); // the kernel fills in the id and the header checksum
        p.putShort((short) srcPort).putShort((short) dstPort).putShort((short) (8 + n)).putShort((short) 0);
        p.put(payload.duplicate());
        final ByteBuffer a = address.asByteBuffer().order(ByteOrder.BIG_ENDIAN);
        a.order(ByteOrder.nativeOrder()).putShort((short) AF_INET);
        a.order(ByteOrder.BIG_ENDIAN).putShort((short) dstPort).put(dstIp.getAddress()).putLong(0);
        try {
            final long r = (long) SENDTO.invokeExact(fd, packet, (long) (28 + n), 0, address, 16);
            if (r != 28 + n) {
                throw new IllegalStateException("sendto returned " + r);
            }
        } catch (final RuntimeException | Error e) {
            throw e;
        } catch (final Throwable e) {
            throw new IllegalStateException(e);
        }
        sent++;
    }

    @Override
    public void close() {
        try {
            final int ignored = (int) CLOSE.invokeExact(fd);
        } catch (final Throwable e) {
            throw new IllegalStateException(e);
        } finally {
            arena.close();
        }
    }
}
