package io.jdet.perf;

import io.jdet.DetException;
import io.jdet.FaultPlan;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code jdet perf}: det_perf for jdet, with its UDP, TCP and Aeron baselines measured in the same run. Parses and
 * validates the command line into a {@link PerfConfig} once, then hands it to the run.
 */
@Command(name = "perf", sortOptions = false, usageHelpAutoWidth = true, mixinStandardHelpOptions = true,
    version = "jdet perf 0.1.0",
    description = {"det_perf for jdet: ping-pong latency and burst bandwidth of send, RDMA write, RDMA read and "
        + "fetch-and-add, with plain Java UDP and TCP (and, with --baselines, Aeron) baselines measured in the "
        + "same run; --qps/--threads spread the bandwidth tests over queue pairs and threads as perftest does.",
        "Without --server/--client both ends run in this JVM over UDP on 127.0.0.1 (the in-process fabric if UDP "
            + "is not available)."},
    footer = {"", "Examples:", "  ./jdet perf", "  ./jdet perf --nic loop --sizes 64,64K --json perf.json "
        + "--plot perf.png", "  ./jdet perf --qps 4 --threads 2 --baselines udp,tcp,aeron -D 1", "  ./jdet perf --server            (then, elsewhere)  ./jdet perf --client HOST"})
public final class PerfCommand implements Callable<Integer> {
    /**
     * The options the co-* tests do not use: their members busy-poll plain, fault-free connections in this JVM, with
     * no side channel, baselines, queue-pair fan-out, bursts, duration or plot. Given with them, they are refused
     * rather than silently ignored.
     */
    private static final List<String> NOT_FOR_COLLECTIVES = List.of("--wait", "--verify", "--secure", "--loss",
        "--dup", "--reorder", "--corrupt", "--seed", "--max-rd", "--baselines", "--no-baselines", "--qps",
        "--threads", "--duration", "--burst", "--plot", "--port");

    @Spec
    private CommandSpec spec;

    @Option(names = "--server", description = "Run as the server: wait for one client, serve its run, exit. It runs "
        + "the client's run options; any it is given itself (--tests, --sizes, --wait, --loss, ...) must match the "
        + "client's, or it refuses the client.")
    private boolean server;

    @Option(names = "--client", paramLabel = "HOST[:PORT]", description = "Run as the client of a server.")
    private String client;

    @Option(names = "--nic", paramLabel = "NAME", description = "The NIC: udp:ADDRESS[:PORT], shm:GROUP for "
        + "shared memory between processes of one host, eth:INTERFACE for raw Ethernet (needs CAP_NET_RAW; "
        + "embedded: eth:A,eth:B, the client end on A and the server end on B, say a veth pair), "
        + "or loop for the in-process fabric (only without "
        + "--server/--client). Default: udp:127.0.0.1; for --server/--client, "
        + "UDP on the side channel's local address.")
    private String nic;

    @Option(names = "--port", paramLabel = "P", description = "The side channel's TCP port (default: "
        + PerfConfig.DEFAULT_PORT + ", det_perf's; any free port when both ends run here).")
    private Integer port;

    @Option(names = "--tests", paramLabel = "LIST", split = ",", description = "jdet tests to run (default all): "
        + "lat-send, lat-write, bw-send, bw-write, bw-read, bw-atomic; or, on their own, the collectives co-barrier, "
        + "co-bcast, co-allgather, co-alltoall, co-allreduce (--ranks members in this JVM; of the other options "
        + "they take only --nic, --sizes/--size, --iters, --warmup, --timeout, --json, --quiet, --capture and "
        + "--thread-per-member).")
    private List<String> tests;

    @Option(names = "--ranks", paramLabel = "N", description = "Members of the co-* tests' group, all in this JVM "
        + "(default 4).")
    private Integer ranks;

    @Option(names = "--sizes", paramLabel = "LIST", description = "Message sizes (default 8,64,4K,64K,1M).")
    private String sizes;

    @Option(names = "--size", paramLabel = "N", description = "A single message size.")
    private String size;

    @Option(names = "--iters", paramLabel = "N", description = "Round trips or messages per test and size "
        + "(default: from the size, for a short run; for bandwidth at least 0.1 s of them).")
    private Long iters;

