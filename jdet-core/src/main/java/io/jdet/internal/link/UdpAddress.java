package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Enumeration;

/**
 * UDP link addresses: parsing NIC names, the frame size an interface allows, and peer handles. A peer handle packs
 * an IPv4 address and a port into a non-negative {@code long} ({@code ip << 16 | port}), so the receive path can
 * compare senders without allocating.
 *
 * @param ip   the IPv4 address, most significant byte first
 * @param port the port, 0 for any free one
 * @param mtu  the interface MTU in bytes, or -1 if unknown
 */
record UdpAddress(int ip, int port, int mtu) {
    /** UDP and IPv4 headers: what an IP MTU loses to reach the UDP payload. */
    static final int IP_UDP_OVERHEAD = 28;
    /** The largest UDP payload over IPv4. */
    static final int MAX_UDP_PAYLOAD = 65_507;
    /** The frame size when the interface MTU is unknown: a 1500-byte Ethernet's. */
    static final int DEFAULT_FRAME = 1_472;
    /**
     * The smallest frame size limit: the UDP payload of the 576-byte datagram every IPv4 host reassembles (RFC 791).
     * An interface's MTU may be as low as 68, leaving less than a frame header; IP fragments the larger datagram.
     */
    static final int MIN_FRAME = 576 - IP_UDP_OVERHEAD;

    /**
     * The frame size limit this address's interface allows.
     *
     * @return the largest UDP payload, header included; at least {@link #MIN_FRAME}
     */
    int frameLimit() {
        return mtu <= IP_UDP_OVERHEAD ? DEFAULT_FRAME
            : Math.min(MAX_UDP_PAYLOAD, Math.max(MIN_FRAME, mtu - IP_UDP_OVERHEAD));
    }

    /**
     * Parses a NIC name: {@code udp:<address>[:<port>]} or an interface name such as {@code lo} (its first IPv4
     * address, any free port).
     *
     * @param name the NIC name
     * @return the address to bind
     * @throws DetException ENODEV if the name names no usable IPv4 address or interface
     */
    static UdpAddress parseNicName(final String name) {
        if (name.startsWith("udp:")) {
            final UdpAddress a = parse(name.substring(4), true);
            if (a == null) {
                throw new DetException(Errno.ENODEV, "cannot use " + name + ": need udp:<IPv4 address>[:<port>]");
            }
            if (a.ip == 0) {
                throw new DetException(Errno.ENODEV, name + ": bind a specific address, not the wildcard");
            }
            return new UdpAddress(a.ip, a.port, interfaceMtu(a.ip));
        }
        try {
            final NetworkInterface nif = NetworkInterface.getByName(name);
            if (nif == null || !nif.isUp()) {
                throw new DetException(Errno.ENODEV, "no interface " + name + " that is up");
            }
            final Enumeration<InetAddress> addresses = nif.getInetAddresses();
            while (addresses.hasMoreElements()) {
                final InetAddress address = addresses.nextElement();
                if (address instanceof Inet4Address v4) {
                    return new UdpAddress(toInt(v4), 0, nif.getMTU());
                }
            }
            throw new DetException(Errno.ENODEV, "interface " + name + " has no IPv4 address");
        } catch (final SocketException e) {
            throw new DetException(Errno.ENODEV, "interface " + name + ": " + e.getMessage());
        }
    }

    /**
     * Parses a peer address as {@link UdpLink#address()} gives it ({@code udp:<address>:<port>}; the prefix may be
     * left out).
     *
     * @param address the peer address
     * @return the peer handle, or -1 if the address is not a reachable IPv4 address with a port
     */
    static long resolvePeer(final String address) {
        if (address == null) {
            return -1;
        }
        final UdpAddress a = parse(address.startsWith("udp:") ? address.substring(4) : address, false);
        return a == null || a.port == 0 || a.ip == 0 ? -1 : handle(a.ip, a.port);
    }

