package io.jdet.perf.baseline;

import io.jdet.perf.PerfException;
import io.jdet.perf.TestKind;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.PingPong;
import io.jdet.perf.rig.Spinner;
import io.jdet.perf.rig.Stream;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * Opens the baselines' channels and wraps them as the rig's {@link PingPong} and {@link Stream}. UDP channels get
 * 4 MiB socket buffers (as the system allows) and are connected, so reads and writes need no addresses; TCP
 * channels get TCP_NODELAY. The side channel carries the port numbers between the ends.
 */
public final class Baselines {
    /** Socket buffer size asked for the UDP channels. */
    public static final int UDP_BUFFER_BYTES = 4 << 20;
    private static final int MAX_WINDOW = 64;
    /** Kernel bookkeeping per queued datagram, a rough upper bound used to size the credit window. */
    private static final int DATAGRAM_OVERHEAD = 1024;

    private Baselines() {
    }

    /**
     * How a baseline end runs.
     *
     * @param blocking whether channels block (wait mode)
     * @param verify   whether to check every byte
     * @param pattern  the bytes to send and expect
     * @param spinner  the busy-poll deadline (its timeout also bounds blocking calls)
     */
    public record Setup(boolean blocking, boolean verify, Pattern pattern, Spinner spinner) {
    }

    /**
     * Opens a UDP channel on an ephemeral port of a local address.
     *
     * @param local the address to bind
     * @return the channel, not yet connected
     * @throws PerfException if it cannot be opened
     */
    public static DatagramChannel openUdp(final InetAddress local) {
        try {
            final DatagramChannel channel = DatagramChannel.open(local instanceof java.net.Inet6Address
                ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
            channel.setOption(StandardSocketOptions.SO_RCVBUF, UDP_BUFFER_BYTES);
            channel.setOption(StandardSocketOptions.SO_SNDBUF, UDP_BUFFER_BYTES);
            channel.bind(new InetSocketAddress(local, 0));
            return channel;
        } catch (final IOException e) {
            throw new PerfException("cannot open a UDP socket on " + local.getHostAddress() + ": " + e, e);
        }
    }

    /**
     * The port a channel is bound to.
     *
     * @param channel a bound UDP channel
     * @return the port
     */
    public static int port(final DatagramChannel channel) {
        try {
            return ((InetSocketAddress) channel.getLocalAddress()).getPort();
        } catch (final IOException e) {
            throw new PerfException("no local address: " + e, e);
        }
    }

    /**
     * Connects a UDP channel to the peer's.
     *
     * @param channel the channel
     * @param peer    the peer's address and port
     */
    public static void connect(final DatagramChannel channel, final InetSocketAddress peer) {
        try {
            channel.connect(peer);
        } catch (final IOException e) {
            throw new PerfException("cannot connect UDP to " + peer + ": " + e, e);
        }
    }

    /**
     * Opens a TCP listener on an ephemeral port of a local address.
     *
     * @param local the address to bind
     * @return the listener
     */
    public static ServerSocketChannel listenTcp(final InetAddress local) {
        try {
            final ServerSocketChannel listener = ServerSocketChannel.open();
            listener.bind(new InetSocketAddress(local, 0), 1);
            return listener;
        } catch (final IOException e) {
            throw new PerfException("cannot listen on TCP at " + local.getHostAddress() + ": " + e, e);
        }
    }

    /**
     * The port a listener is bound to.
     *
     * @param listener the listener
     * @return the port
     */
    public static int port(final ServerSocketChannel listener) {
        return listener.socket().getLocalPort();
    }

    /**
     * Accepts the peer's TCP connection.
     *
     * @param listener  the listener
     * @param timeoutMs the longest wait
     * @return the connection, with TCP_NODELAY
     * @throws PerfException on timeout
     */
    public static SocketChannel accept(final ServerSocketChannel listener, final long timeoutMs) {
        try {
            final ServerSocket socket = listener.socket();
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMs));
            final Socket accepted = socket.accept();
            final SocketChannel channel = accepted.getChannel();
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            return channel;
        } catch (final SocketTimeoutException e) {
            throw new PerfException("the peer did not connect its TCP baseline within " + timeoutMs + " ms", e);
        } catch (final IOException e) {
            throw new PerfException("cannot accept the TCP baseline connection: " + e, e);
        }
    }

    /**
     * Connects to the peer's TCP listener.
     *
     * @param peer      the peer's address and port
     * @param timeoutMs the longest wait
     * @return the connection, with TCP_NODELAY
     */
    public static SocketChannel connectTcp(final InetSocketAddress peer, final long timeoutMs) {
        try {
            final SocketChannel channel = SocketChannel.open();
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.socket().connect(peer, (int) Math.min(Integer.MAX_VALUE, timeoutMs));
            return channel;
        } catch (final IOException e) {
            throw new PerfException("cannot connect the TCP baseline to " + peer + ": " + e, e);
        }
    }

    /**
     * The UDP stream's credit window for a message size: as many datagrams as half the receive buffer holds, 2 to
     * 64.
     *
     * @param channel the channel (its receive buffer as granted)
     * @param size    the message size
     * @return the window in datagrams
     */
    public static int window(final DatagramChannel channel, final int size) {
        try {
            final int buffer = channel.getOption(StandardSocketOptions.SO_RCVBUF);
            final int datagram = Math.min(size, Datagrams.MAX_DATAGRAM) + DATAGRAM_OVERHEAD;
            return Math.clamp(buffer / 2 / datagram, 2, MAX_WINDOW);
        } catch (final IOException e) {
            throw new PerfException("cannot read SO_RCVBUF: " + e, e);
        }
    }

    /**
     * Wraps a UDP channel as a ping-pong end.
     *
     * @param channel a connected UDP channel
     * @param size    the message size
     * @param setup   how to run
     * @return the end
     */
    public static PingPong udpPingPong(final DatagramChannel channel, final int size, final Setup setup) {
        blocking(channel, setup);
        return new UdpPingPong(channel, size, setup);
    }

    /**
     * Wraps a UDP channel as a stream end.
     *
     * @param channel a connected UDP channel
     * @param size    the message size
     * @param setup   how to run
     * @return the end
     */
    public static Stream udpStream(final DatagramChannel channel, final int size, final Setup setup) {
        blocking(channel, setup);
        return new UdpStream(channel, size, window(channel, size), setup);
    }

    /**
     * Wraps a TCP connection as a ping-pong end.
     *
     * @param channel a connected socket channel
     * @param size    the message size
     * @param setup   how to run
     * @return the end
     */
    public static PingPong tcpPingPong(final SocketChannel channel, final int size, final Setup setup) {
        blocking(channel, setup);
        return new TcpPingPong(channel, size, setup);
    }

    /**
     * Wraps a TCP connection as a stream end.
     *
     * @param channel a connected socket channel
     * @param size    the message size
     * @param setup   how to run
     * @return the end
     */
    public static Stream tcpStream(final SocketChannel channel, final int size, final Setup setup) {
        blocking(channel, setup);
        return new TcpStream(channel, size, setup);
    }

    /**
     * Whether a baseline runs over UDP (else TCP).
     *
     * @param kind a baseline
     * @return true for the UDP ones
     */
    public static boolean udp(final TestKind kind) {
        return kind == TestKind.UDP_PINGPONG || kind == TestKind.UDP_STREAM;
    }

    private static void blocking(final java.nio.channels.SelectableChannel channel, final Setup setup) {
        try {
            channel.configureBlocking(setup.blocking());
        } catch (final IOException e) {
            throw new PerfException("cannot set the channel's blocking mode: " + e, e);
        }
    }
}
