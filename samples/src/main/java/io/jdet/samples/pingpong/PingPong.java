package io.jdet.samples.pingpong;

import io.jdet.Access;
import io.jdet.ConnectionListener;
import io.jdet.ConnectionRequest;
import io.jdet.WcType;
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
    /** The longest wait for one step, in milliseconds. */
    static final long TIMEOUT_MS = 10_000;
    /** The longest wait for a client, in milliseconds: a person may start it by hand. */
    static final long CLIENT_WAIT_MS = 600_000;

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
        try (Endpoint end = new Endpoint(nicName, 2 << 16, Access.LOCAL_READ | Access.LOCAL_WRITE, 4);
             ConnectionListener listener = end.nic.connectionManager().listen(SERVICE)) {
            out.println("listening on " + end.nic.address());
            out.flush();
            final ConnectionRequest request = listener.take(CLIENT_WAIT_MS);
            final byte[] asked = request.privateData();
            final int count = asked.length == 8 ? ByteBuffer.wrap(asked).getInt(0) : -1;
            final int size = asked.length == 8 ? ByteBuffer.wrap(asked).getInt(4) : -1;
            if (count < 0 || size < 0 || 2L * size > end.buffer.byteSize()) {
                // The client's connect fails with a ConnectionRejectedException that carries this text.
                request.reject(("count and size must be >= 0, size <= " + end.buffer.byteSize() / 2)
                    .getBytes(StandardCharsets.UTF_8));
                out.println("rejected " + request.remoteAddress());
                return;
            }
            // Messages land in the first half of the buffer and echoes leave from a copy in the second, so the
            // next receive is posted before the echo goes out: the client's next message always finds one.
            final MemorySegment in = end.buffer.asSlice(0, size);
            final MemorySegment echo = end.buffer.asSlice(size, size);
            end.qp.recv(0, end.at(0, size), 1);
            request.accept(end.qp, null, TIMEOUT_MS);
            int received = 0;
            int echoesPosted = 0;
            int echoesSent = 0;
            int length = -1; // the length of a message not echoed yet, else -1
            // The last echo's completion is not awaited: the client disconnects once it has it.
            while (echoesPosted < count) {
                final WorkCompletion wc = end.next(TIMEOUT_MS);
                if (wc.type() == WcType.RECV) {
                    received++;
                    length = wc.length();
                } else {
                    echoesSent++; // the echo's bytes are free again
                }
                if (length >= 0 && echoesSent == echoesPosted) {
                    MemorySegment.copy(in, 0, echo, 0, length);
                    if (received < count) {
                        end.qp.recv(received, end.at(0, size), 1);
                    }
                    end.qp.send(echoesPosted++, end.at(size, length), 1, 0, 0);
                    length = -1;
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
     * @throws io.jdet.ConnectionRejectedException if the server refused the count or size; its private data says
     *                                             why
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
