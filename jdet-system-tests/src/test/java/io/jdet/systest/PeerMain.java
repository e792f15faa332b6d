package io.jdet.systest;

import io.jdet.Configuration;
import io.jdet.ConnectionListener;
import io.jdet.Det;
import io.jdet.FaultPlan;
import io.jdet.WcStatus;

import java.io.PrintStream;

/**
 * The other process of a two-JVM test. Prints {@code ADDRESS <nic address>} once it listens, then {@code OK} when
 * its role succeeded (a server then waits for its input to close before it closes its queue pair, see
 * {@link PeerProcess#closeInput()}); exits 0 on success, 1 on a failed check, 2 on bad arguments. Every role ends by itself
 * within {@link #LIFETIME_MS}, so a lost parent never leaves it running.
 *
 * <pre>
 * PeerMain server &lt;nic&gt; &lt;service&gt; &lt;faultSeed|-&gt;         run the verbs workload's server side
 * PeerMain client &lt;nic&gt; &lt;service&gt; &lt;faultSeed|-&gt; &lt;server&gt;  run its client side against a server
 * PeerMain sink   &lt;nic&gt; &lt;service&gt;                       accept, then keep polling until killed
 * </pre>
 */
public final class PeerMain {
    static final int SERVICE = 7001;
    static final long LIFETIME_MS = 120_000;

    private PeerMain() {
    }

    /**
     * Runs a role.
     *
     * @param args the role and its arguments, as in the class description
     */
    public static void main(final String[] args) {
        final PrintStream out = System.out;
        final Thread reaper = Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(LIFETIME_MS);
            } catch (final InterruptedException e) {
                return;
            }
            System.err.println("peer: lifetime exceeded");
            Runtime.getRuntime().halt(3);
        });
        if (args.length < 3) {
            System.err.println("usage: PeerMain server|client|sink <nic> <service> [faultSeed|-] [server]");
            System.exit(2);
        }
        final Configuration configuration = args.length > 3 && !args[3].equals("-")
            ? faults(Long.parseLong(args[3])) : VerbsWorkload.configuration();
        try (Det det = Det.open(configuration);
             Endpoint e = new Endpoint(det, args[1], VerbsWorkload.BUFFER_BYTES, 64)) {
            final int service = Integer.parseInt(args[2]);
            switch (args[0]) {
                case "server", "sink" -> {
                    try (ConnectionListener listener = e.nic.connectionManager().listen(service)) {
                        out.println("ADDRESS " + e.nic.address());
                        out.flush();
                        if (args[0].equals("server")) {
                            VerbsWorkload.server(e, () -> listener.take(30_000).accept(e.qp, Handshake.describe(e),
                                30_000));
                        } else {
                            listener.take(30_000).accept(e.qp, Handshake.describe(e), 30_000);
                            out.println("CONNECTED");
                            out.flush();
                            sink(e);
                        }
                    }
                }
                case "client" -> {
                    final long[] remote = Handshake.parse(e.nic.connectionManager().connect(args[4], service, e.qp,
                        null, 30_000));
                    VerbsWorkload.client(e, remote[0], (int) remote[1]);
                }
                default -> {
                    System.err.println("unknown role " + args[0]);
                    System.exit(2);
                }
            }
            e.assertEngineHealthy(); // exits 1 otherwise, which the parent test reports
            out.println("OK " + e.nic.counters());
            out.flush();
            if (args[0].equals("server")) {
                awaitLeave();
            }
        } catch (final Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        reaper.interrupt();
        System.exit(0);
    }

    /**
     * Keeps a server's queue pair until the parent closes this process's input. The client's last send may have
     * arrived while its ACK was lost: a server that destroyed its queue pair and exited at once could leave that
     * send to be retried against nobody (the two generals). The parent lets the server go once the client has its
     * last completion.
     */
    private static void awaitLeave() throws java.io.IOException {
        while (System.in.read() >= 0) {
            // the parent writes nothing; end of input is the leave
        }
    }

    /** The injected faults of the two-process tests: 5% loss, 5% duplication, 5% reordering, 1% corruption. */
    static Configuration faults(final long seed) {
        return VerbsWorkload.configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0.01, seed));
    }

    private static void sink(final Endpoint e) {
        for (int r = 0; r < 16; r++) {
            e.qp.recv(r, e.at(VerbsWorkload.RECV_AREA + (long) r * VerbsWorkload.SLOT, VerbsWorkload.SLOT), 1);
        }
        final var batch = new io.jdet.WorkCompletion[] {new io.jdet.WorkCompletion()};
        final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(LIFETIME_MS);
        while (System.nanoTime() - deadline < 0) {
            if (e.recvCq.poll(batch) > 0 && batch[0].status() != WcStatus.SUCCESS) {
                return;
            }
            Thread.onSpinWait();
        }
        throw new IllegalStateException("the sink was neither killed nor disconnected within " + LIFETIME_MS + " ms");
    }
}
