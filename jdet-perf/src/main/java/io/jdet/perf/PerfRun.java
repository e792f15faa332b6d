package io.jdet.perf;

import io.jdet.perf.jdet.JdetPeer;
import io.jdet.perf.report.DetPerfFormat;
import io.jdet.perf.report.JsonReport;
import io.jdet.perf.report.Plot;
import io.jdet.perf.report.Results;
import io.jdet.perf.report.SummaryTable;
import io.jdet.perf.rig.Abort;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a validated configuration in its role: both ends in this JVM (two threads, two devices, a real TCP side
 * channel on loopback), the server, or the client; then reports. Every failure surfaces as a
 * {@link PerfException} with the first failing end's message.
 */
final class PerfRun {
    private static final long JOIN_MS = TimeUnit.SECONDS.toMillis(10);

    private PerfRun() {
    }

    /**
     * Runs.
     *
     * @param config the configuration
     * @param out    results
     * @param err    notes and progress
     * @throws PerfException if the run fails
     */
    static void execute(final PerfConfig config, final PrintWriter out, final PrintWriter err) {
        final long start = System.nanoTime();
        try {
            switch (config.role()) {
                case EMBEDDED -> report(config, embedded(config, out, err, start), out, start);
                case CLIENT -> report(config, client(config, out, err, start), out, start);
                case SERVER -> server(config, out);
            }
        } finally {
            io.jdet.perf.aeron.AeronMedia.closeShared();
        }
    }

    /**
     * The NIC name of UDP on an address.
     *
     * @param host an IP address literal
     * @return {@code udp:host}, with brackets around an IPv6 literal
     */
    static String udpName(final String host) {
        return "udp:" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host);
    }

    private static Results embedded(final PerfConfig config, final PrintWriter out, final PrintWriter err,
                                    final long start) {
        final List<Step> plan = Step.plan(config);
        final Abort abort = new Abort();
        final AtomicReference<RuntimeException> firstFailure = new AtomicReference<>();
        try (ServerSocket listener = SideChannel.listen(InetAddress.getLoopbackAddress(), config.port())) {
            final Thread server = Thread.ofPlatform().name("jdet-perf-server").daemon().start(() -> {
                try (SideChannel side = SideChannel.accept(listener, config.timeoutMs(), config.timeoutMs())) {
                    ServerDriver.serve(config, side, abort, null);
                } catch (final RuntimeException e) {
                    firstFailure.compareAndSet(null, e);
                    abort.raise();
                }
            });
            final Results results;
            try (SideChannel side = SideChannel.connect(InetAddress.getLoopbackAddress().getHostAddress(),
                     listener.getLocalPort(), config.timeoutMs())) {
                final Message welcome = ClientDriver.hello(config, side);
                try (JdetPeer peer = JdetPeer.open(config.nicName(), RunSettings.of(config).deviceConfiguration(),
                         config.loopFallback())) {
                    if (peer.note() != null) {
                        err.println("jdet perf: " + peer.note());
                        err.flush();
                    }
                    results = ClientDriver.run(config, side, welcome, peer, abort, out,
                        new Progress(err, config.quiet(), start, plan.size()), plan);
                }
            } catch (final RuntimeException e) {
                firstFailure.compareAndSet(null, e);
                abort.raise();
                join(server);
                throw asPerf(firstFailure.get());
            }
            join(server);
            if (firstFailure.get() != null) {
                throw asPerf(firstFailure.get());
            }
            return results;
        } catch (final IOException e) {
            throw new PerfException("closing the side channel listener: " + e, e);
        }
    }

    private static Results client(final PerfConfig config, final PrintWriter out, final PrintWriter err,
                                  final long start) {
        final List<Step> plan = Step.plan(config);
        try (SideChannel side = SideChannel.connect(config.host(), config.port(), config.timeoutMs())) {
            final Message welcome = ClientDriver.hello(config, side);
            final String nic = config.nicName() != null ? config.nicName()
                : udpName(side.localAddress().getHostAddress());
            try (JdetPeer peer = JdetPeer.open(nic, RunSettings.of(config).deviceConfiguration(), false)) {
                return ClientDriver.run(config, side, welcome, peer, new Abort(), out,
                    new Progress(err, config.quiet(), start, plan.size()), plan);
            } catch (final PerfException e) {
                side.sendError(e.getMessage());
                throw e;
            }
        }
    }

    private static void server(final PerfConfig config, final PrintWriter out) {
        try (ServerSocket listener = SideChannel.listen(null, config.port())) {
            final long acceptMs = config.acceptMs();
            out.printf("jdet perf server: listening on TCP port %d; waiting up to %d s for a client%n",
                listener.getLocalPort(), TimeUnit.MILLISECONDS.toSeconds(acceptMs));
            out.flush();
            try (SideChannel side = SideChannel.accept(listener, acceptMs, config.timeoutMs())) {
                ServerDriver.serve(config, side, new Abort(), out);
            }
        } catch (final IOException e) {
            throw new PerfException("closing the side channel listener: " + e, e);
        }
    }

    private static void report(final PerfConfig config, final Results results, final PrintWriter out,
                               final long start) {
        results.totalSeconds((System.nanoTime() - start) / 1e9);
        DetPerfFormat.setupCosts(out, results);
        SummaryTable.print(out, results);
        if (config.json() != null) {
            JsonReport.write(results, config.json());
            out.println("wrote " + config.json());
        }
        if (config.plot() != null) {
            Plot.write(results, config.plot());
            out.println("wrote " + config.plot());
        }
        out.printf(Locale.ROOT, "total %.1f s%n", (System.nanoTime() - start) / 1e9);
        out.flush();
    }

    private static void join(final Thread thread) {
        try {
            thread.join(JOIN_MS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static PerfException asPerf(final RuntimeException e) {
        return e instanceof PerfException p ? p : new PerfException(e.toString(), e);
    }
}