    private static UdpAddress parse(final String hostPort, final boolean portOptional) {
        final int colon = hostPort.lastIndexOf(':');
        final String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
        int port = 0;
        if (colon >= 0) {
            try {
                port = Integer.parseInt(hostPort.substring(colon + 1));
            } catch (final NumberFormatException e) {
                return null;
            }
        } else if (!portOptional) {
            return null;
        }
        if (port < 0 || port > 65535 || host.isEmpty() || host.indexOf(':') >= 0) {
            return null;
        }
        try {
            for (final InetAddress candidate : InetAddress.getAllByName(host)) {
                if (candidate instanceof Inet4Address v4) {
                    return new UdpAddress(toInt(v4), port, -1);
                }
            }
            return null;
        } catch (final UnknownHostException e) {
            return null;
        }
    }

    /**
     * The MTU of the interface an address to bind is on. An address configured on no interface is left to the
     * kernel's bind, which refuses one that is not this host's (EADDRNOTAVAIL, reported as ENODEV): every address of
     * 127.0.0.0/8 is local on Linux though only 127.0.0.1 is configured on {@code lo} (a Debian host name resolves
     * to 127.0.1.1), and those take the loopback interface's MTU; any other gets -1, the default frame limit.
     * Multicast and broadcast addresses, a subnet's included (which the kernel would bind), are refused here.
     *
     * @param ip the address
     * @return the MTU, or -1 if unknown
     * @throws DetException ENODEV for a multicast or broadcast address, or if the interfaces cannot be listed
     */
    private static int interfaceMtu(final int ip) {
        try {
            final InetAddress address = toAddress(ip);
            if (address.isMulticastAddress() || ip == -1) {
                throw new DetException(Errno.ENODEV, format(ip) + " is a multicast or broadcast address");
            }
            final NetworkInterface nif = NetworkInterface.getByInetAddress(address);
            if (nif != null) {
                return nif.getMTU();
            }
            int loopbackMtu = -1;
            final Enumeration<NetworkInterface> all = NetworkInterface.getNetworkInterfaces();
            while (all != null && all.hasMoreElements()) {
                final NetworkInterface candidate = all.nextElement();
                for (final InterfaceAddress configured : candidate.getInterfaceAddresses()) {
                    if (address.equals(configured.getBroadcast())) { // Linux binds a subnet's broadcast address
                        throw new DetException(Errno.ENODEV, format(ip) + " is the broadcast address of "
                            + candidate.getName());
                    }
                }
                if (candidate.isLoopback() && candidate.isUp()) {
                    loopbackMtu = candidate.getMTU();
                }
            }
            return ip >>> 24 == 127 ? loopbackMtu : -1;
        } catch (final SocketException e) {
            throw new DetException(Errno.ENODEV, format(ip) + ": " + e.getMessage());
        }
    }

    static int toInt(final Inet4Address address) {
        final byte[] b = address.getAddress();
        return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | b[3] & 0xFF;
    }

    static InetAddress toAddress(final int ip) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8),
                (byte) ip});
        } catch (final UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Whether an address is on the host's loopback network, 127.0.0.0/8: a datagram from there was sent by this
     * host over its loopback interface, since Linux drops one that arrives elsewhere with such a source (a martian,
     * unless an administrator sets {@code route_localnet}).
     */
    static boolean loopback(final int ip) {
        return ip >>> 24 == 127;
    }

    static long handle(final int ip, final int port) {
        return (ip & 0xFFFF_FFFFL) << 16 | port & 0xFFFF;
    }

    static int handleIp(final long handle) {
        return (int) (handle >>> 16);
    }

    static int handlePort(final long handle) {
        return (int) (handle & 0xFFFF);
    }

    static String format(final int ip) {
        return (ip >>> 24) + "." + (ip >>> 16 & 0xFF) + "." + (ip >>> 8 & 0xFF) + "." + (ip & 0xFF);
    }

    static String describe(final long handle) {
        return "udp:" + format(handleIp(handle)) + ":" + handlePort(handle);
    }
}
