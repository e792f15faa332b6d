package io.jdet.samples.pingpong;

import io.jdet.Access;
import io.jdet.ConnectionListener;
import io.jdet.ConnectionRequest;
import io.jdet.WorkCompletion;
import io.jdet.samples.Endpoint;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A send/receive ping-pong between two processes: the client connects through the connection manager, telling
 * the server in its private data how many messages of which size will come; it sends each one and waits for the
 * server to send it back, checks every byte, and prints the median round trip.
 *
 * <pre>
 * java -cp ... io.jdet.samples.pingpong.PingPong server udp:127.0.0.1:7000
 * java -cp ... io.jdet.samples.pingpong.PingPong client udp:127.0.0.1:7000 [count] [size]
 * </pre>
 */
public final class PingPong {
    /** The service id both ends agree on. */
    public static final int SERVICE = 0x5050;
    /** The longest wait for anything, in milliseconds. */
    static final long TIMEOUT_MS = 10_000;

    private PingPong() {
    }

    /**
     * Runs one end.
     *
     * @param args {@code server <nic>} or {@code client <server address> [count] [size]}
     */
    public static void main(final String[] args) {
        if (args.length >= 2 && args[0].equals("server")) {
            serve(args[1], System.out);
        } else if (args.length >= 2 && args[0].equals("client")) {
            final int count = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
            final int size = args.length > 3 ? Integer.parseInt(args[3]) : 64;
            ping(args[1], count, size, System.out);
        } else {
            System.err.println("usage: PingPong server <udp:address:port> | client <udp:address:port> [count] [size]");
            System.exit(2);
        }
    }

    /**
     * The server: serves one client, echoing every message it receives, then waits for the client to disconnect.
     *
     * @param nicName the NIC to listen on, such as {@code udp:127.0.0.1:7000} ({@code :0} for any free port)
     * @param out     where it reports; the first line is {@code listening on <address>}
     */
    public static void serve(final String nicName, final PrintStream out) {
        try (Endpoint end = new Endpoint(nicName, 1 << 16, Access.LOCAL_READ | Access.LOCAL_WRITE, 4);
             ConnectionListener listener = end.nic.connectionManager().listen(SERVICE)) {
            out.println("listening on " + end.nic.address());
            out.flush();
            final ConnectionRequest request = listener.take(TIMEOUT_MS);
            final ByteBuffer asked = ByteBuffer.wrap(request.privateData());
            final int count = asked.getInt();
            final int size = asked.getInt();
            if (size < 0 || size > end.buffer.byteSize()) {
                request.reject(("size " + size + " is more than " + end.buffer.byteSize()).getBytes(StandardCharsets.UTF_8));
                return;
            }
            end.qp.recv(0, end.at(0, size), 1); // the first message must find a receive
            request.accept(end.qp, null, TIMEOUT_MS);
            for (int i = 0; i < count; i++) {
                final WorkCompletion received = end.next(TIMEOUT_MS);
                final int length = received.length();
                end.qp.send(i, end.at(0, length), 1, 0, 0); // the echo, from the bytes just received
                end.next(TIMEOUT_MS);                        // sent: the buffer is free again
                if (i + 1 < count) {
                    end.qp.recv(i + 1, end.at(0, size), 1);
                }
            }
            end.awaitDisconnect(TIMEOUT_MS);
            out.println("echoed " + count + " messages of " + size + " bytes to " + request.remoteAddress());
        }
    }

    /**
     * The client: connects, sends {@code count} messages of {@code size} bytes one after another, checks each
     * echo, and disconnects.
     *
     * @param server the server's address, as it printed it
     * @param count  how many messages
     * @param size   the bytes in each
     * @param out    where it reports the median round trip
     * @return the median round trip in nanoseconds
     * @throws IllegalStateException if an echo differs from what was sent
     */
    public static long ping(final String server, final int count, final int size, final PrintStream out) {
        try (Endpoint end = new Endpoint(Endpoint.nicNameFor(server), 2L * size + 64,
            Access.LOCAL_READ | Access.LOCAL_WRITE, 4)) {
            final byte[] ask = ByteBuffer.allocate(8).putInt(count).putInt(size).array();
            end.nic.connectionManager().connect(server, SERVICE, end.qp, ask, TIMEOUT_MS);
            final MemorySegment ping = end.buffer.asSlice(0, size);
            final MemorySegment pong = end.buffer.asSlice(size, size);
            final long[] roundTrips = new long[count];
            for (int i = 0; i < count; i++) {
                for (int b = 0; b < size; b++) {
                    ping.set(ValueLayout.JAVA_BYTE, b, (byte) (i + b));
                }
                final long start = System.nanoTime();
                end.qp.recv(i, end.at(size, size), 1);
                end.qp.send(i, end.at(0, size), 1, 0, 0);
                end.next(TIMEOUT_MS); // the send and the echo's receive, in either order
                end.next(TIMEOUT_MS);
                roundTrips[i] = System.nanoTime() - start;
                if (ping.mismatch(pong) >= 0) {
                    throw new IllegalStateException("echo " + i + " differs at byte " + ping.mismatch(pong));
                }
            }
            end.nic.connectionManager().disconnect(end.qp, TIMEOUT_MS);
            Arrays.sort(roundTrips);
            final long median = count == 0 ? 0 : roundTrips[count / 2];
            out.printf("%d pings of %d bytes, every echo checked; median round trip %.1f us%n", count, size,
                median / 1000.0);
            return median;
        }
    }
}