    @Option(names = {"-D", "--duration"}, paramLabel = "SECONDS", description = "Measure each test and size for "
        + "about this long (perftest's -D), its count sized from the warm-up's pace; excludes --iters and "
        + "--warmup 0; at most half of --timeout.")
    private Double durationSeconds;

    @Option(names = "--warmup", paramLabel = "N",
        description = "Unmeasured iterations first. With --iters: this many (default: half of them, at most 5000), "
            + "a bandwidth test's rounded up to a whole number of bursts. Without: as many as take about 0.3 s, at "
            + "most this many (same default, also in whole bursts), and in each test's first step 2.5 s of them "
            + "while the JIT compiles. 0 excludes --duration.")
    private Long warmup;

    @Option(names = "--burst", paramLabel = "N", description = "Messages per burst in the bandwidth tests "
        + "(det_perf's -B; default " + PerfConfig.DEFAULT_BURST + ").")
    private Integer burst;

    @Option(names = "--poll", description = "Busy-poll completion queues and non-blocking sockets (default).")
    private boolean poll;

    @Option(names = "--wait", description = "Arm the completion queue and wait on the event queue (det_perf -w); "
        + "lat-write then writes with an immediate value, since a plain write raises no event; the baselines "
        + "block.")
    private boolean waitMode;

    @Option(names = "--verify", description = "Check the bytes received: every message of the ping-pongs, bw-send "
        + "and the baseline streams as it arrives; bw-read's buffer slots after each burst and bw-write's target "
        + "slots after each phase (messages cycle through burst + 1 slots, fewer where they would pass 32 MiB, so "
        + "a slot used twice before its check shows only its last message); bw-atomic's returned values and the "
        + "peer's counter.")
    private boolean verify;

    @Option(names = "--secure", paramLabel = "MODE", description = "Protect jdet's connections: auth (every frame "
        + "authenticated) or encrypt (also encrypted); they are then made by the connection manager. A run "
        + "option: a server given it refuses a client of another mode.")
    private String secure;

    @Option(names = "--loss", paramLabel = "RATE", description = "Fraction of jdet frames to drop.")
    private double loss;

    @Option(names = "--dup", paramLabel = "RATE", description = "Fraction of jdet frames to send twice.")
    private double dup;

    @Option(names = "--reorder", paramLabel = "RATE", description = "Fraction of jdet frames to hold back one.")
    private double reorder;

    @Option(names = "--corrupt", paramLabel = "RATE", description = "Fraction of jdet frames to corrupt.")
    private double corrupt;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the fault injection (default 1).")
    private long seed = 1;

    @Option(names = "--max-rd", paramLabel = "N", description = "RDMA reads and atomics in flight per queue pair "
        + "(det_perf's MAX_RDMA_RD, default " + PerfConfig.DEFAULT_MAX_RD + ").")
    private int maxRd = PerfConfig.DEFAULT_MAX_RD;

    @Option(names = "--no-baselines", description = "Skip the baselines (--baselines none).")
    private boolean noBaselines;

    @Option(names = "--baselines", paramLabel = "LIST", description = "Baselines to run beside jdet: udp, tcp, "
        + "aeron (Aeron UDP, or Aeron IPC with --nic loop, through an embedded media driver), or none "
        + "(default udp,tcp).")
    private String baselines;

    @Option(names = "--qps", paramLabel = "N", description = "Queue pairs of each bandwidth test (perftest's -q; "
        + "default 1); the latency tests keep one.")
    private Integer qps;

    @Option(names = "--threads", paramLabel = "T", description = "Threads at each end driving the bandwidth tests' "
        + "queue pairs, --qps/T each (default 1); figures per thread and in aggregate.")
    private Integer threads;

