package io.jdet.perf;

import io.jdet.perf.jdet.JdetPeer;
import io.jdet.perf.rig.Abort;
import io.jdet.perf.rig.Pattern;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.util.List;
import java.util.Map;

/**
 * The passive end: checks the client's protocol version and run options (a run option given to the server must
 * match the client's; the others are the client's), opens its NIC, and answers every TEST and BASE until BYE, when
 * it sends its NIC's counters back. Its waits last at most its own {@code --timeout}, not the client's. A failure is reported to the client as an ERROR before it is rethrown.
 */
final class ServerDriver {
    private ServerDriver() {
    }

    /**
     * Serves one client's run.
     *
     * @param config  this end's configuration (NIC, loop fallback)
     * @param side    the side channel, connected
     * @param abort   the run's abort flag
     * @param log     where to say what it does, or null to stay quiet
     * @throws PerfException if the client speaks another protocol version, its run options differ from those the
     *                       server was given, its {@code --duration} needs a longer wait than the server's
     *                       {@code --timeout}, or the run fails
     */
    static void serve(final PerfConfig config, final SideChannel side, final Abort abort, final PrintWriter log) {
        try (Arena arena = Arena.ofConfined()) {
            final Message hello = side.expect("HELLO");
            side.checkVersion(hello);
            final List<String> conflicts = RunOptions.conflicts(config, hello);
            if (!conflicts.isEmpty()) {
                throw new PerfException("the client's run options differ from the server's ("
                    + String.join("; ", conflicts) + "): give both ends the same run options, as perftest "
                    + "requires, or give them to the client only");
            }
            final RunSettings settings = settings(config, hello);
            final long maxSize = hello.number("maxsize");
            if (maxSize < 8 || maxSize > Sizes.MAX) {
                throw new PerfException("side channel: HELLO maxsize " + maxSize + " is outside [8, " + Sizes.MAX
                    + "]");
            }
            final String nicName = config.serverNicName() != null ? config.serverNicName()
                : PerfRun.udpName(side.localAddress().getHostAddress());
            try (JdetPeer peer = JdetPeer.open(nicName, settings.deviceConfiguration(), config.loopFallback())) {
                side.send(Message.of("WELCOME").with("version", SideChannel.VERSION).with("nic", peer.opened())
                    .with("address", peer.nic().address()).build());
                if (log != null) {
                    log.printf("client %s connected; serving on NIC %s (%s), %s; the client's run options: %s%n",
                        side.peerAddress().getHostAddress(), peer.opened(), peer.nic().address(),
                        settings.waitMode() ? "wait" : "busy-poll", describe(hello));
                    log.flush();
                }
                final End end = new End(side, peer, settings, new Pattern(arena, (int) maxSize), abort, "jdet", 0);
                int served = 0;
                while (true) {
                    final Message message = side.receive();
                    switch (message.verb()) {
                        case "TEST" -> JdetStep.passive(checked(message, maxSize, true, false), end);
                        case "GROUP" -> {
                            checked(message, maxSize, true, true);
                            GroupStep.passive(message, end);
                        }
                        case "BASE" -> {
                            checked(message, maxSize, false, false);
                            BaselineStep.passive(message, end);
                        }
                        case "BYE" -> {
                            final Map<String, Long> counters = peer.nic().counters();
                            side.send(Message.of("COUNTERS").with(counters).build());
                            if (log != null) {
                                log.printf("run complete: %d measurements served%n", served);
                                log.flush();
                            }
                            return;
                        }
                        default -> throw new PerfException("side channel: unexpected " + message.verb());
                    }
                    served++;
                }
            }
        } catch (final RuntimeException e) {
            side.sendError(e.getMessage() == null ? e.toString() : e.getMessage());
            throw e;
        }
    }

    /**
     * The settings the server runs with: the client's, but its own timeout, which must leave room for the client's
     * measurements (a phase of {@code --duration}, as the client's own check has it, takes at most half the wait).
     *
     * @param config this end's configuration
     * @param hello  the client's HELLO
     * @return the settings
     * @throws PerfException if the client's {@code --duration} is more than half of this end's timeout
     */
    static RunSettings settings(final PerfConfig config, final Message hello) {
        final long maxRd = hello.number("maxrd");
        if (maxRd < 1 || maxRd > 1024) {
            throw new PerfException("side channel: HELLO maxrd " + maxRd + " is outside [1, 1024]");
        }
        final RunSettings client = RunSettings.of(hello);
        final Object duration = hello.fields().get("duration");
        if (duration instanceof Number seconds && seconds.doubleValue() * 2000 > config.timeoutMs()) {
            throw new PerfException("the client's --duration " + seconds(seconds.doubleValue()) + " s is more than "
                + "half of the server's --timeout " + seconds(config.timeoutMs() / 1000.0) + " s, the longest the "
                + "server waits for a phase: give the server --timeout " + seconds(seconds.doubleValue() * 2)
                + " or more");
        }
        return new RunSettings(client.waitMode(), client.verify(), client.maxRd(), config.timeoutMs(),
            client.faults(), client.secure());
    }

    /**
     * A step the client asks for, checked before anything is built for it: a test of the verb's kind (a jdet test
     * for TEST, a jdet bandwidth test for GROUP, a baseline for BASE), no larger than the HELLO's maxsize (the
     * verification pattern's length).
     */
    static Step checked(final Message message, final long maxSize, final boolean jdet, final boolean group) {
        final Step step = Step.of(message);
        final TestKind kind = step.kind();
        if (kind.jdet() != jdet || kind.collective() || group && kind.latency()) {
            throw new PerfException("side channel: " + message.verb() + " of " + kind.label() + ", which is not "
                + (group ? "a jdet bandwidth test" : jdet ? "a jdet test" : "a baseline"));
        }
        if (step.size() > maxSize) {
            throw new PerfException("side channel: " + message.verb() + " size " + step.size()
                + " is beyond the HELLO's maxsize " + maxSize);
        }
        return step;
    }

    private static String seconds(final double value) {
        return java.math.BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }

    /** The client's run options as a server log shows them. */
    private static String describe(final Message hello) {
        final StringBuilder text = new StringBuilder();
        for (final String key : RunOptions.KEYS) {
            if (hello.fields().containsKey(key)) {
                text.append(text.isEmpty() ? "" : " ").append(key).append('=').append(hello.fields().get(key));
            }
        }
        return text.toString();
    }
}
