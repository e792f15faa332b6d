package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What the raw Ethernet link learns of its interface through {@code ioctl} on its own socket, so in the socket's
 * network namespace (reading {@code /sys/class/net} would give the namespace that {@code /sys} was mounted in).
 *
 * @param index the interface index
 * @param mac   its MAC, 48 bits
 * @param mtu   its MTU: the largest Ethernet payload
 */
record EthInterface(int index, long mac, int mtu) {

    /**
     * Queries an interface.
     *
     * @param socket any socket in the interface's network namespace
     * @param name   the interface name
     * @param arena  where to allocate the request
     * @param errno  the errno capture segment
     * @return what the link needs to know
     * @throws DetException ENODEV if there is no such interface, it is down, or it is no Ethernet interface
     *                      (loopback, tunnels: their frames carry no MAC addresses to tell peers apart)
     * @throws Throwable    as a method handle may
     */
    static EthInterface query(final int socket, final String name, final Arena arena, final MemorySegment errno)
        throws Throwable {
        final MemorySegment ifreq = arena.allocate(PacketCalls.IFREQ_SIZE, 8);
        ioctl(socket, PacketCalls.SIOCGIFINDEX, ifreq, name, errno);
        final int index = ifreq.get(ValueLayout.JAVA_INT, PacketCalls.IFR_UNION);
        ioctl(socket, PacketCalls.SIOCGIFFLAGS, ifreq, name, errno);
        if ((ifreq.get(ValueLayout.JAVA_SHORT, PacketCalls.IFR_UNION) & PacketCalls.IFF_UP) == 0) {
            throw new DetException(Errno.ENODEV, "interface " + name + " is down (ip link set " + name + " up)");
        }
        ioctl(socket, PacketCalls.SIOCGIFMTU, ifreq, name, errno);
        final int mtu = ifreq.get(ValueLayout.JAVA_INT, PacketCalls.IFR_UNION);
        ioctl(socket, PacketCalls.SIOCGIFHWADDR, ifreq, name, errno);
        final int family = ifreq.get(ValueLayout.JAVA_SHORT, PacketCalls.IFR_UNION) & 0xFFFF;
        final long mac = EthFrame.mac(ifreq, PacketCalls.IFR_HWADDR_DATA);
        if (family != PacketCalls.ARPHRD_ETHER || !EthAddress.unicast(mac)) {
            throw new DetException(Errno.ENODEV, "interface " + name + " is no Ethernet interface with a unicast "
                + "MAC (hardware type " + family + "); for processes on one host use shm:<group>");
        }
        return new EthInterface(index, mac, mtu);
    }

    private static void ioctl(final int socket, final long request, final MemorySegment ifreq, final String name,
                              final MemorySegment errno) throws Throwable {
        PacketCalls.ifreq(ifreq, name);
        if ((int) PacketCalls.IOCTL.invokeExact(errno, socket, request, ifreq) != 0) {
            final int value = Posix.errno(errno);
            throw new DetException(Errno.ENODEV, value == PacketCalls.ENODEV || value == PacketCalls.ENXIO
                ? "no interface " + name + " in this network namespace"
                : "ioctl 0x" + Long.toHexString(request) + " on " + name + " failed: errno " + value);
        }
    }
}