    @Option(names = "--thread-per-member", description = "co-* tests: each member on its own thread, timing its "
        + "own back-to-back operations as an MPI rank does (default: one thread drives every member in turn).")
    private boolean threadPerMember;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "The longest any wait of this end may last "
        + "(default 30; a server waits 5 minutes for its client unless this is given, and refuses a client whose "
        + "--duration is more than half of it).")
    private Double timeoutSeconds;

    @Option(names = "--json", paramLabel = "FILE", description = "Write every figure with its conditions as JSON.")
    private Path json;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Draw latency and bandwidth against size.")
    private Path plot;

    @Option(names = {"-q", "--quiet"}, description = "No progress lines on stderr.")
    private boolean quiet;

    @Option(names = "--capture", paramLabel = "FILE.pcapng", description = "Record every jdet frame this process "
        + "sends and receives as pcapng, for Wireshark with tools/wireshark/jdet.lua (keep the run small).")
    private Path capture;

    /** Creates the command; picocli fills its fields. */
    public PerfCommand() {
    }

    @Override
    public Integer call() {
        if (capture != null) {
            // Every device configuration made from here on (both ends, the setup-cost NICs) reads the property.
            System.setProperty(io.jdet.Configuration.CAPTURE_PROP, capture.toString());
        }
        final PerfConfig config = config();
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        try {
            if (config.tests().getFirst().collective()) {
                io.jdet.perf.collective.CollectiveBench.run(config, ranks == null ? 4 : ranks, threadPerMember, out,
                    err);
                out.flush();
                return 0;
            }
            PerfRun.execute(config, out, err);
            return 0;
        } catch (final PerfException e) {
            out.flush();
            err.println("jdet perf: " + e.getMessage());
            if (e.getCause() instanceof RuntimeException cause && !(cause instanceof PerfException)
                && !(cause instanceof DetException)) {
                // Not a failure of the run but of the tool or the library: the stack trace is what to report.
                cause.printStackTrace(err);
            }
            err.flush();
            return 1;
        }
    }

    /**
     * Builds and validates the configuration.
     *
     * @return the configuration
     * @throws ParameterException with the reason, for picocli to print with the usage
     */
    PerfConfig config() {
        try {
            check(!(server && client != null), "--server and --client exclude each other");
            check(!(poll && waitMode), "--poll and --wait exclude each other");
            check(!(sizes != null && size != null), "--sizes and --size exclude each other");
            final PerfConfig.Role role = server ? PerfConfig.Role.SERVER
                : client != null ? PerfConfig.Role.CLIENT : PerfConfig.Role.EMBEDDED;
            check(role == PerfConfig.Role.EMBEDDED || nic == null || nic.indexOf(',') < 0, "--nic " + nic
                + ": two NIC names (A,B) are for the embedded run only; each of --server/--client opens one");
            check(role == PerfConfig.Role.EMBEDDED || nic == null || !nic.startsWith("loop"), "--nic " + nic
                + " is the in-process fabric: it only works without --server/--client (both ends in one JVM)");
            String host = null;
            Integer clientPort = null;
            if (client != null) {
                final int colon = client.lastIndexOf(':');
                final boolean bracketed = client.startsWith("[");
                if (colon > 0 && (bracketed ? client.lastIndexOf(']') < colon : client.indexOf(':') == colon)) {
                    host = client.substring(0, colon);
                    clientPort = Integer.valueOf(client.substring(colon + 1));
                } else {
                    host = client;
                }
                host = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
                check(!host.isEmpty(), "--client needs a host");
                check(clientPort == null || port == null, "give the port in --client or with --port, not both");
            }
            final int sidePort = clientPort != null ? clientPort : port != null ? port
                : role == PerfConfig.Role.EMBEDDED ? 0 : PerfConfig.DEFAULT_PORT;
            final List<TestKind> kinds = new ArrayList<>();
            if (tests == null) {
                Arrays.stream(TestKind.values()).filter(k -> k.jdet() && !k.collective()).forEach(kinds::add);
            } else {
                for (final String test : tests) {
                    kinds.add(TestKind.of(test));
                }
            }
            final long collectives = kinds.stream().filter(TestKind::collective).count();
            check(collectives == 0 || collectives == kinds.size(), "the co-* tests run on their own");
            check(collectives == 0 || role == PerfConfig.Role.EMBEDDED, "the co-* tests run every member in this "
                + "JVM: no --server/--client");
            check(ranks == null || collectives > 0, "--ranks is for the co-* tests");
            check(!threadPerMember || collectives > 0, "--thread-per-member is for the co-* tests");
            if (collectives > 0) {
                final List<String> ignored = matched(NOT_FOR_COLLECTIVES);
                check(ignored.isEmpty(), "the co-* tests do not use " + String.join(", ", ignored) + " (their "
                    + "members busy-poll plain, fault-free connections in this JVM, with no baselines, queue-pair "
                    + "fan-out, bursts, duration or plot)");
            }
            check(ranks == null || ranks >= 2 && ranks <= 64, "--ranks must be between 2 and 64");
            final List<Integer> sizeList = new ArrayList<>();
            if (size != null) {
                sizeList.add(Sizes.parse(size));
            } else if (sizes != null) {
                Arrays.stream(Sizes.parseList(sizes)).forEach(sizeList::add);
            } else {
                sizeList.addAll(PerfConfig.DEFAULT_SIZES);
            }
            check(iters == null || iters > 0, "--iters must be positive");
            check(durationSeconds == null || iters == null, "--duration and --iters exclude each other");
            check(durationSeconds == null || Double.isFinite(durationSeconds) && durationSeconds > 0,
                "--duration must be a positive number of seconds");
            OutputFiles.check(json, plot);
            check(timeoutSeconds == null || Double.isFinite(timeoutSeconds), "--timeout must be a number of seconds");
            final long timeoutMs = timeoutSeconds == null ? PerfConfig.DEFAULT_TIMEOUT_MS
                : Math.round(timeoutSeconds * 1000);
            final FaultPlan faults = new FaultPlan(loss, dup, reorder, corrupt, seed);
            check(!(noBaselines && baselines != null), "--no-baselines and --baselines exclude each other");
            final Set<Baseline> chosen = noBaselines ? Set.of()
                : baselines == null ? Baseline.DEFAULT : Baseline.parseList(baselines);
            final Fanout fanout = new Fanout(qps == null ? 1 : qps, threads == null ? 1 : threads);
            return new PerfConfig(role, nic, host, sidePort, kinds, sizeList, iters == null ? 0 : iters,
                warmup == null ? -1 : warmup, burst == null ? PerfConfig.DEFAULT_BURST : burst, waitMode, verify,
                faults, maxRd, chosen, timeoutMs,
                timeoutSeconds == null ? PerfConfig.DEFAULT_ACCEPT_MS : timeoutMs, json, plot, quiet,
                durationSeconds == null ? 0 : Math.max(1, Math.round(durationSeconds * 1000)), given(), fanout,
                secureMode());
        } catch (final IllegalArgumentException | DetException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    private io.jdet.Security.Mode secureMode() {
        if (secure == null) {
            return io.jdet.Security.Mode.NONE;
        }
        return switch (secure.toLowerCase(java.util.Locale.ROOT)) {
            case "auth" -> io.jdet.Security.Mode.AUTH;
            case "encrypt" -> io.jdet.Security.Mode.ENCRYPT;
            case "none" -> io.jdet.Security.Mode.NONE;
            default -> throw new IllegalArgumentException("--secure must be auth, encrypt or none");
        };
    }

    /** Those of the named options this command line gave, in the order named. */
    private List<String> matched(final List<String> names) {
        final ParseResult parsed = spec.commandLine().getParseResult();
        return parsed == null ? List.of() : names.stream().filter(parsed::hasMatchedOption).toList();
    }

    /** The run options this command line gave (the others take their defaults, or at a server the client's). */
    private Set<String> given() {
        final ParseResult parsed = spec.commandLine().getParseResult();
        final Set<String> given = new HashSet<>();
        final String[][] options = {{"tests", "--tests"}, {"sizes", "--sizes"}, {"sizes", "--size"},
            {"iters", "--iters"}, {"duration", "--duration"}, {"warmup", "--warmup"}, {"burst", "--burst"},
            {"wait", "--wait"}, {"wait", "--poll"}, {"verify", "--verify"}, {"loss", "--loss"}, {"dup", "--dup"},
            {"reorder", "--reorder"}, {"corrupt", "--corrupt"}, {"seed", "--seed"}, {"maxrd", "--max-rd"},
            {"baselines", "--no-baselines"}, {"baselines", "--baselines"}, {"qps", "--qps"},
            {"threads", "--threads"}, {"secure", "--secure"}};
        for (final String[] option : options) {
            if (parsed != null && parsed.hasMatchedOption(option[1])) {
                given.add(option[0]);
            }
        }
        return given;
    }

    private static void check(final boolean ok, final String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
