package io.jdet.perf;

import io.jdet.perf.rig.StopSignal;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.concurrent.TimeUnit;

/**
 * The out-of-band TCP connection between the two ends, as det_perf's (port 45248 by default): the run's settings,
 * each test's queue pair numbers, NIC addresses, buffer addresses and remote keys, the baselines' ports, barriers,
 * and the end-of-test signal. Every read has the run's timeout.
 *
 * <p>On the wire each {@link Message} is one JSON object on one line (UTF-8, ended by a line feed), at most
 * {@link #MAX_MESSAGE} bytes. The client's HELLO and the server's WELCOME carry {@link #VERSION}; each end refuses
 * a peer of another version, so that two builds of the tool never misread each other's figures.
 */
public final class SideChannel implements StopSignal, AutoCloseable {
    /** The verb of an error report: the receiving end fails with its text. */
    public static final String ERROR = "ERROR";
    /** The protocol's version: 1 was the binary protocol before JSON, 2 is JSON lines. */
    public static final long VERSION = 2;
    /** The longest message accepted, in bytes. */
    public static final int MAX_MESSAGE = 1 << 20;

    private final Socket socket;
    private final BufferedInputStream buffered;
    private final OutputStream out;
    private final int timeoutMs;
    private final String peerName;

    private SideChannel(final Socket socket, final long timeoutMs, final String peerName) throws IOException {
        this.socket = socket;
        this.peerName = peerName;
        this.timeoutMs = (int) Math.min(Integer.MAX_VALUE, timeoutMs);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(this.timeoutMs);
        this.buffered = new BufferedInputStream(socket.getInputStream());
        this.out = new BufferedOutputStream(socket.getOutputStream());
    }

