package io.jdet.internal.link;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * The Linux calls and layouts the raw Ethernet link needs beyond {@link Posix}: {@code AF_PACKET} sockets, the
 * interface {@code ioctl}s, {@code sendmmsg}, {@code getsockopt}. Constants and layouts are those of 64-bit Linux.
 * {@code ioctl} is variadic, so its handle says where the variadic arguments start; {@code sll_protocol} and the
 * {@code socket} protocol argument are in network byte order.
 */
final class PacketCalls {
    static final int AF_UNIX = 1;
    static final int AF_PACKET = 17;
    static final int SOCK_RAW = 3;
    static final int SOL_PACKET = 263;
    static final int PACKET_STATISTICS = 6;
    static final int PACKET_IGNORE_OUTGOING = 23;
    static final long SIOCGIFFLAGS = 0x8913;
    static final long SIOCGIFMTU = 0x8921;
    static final long SIOCGIFHWADDR = 0x8927;
    static final long SIOCGIFINDEX = 0x8933;
    static final int IFF_UP = 1;
    static final int ARPHRD_ETHER = 1;
    static final int MSG_TRUNC = 0x20;

    static final int EPERM = 1;
    static final int ENXIO = 6;
    static final int EACCES = 13;
    static final int ENODEV = 19;
    static final int EADDRINUSE = 98;

    /** {@code struct ifreq}: the name (16 bytes), then a union at 16 (int, or a sockaddr whose data starts at 18). */
    static final int IFREQ_SIZE = 40;
    static final int IFNAMSIZ = 16;
    static final int IFR_UNION = 16;
    static final int IFR_HWADDR_DATA = 18;
    /** {@code struct sockaddr_ll}: family, protocol (network order), ifindex, hatype, pkttype, halen, addr[8]. */
    static final int SOCKADDR_LL_SIZE = 20;
    /** Where {@code sll_pkttype} lies in a {@code sockaddr_ll}. */
    static final int SLL_PKTTYPE = 10;
    /** {@code PACKET_HOST}: a frame addressed to this host. */
    static final byte PACKET_HOST = 0;
    static final int SLL_PROTOCOL = 2;
    static final int SLL_IFINDEX = 4;
    /** {@code struct sockaddr_un}: family, then 108 bytes of path (abstract when it starts with a zero byte). */
    static final int SOCKADDR_UN_SIZE = 110;
    /** {@code struct msghdr}'s flags field. */
    static final int MSG_FLAGS = 48;
    /** {@code struct tpacket_stats}: packets, drops (both u32). */
    static final int TPACKET_STATS_SIZE = 8;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    /** {@code int ioctl(int fd, unsigned long request, ...)}, called with one pointer argument. */
    static final MethodHandle IOCTL = Posix.bind("ioctl", FunctionDescriptor.of(INT, INT, LONG, ValueLayout.ADDRESS),
        Posix.ERRNO, Linker.Option.firstVariadicArg(2));
    /** {@code int getsockopt(int fd, int level, int name, void *value, socklen_t *len)}. */
    static final MethodHandle GETSOCKOPT = Posix.bind("getsockopt", FunctionDescriptor.of(INT, INT, INT, INT,
        ValueLayout.ADDRESS, ValueLayout.ADDRESS), Posix.ERRNO);

    private PacketCalls() {
    }

    /**
     * Writes an interface name into an {@code ifreq} and clears the rest.
     *
     * @param ifreq the {@code ifreq} memory
     * @param name  the interface name, at most 15 ASCII bytes
     */
    static void ifreq(final MemorySegment ifreq, final String name) {
        ifreq.fill((byte) 0);
        final byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(bytes, 0, ifreq, ValueLayout.JAVA_BYTE, 0, Math.min(bytes.length, IFNAMSIZ - 1));
    }

    /**
     * Writes a {@code sockaddr_ll} that binds a packet socket to one EtherType on one interface.
     *
     * @param sa        the memory
     * @param etherType the EtherType
     * @param ifindex   the interface index
     */
    static void sockaddrLl(final MemorySegment sa, final int etherType, final int ifindex) {
        sa.fill((byte) 0);
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_PACKET);
        sa.set(Posix.NET_SHORT, SLL_PROTOCOL, (short) etherType);
        sa.set(ValueLayout.JAVA_INT, SLL_IFINDEX, ifindex);
    }

    /**
     * Writes an abstract {@code sockaddr_un} (its path starts with a zero byte, so it names no file and lives as
     * long as the socket bound to it, in the caller's network namespace).
     *
     * @param sa   the memory ({@link #SOCKADDR_UN_SIZE} bytes)
     * @param name the abstract name, at most 100 ASCII bytes
     * @return the address length to pass to {@code bind}
     */
    static int abstractSockaddrUn(final MemorySegment sa, final String name) {
        sa.fill((byte) 0);
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
        final byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(bytes, 0, sa, ValueLayout.JAVA_BYTE, 3, bytes.length);
        return 3 + bytes.length;
    }
}
