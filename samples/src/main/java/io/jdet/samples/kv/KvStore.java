package io.jdet.samples.kv;

import io.jdet.Access;
import io.jdet.ConnectionListener;
import io.jdet.ConnectionRequest;
import io.jdet.DataSegment;
import io.jdet.QueuePair;
import io.jdet.RemoteRegion;
import io.jdet.samples.Endpoint;

import java.io.PrintStream;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * A key-value store that its server never touches after start: the server registers a table of 64-bit values
 * for remote reading and atomics and gives each client its address and remote key in the connection manager's
 * private data ({@link RemoteRegion}); clients read values one-sided (RDMA read) and update them with
 * compare-and-swap, so concurrent clients never lose an update. Keys are slot numbers.
 *
 * <pre>
 * java -cp ... io.jdet.samples.kv.KvStore server udp:127.0.0.1:7100 [slots] [clients]
 * java -cp ... io.jdet.samples.kv.KvStore client udp:127.0.0.1:7100 get 3 put 3 42 add 3 1 [times]...
 * </pre>
 */
public final class KvStore {
    /** The service id both ends agree on. */
    public static final int SERVICE = 0x4B56;
    /** The longest wait for one step, in milliseconds. */
    static final long TIMEOUT_MS = 10_000;
    /** The longest wait for the clients, in milliseconds: a person may start them by hand. */
    static final long CLIENT_WAIT_MS = 600_000;

    private KvStore() {
    }

    /**
     * Runs one end.
     *
     * @param args {@code server <nic> [slots] [clients]} or {@code client <server address> <command>...}
     */
    public static void main(final String[] args) {
        if (args.length >= 2 && args[0].equals("server")) {
            final int slots = args.length > 2 ? Integer.parseInt(args[2]) : 1024;
            final int clients = args.length > 3 ? Integer.parseInt(args[3]) : 1;
            serve(args[1], slots, clients, System.out);
        } else if (args.length >= 3 && args[0].equals("client")) {
            try (KvClient client = new KvClient(args[1])) {
                client.run(List.of(args).subList(2, args.length), System.out);
            }
        } else {
            System.err.println("usage: KvStore server <udp:address:port> [slots] [clients]\n"
                + "       KvStore client <udp:address:port> (get <slot> | put <slot> <value> | add <slot> <delta> "
                + "[times])...");
            System.exit(2);
        }
    }