    /**
     * Connects to a server.
     *
     * @param host      the server's host
     * @param port      its side-channel port
     * @param timeoutMs the longest wait, for the connection and every later read
     * @return the channel
     * @throws PerfException if the server cannot be reached
     */
    public static SideChannel connect(final String host, final int port, final long timeoutMs) {
        final Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(InetAddress.getByName(host), port),
                (int) Math.min(Integer.MAX_VALUE, timeoutMs));
            return new SideChannel(socket, timeoutMs, "server");
        } catch (final UnknownHostException e) {
            closeQuietly(socket);
            throw new PerfException("unknown host " + host, e);
        } catch (final ConnectException e) {
            closeQuietly(socket);
            throw new PerfException("cannot reach a jdet perf server at " + host + ":" + port + ": "
                + e.getMessage() + " (start one with ./jdet perf --server)", e);
        } catch (final IOException e) {
            closeQuietly(socket);
            throw new PerfException("cannot reach a jdet perf server at " + host + ":" + port + ": " + e, e);
        }
    }

    /**
     * Opens the server's listening socket.
     *
     * @param bind the address to listen on, or null for every interface
     * @param port the port, 0 for any
     * @return the socket
     * @throws PerfException if the port is taken
     */
    public static ServerSocket listen(final InetAddress bind, final int port) {
        try {
            final ServerSocket server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(bind, port), 1);
            return server;
        } catch (final IOException e) {
            throw new PerfException("cannot listen on TCP port " + port + ": " + e.getMessage(), e);
        }
    }

    /**
     * Waits for the client.
     *
     * @param server    the listening socket
     * @param acceptMs  the longest wait for the client
     * @param timeoutMs the longest wait of every later read
     * @return the channel
     * @throws PerfException if no client came in time
     */
    public static SideChannel accept(final ServerSocket server, final long acceptMs, final long timeoutMs) {
        try {
            server.setSoTimeout((int) Math.min(Integer.MAX_VALUE, acceptMs));
            return new SideChannel(server.accept(), timeoutMs, "client");
        } catch (final SocketTimeoutException e) {
            throw new PerfException("no client connected within " + acceptMs / 1000 + " s", e);
        } catch (final IOException e) {
            throw new PerfException("accepting the client failed: " + e.getMessage(), e);
        }
    }

    /**
     * Sends a message.
     *
     * @param message the message
     * @throws PerfException if the connection is gone
     */
    public void send(final Message message) {
        try {
            out.write(message.toJson());
            out.write('\n');
            out.flush();
        } catch (final IOException e) {
            throw new PerfException("the peer is gone (side channel: " + e.getMessage() + ")", e);
        }
    }

    /**
     * Receives the next message.
     *
     * @return the message
     * @throws PerfException on timeout, a closed connection, a line that is not a message of this protocol, or an
     *                       {@link #ERROR} from the peer (its message, prefixed with {@code server:} or
     *                       {@code client:})
     */
    public Message receive() {
        final Message message;
        try {
            message = Message.fromJson(readLine());
        } catch (final SocketTimeoutException e) {
            throw new PerfException("timed out after " + timeoutMs + " ms waiting for the peer", e);
        } catch (final EOFException e) {
            throw new PerfException("the peer closed the side channel", e);
        } catch (final IOException e) {
            throw new PerfException("the peer is gone (side channel: " + e.getMessage() + ")", e);
        }
        if (ERROR.equals(message.verb())) {
            throw new PerfException(peerName + ": " + message.texts().getOrDefault("message", "failed"));
        }
        return message;
    }

    /** One line of JSON, without its line feed; an older peer's binary message fails at its first byte. */
    private byte[] readLine() throws IOException {
        final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        // The timeout bounds the whole message, not each read: a peer trickling a byte just inside it must not
        // hold this end for MAX_MESSAGE timeouts.
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        try {
            for (int b = readBefore(deadline); b != '\n'; b = readBefore(deadline)) {
                if (b < 0) {
                    throw new EOFException();
                }
                if (line.size() == 0 && b != '{') {
                    throw new PerfException("side channel: the " + peerName + " does not speak version " + VERSION
                        + " of the protocol (JSON lines); run the same jdet build at both ends");
                }
                if (line.size() == MAX_MESSAGE) {
                    throw new PerfException("side channel: a message longer than " + MAX_MESSAGE + " bytes");
                }
                line.write(b);
            }
        } finally {
            try {
                socket.setSoTimeout(timeoutMs);
            } catch (final IOException e) {
                // A broken socket fails the next read with its own message.
            }
        }
        return line.toByteArray();
    }

    /** The next byte, waiting no later than the deadline. */
    private int readBefore(final long deadline) throws IOException {
        if (buffered.available() == 0) {
            final long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (leftMs <= 0) {
                throw new SocketTimeoutException("the message did not come whole within the timeout");
            }
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, leftMs));
        }
        return buffered.read();
    }

    /**
     * Checks the peer's protocol version, from its HELLO or WELCOME.
     *
     * @param message the HELLO or WELCOME
     * @throws PerfException if the version is missing or not {@link #VERSION}
     */
    public void checkVersion(final Message message) {
        final Object version = message.fields().get("version");
        if (!(version instanceof Long v) || v != VERSION) {
            throw new PerfException("side channel: the " + peerName + " speaks protocol version "
                + (version == null ? "1 (or none)" : version) + ", this end " + VERSION
                + "; run the same jdet build at both ends");
        }
    }

    /**
     * Receives the next message and checks its verb.
     *
     * @param verb the verb expected
     * @return the message
     * @throws PerfException if another message came
     */
    public Message expect(final String verb) {
        final Message message = receive();
        if (!verb.equals(message.verb())) {
            throw new PerfException("side channel: expected " + verb + ", got " + message.verb());
        }
        return message;
    }

    /**
     * Both ends meet: each sends, then waits for the other's.
     *
     * @param name the barrier's name, checked at both ends
     */
    public void barrier(final String name) {
        send(Message.of("BARRIER").with("name", name).build());
        final Message other = expect("BARRIER");
        if (!name.equals(other.text("name"))) {
            throw new PerfException("side channel: barrier " + name + " met barrier " + other.text("name"));
        }
    }

    /**
     * Tells the peer this end failed, if the connection still works.
     *
     * @param message what went wrong
     */
    public void sendError(final String message) {
        try {
            send(Message.of(ERROR).with("message", message).build());
        } catch (final PerfException e) {
            // The peer is gone already: it will learn of the failure from the closed connection.
        }
    }

    @Override
    public boolean stopRequested() {
        try {
            return buffered.available() > 0;
        } catch (final IOException e) {
            return true;
        }
    }

    @Override
    public boolean awaitStop(final long timeoutNs) {
        try {
            socket.setSoTimeout(Math.clamp(TimeUnit.NANOSECONDS.toMillis(timeoutNs), 1, Integer.MAX_VALUE));
            buffered.mark(1);
            buffered.read();
            buffered.reset();
            return true;
        } catch (final SocketTimeoutException e) {
            return false;
        } catch (final IOException e) {
            return true;
        } finally {
            try {
                socket.setSoTimeout(timeoutMs);
            } catch (final IOException e) {
                // A broken socket fails the next read with its own message.
            }
        }
    }

    /**
     * This end's address of the connection: where the peer reached us.
     *
     * @return the local address
     */
    public InetAddress localAddress() {
        return socket.getLocalAddress();
    }

    /**
     * The peer's address.
     *
     * @return the remote address
     */
    public InetAddress peerAddress() {
        return socket.getInetAddress();
    }

    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static void closeQuietly(final Socket socket) {
        try {
            socket.close();
        } catch (final IOException e) {
            // Nothing to do.
        }
    }
}