    /**
     * The server: registers a zeroed table, accepts {@code clients} clients (one queue pair each), waits until
     * every one has disconnected, and prints every non-zero slot.
     *
     * @param nicName the NIC to listen on ({@code :0} for any free port)
     * @param slots   the table's size in values
     * @param clients how many clients to serve before exiting
     * @param out     where it reports; the first line is {@code listening on <address>}
     * @return the final table
     */
    public static long[] serve(final String nicName, final int slots, final int clients, final PrintStream out) {
        final int access = Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
        try (Endpoint end = new Endpoint(nicName, 8L * slots, access, 4);
             ConnectionListener listener = end.nic.connectionManager().listen(SERVICE)) {
            out.println("listening on " + end.nic.address());
            out.flush();
            final byte[] table = RemoteRegion.of(end.mr).encode();
            final List<QueuePair> peers = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                final ConnectionRequest request = listener.take(CLIENT_WAIT_MS);
                final QueuePair qp = end.newQueuePair(4); // one queue pair per client
                request.accept(qp, table, TIMEOUT_MS);
                peers.add(qp);
            }
            end.awaitDisconnects(peers, CLIENT_WAIT_MS); // the clients work one-sided: the server has nothing to do
            final long[] values = end.buffer.toArray(ValueLayout.JAVA_LONG);
            for (int slot = 0; slot < values.length; slot++) {
                if (values[slot] != 0) {
                    out.println("slot " + slot + " = " + values[slot]);
                }
            }
            out.println("served " + clients + " client(s)");
            return values;
        }
    }

    /** A client of the store: one queue pair connected to the server, and 8 bytes of its own for the results. */
    public static final class KvClient implements AutoCloseable {
        private final Endpoint end;
        private final RemoteRegion table;
        private final DataSegment[] result;

        /**
         * Connects to a server.
         *
         * @param server the server's address, as it printed it
         */
        public KvClient(final String server) {
            end = new Endpoint(Endpoint.nicNameFor(server), 8, Access.LOCAL_READ | Access.LOCAL_WRITE, 4);
            try {
                table = RemoteRegion.decode(end.nic.connectionManager().connect(server, SERVICE, end.qp, null,
                    TIMEOUT_MS));
                result = end.at(0, 8);
            } catch (final RuntimeException e) {
                end.close();
                throw e;
            }
        }

        /**
         * Reads a value with an RDMA read: the server's CPU takes no part.
         *
         * @param slot the key
         * @return the value
         */
        public long get(final int slot) {
            end.qp.read(1, result, 1, address(slot), table.rKey(), 0);
            end.next(TIMEOUT_MS);
            return end.buffer.get(ValueLayout.JAVA_LONG, 0);
        }

        /**
         * Swaps a value in if the slot still holds the expected one.
         *
         * @param slot     the key
         * @param expected what the slot must hold
         * @param value    the new value
         * @return whether the swap happened
         */
        public boolean compareAndSet(final int slot, final long expected, final long value) {
            end.qp.compExch(2, expected, value, result[0], address(slot), table.rKey(), 0);
            end.next(TIMEOUT_MS);
            return end.buffer.get(ValueLayout.JAVA_LONG, 0) == expected; // the original value came back
        }

        /**
         * Stores a value whatever the slot held, with a compare-and-swap loop.
         *
         * @param slot  the key
         * @param value the new value
         */
        public void put(final int slot, final long value) {
            long seen = get(slot);
            while (!compareAndSet(slot, seen, value)) {
                seen = end.buffer.get(ValueLayout.JAVA_LONG, 0); // the value that beat us
            }
        }

        /**
         * Adds to a value with a compare-and-swap loop: read, compute, swap if unchanged, else retry with the
         * value that won.
         *
         * @param slot  the key
         * @param delta what to add
         * @return the new value
         */
        public long add(final int slot, final long delta) {
            long seen = get(slot);
            while (!compareAndSet(slot, seen, seen + delta)) {
                seen = end.buffer.get(ValueLayout.JAVA_LONG, 0);
            }
            return seen + delta;
        }

        /**
         * Runs commands: {@code get <slot>}, {@code put <slot> <value>}, {@code add <slot> <delta> [times]}.
         *
         * @param commands the words of the commands
         * @param out      where each command's result goes
         * @throws IllegalArgumentException for an unknown command or a slot outside the table
         */
        public void run(final List<String> commands, final PrintStream out) {
            for (int i = 0; i < commands.size();) {
                final String verb = commands.get(i);
                switch (verb) {
                    case "get" -> {
                        final int slot = slot(commands.get(i + 1));
                        out.println("get " + slot + " = " + get(slot));
                        i += 2;
                    }
                    case "put" -> {
                        final int slot = slot(commands.get(i + 1));
                        put(slot, Long.parseLong(commands.get(i + 2)));
                        out.println("put " + slot + " = " + commands.get(i + 2));
                        i += 3;
                    }
                    case "add" -> {
                        final int slot = slot(commands.get(i + 1));
                        final long delta = Long.parseLong(commands.get(i + 2));
                        final boolean counted = i + 3 < commands.size() && commands.get(i + 3).matches("\\d+");
                        final int times = counted ? Integer.parseInt(commands.get(i + 3)) : 1;
                        long now = 0;
                        for (int t = 0; t < times; t++) {
                            now = add(slot, delta);
                        }
                        out.println("add " + slot + " " + delta + " x" + times + " -> " + now);
                        i += counted ? 4 : 3;
                    }
                    default -> throw new IllegalArgumentException("unknown command '" + verb
                        + "': get, put or add");
                }
            }
        }

        private int slot(final String word) {
            final int slot = Integer.parseInt(word);
            if (slot < 0 || 8L * slot >= table.length()) {
                throw new IllegalArgumentException("slot " + slot + " is outside the table of "
                    + table.length() / 8 + " values");
            }
            return slot;
        }

        private long address(final int slot) {
            return table.address() + 8L * slot;
        }

        /** Disconnects gracefully and closes everything. */
        @Override
        public void close() {
            try {
                end.nic.connectionManager().disconnect(end.qp, TIMEOUT_MS);
            } finally {
                end.close();
            }
        }
    }
}
