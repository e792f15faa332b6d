package io.jdet.perf;

import io.jdet.FaultPlan;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Everything one perf run needs, validated once when it is built and immutable afterwards.
 *
 * @param role          embedded (both ends in this JVM), server or client
 * @param nic           the NIC name, or null for the role's default ({@link #nicName()}); a {@code loop} NIC only
 *                      reaches NICs in the same JVM
 * @param host          the server to connect to (client only), else null
 * @param port          the TCP side channel's port (0: any, for the embedded run)
 * @param tests         the jdet tests, in the order given, without repeats
 * @param sizes         message sizes in bytes, in the order given
 * @param iterations    round trips or messages per test and size; 0 picks them from the size ({@link #iterations})
 * @param warmup        unmeasured iterations before each test; -1 picks them ({@link #warmup})
 * @param burst         messages per burst in the bandwidth tests (det_perf's -B)
 * @param waitMode      arm the completion queue and wait on the event queue, and block in the baselines
 * @param verify        check the bytes received ({@code --verify}; a bandwidth test's slots as
 *                      {@link io.jdet.perf.jdet.JdetStream} says)
 * @param faults        faults jdet's links inject
 * @param maxRd         reads and atomics in flight per queue pair (max_or and max_ir)
 * @param baselines     the baselines to run beside jdet (empty: none)
 * @param timeoutMs     the longest any single wait may last, and the longest one test may take
 * @param acceptMs      how long a server waits for its client
 * @param json          where to write the JSON report, or null
 * @param plot          where to draw the PNG plot, or null
 * @param quiet         no progress lines on stderr
 * @param durationMs    how long each measurement lasts ({@code --duration}), its count sized from the warm-up's
 *                      pace; 0 for the default aim (or the fixed {@code iterations})
 * @param given         the {@link RunOptions} keys given on this end's command line: a server refuses a client
 *                      whose run options differ from these, and takes the client's for the others
 * @param fanout        the queue pairs and threads of the bandwidth tests ({@code --qps}, {@code --threads})
 * @param secure        the protection of jdet's connections ({@code --secure}); NONE connects with
 *                      {@code QpModify.connect}, AUTH and ENCRYPT through the connection manager
 */
public record PerfConfig(Role role, String nic, String host, int port, List<TestKind> tests, List<Integer> sizes,
                         long iterations, long warmup, int burst, boolean waitMode, boolean verify, FaultPlan faults,
                         int maxRd, Set<Baseline> baselines, long timeoutMs, long acceptMs, Path json, Path plot,
                         boolean quiet, long durationMs, Set<String> given, Fanout fanout,
                         io.jdet.Security.Mode secure) {
    /** det_perf's TCP port, used for the side channel unless {@code --port} says otherwise. */
    public static final int DEFAULT_PORT = 45248;
    /** The default NIC of the embedded run: UDP on loopback (with a fallback to the in-process fabric). */
    public static final String EMBEDDED_NIC = "udp:127.0.0.1";
    /** Default sizes of a run. */
    public static final List<Integer> DEFAULT_SIZES = List.of(8, 64, 4 << 10, 64 << 10, 1 << 20);
    /** det_perf's default burst count. */
    public static final int DEFAULT_BURST = 1000;
    /** det_perf's MAX_RDMA_RD: reads in flight per queue pair. */
    public static final int DEFAULT_MAX_RD = 4;
    /** Default longest wait: 30 s. */
    public static final long DEFAULT_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(30);
    /** Default wait of a server for its client, which someone may be starting by hand: 5 minutes. */
    public static final long DEFAULT_ACCEPT_MS = TimeUnit.MINUTES.toMillis(5);
    /** The most messages a burst may hold: the send queue needs burst + 1 slots, at most 65536. */
    public static final int MAX_BURST = 65_535;

    /** The cap of a measurement's count with {@code --duration}: the time decides, not the count. */
    public static final long DURATION_CAP = 1_000_000_000L;

    private static final long LATENCY_BYTES = 64L << 20;
    private static final long BANDWIDTH_BYTES = 256L << 20;

    /** Who this process is in the run. */
    public enum Role {
        /** Server and client in one JVM, on two threads with two NICs: the default. */
        EMBEDDED,
        /** The passive end: waits for one client, serves its run, exits. */
        SERVER,
        /** The active end: connects to a server, runs the tests, reports. */
        CLIENT
    }

    /**
     * Validates the configuration.
     *
     * @throws IllegalArgumentException with a message for the user when a setting is out of range or two settings
     *                                  contradict each other
     */
    public PerfConfig {
        check(role != null, "no role");
        tests = List.copyOf(tests);
        sizes = List.copyOf(sizes);
        given = Set.copyOf(given);
        baselines = Set.copyOf(baselines);
        check(fanout != null, "no --qps/--threads shape");
        check(!tests.isEmpty(), "--tests names no test");
        for (final TestKind kind : tests) {
            check(kind.jdet(), "--tests: " + kind.label() + " is a baseline, not a jdet test");
        }
        check(tests.stream().distinct().count() == tests.size(), "--tests names a test twice");
        check(!sizes.isEmpty(), "no message size");
        for (final int size : sizes) {
            check(size >= 1 && size <= Sizes.MAX, "size " + size + " is outside [1, 64M]");
        }
        check(iterations >= 0, "--iters must be positive");
        check(warmup >= -1, "--warmup must not be negative");
        check(burst >= 1 && burst <= MAX_BURST, "--burst must be in [1, " + MAX_BURST + "]");
        check(maxRd >= 1 && maxRd <= 1024, "--max-rd must be in [1, 1024]");
        check(port >= 0 && port <= 65_535, "--port must be in [0, 65535]");
        check(timeoutMs >= 100 && timeoutMs <= TimeUnit.HOURS.toMillis(1), "--timeout must be in [0.1, 3600] s");
        check(acceptMs >= 100 && acceptMs <= TimeUnit.DAYS.toMillis(1), "the server's wait must be in [0.1 s, 1 d]");
        check(faults != null, "no fault plan");
        check(secure != null, "no security mode");
        check(role == Role.CLIENT == (host != null),
            role == Role.CLIENT ? "--client needs a host" : "a host is only for --client");
        check(sizes.stream().distinct().count() == sizes.size(), "a size is given twice");
        if (role == Role.SERVER) {
            check(json == null && plot == null, "--json and --plot are written by the client: give them there");
        }
        check(durationMs >= 0, "--duration must be positive");
        check(durationMs == 0 || iterations == 0, "--duration and --iters exclude each other");
        check(durationMs == 0 || durationMs >= 100 && durationMs * 2 <= timeoutMs,
            "--duration must be in [0.1 s, half of --timeout]: the server waits at most --timeout for a phase");
        // --duration sizes the measured count from the warm-up's pace: without a warm-up there is none, and the
        // count came from the time of zero iterations (-D 0.2 measured 8.7 s; a bw-write ran into --timeout).
        check(durationMs == 0 || warmup != 0, "--duration needs a warm-up to size the measurement from: "
            + "give --warmup above 0 (or leave it out), or --iters instead of --duration");
        check(RunOptions.KEYS.containsAll(given), "unknown run options " + given);
    }

    /**
     * A configuration with the UDP and TCP baselines or none, and one queue pair per test: the shape of a run
     * before {@code --baselines}, {@code --qps} and {@code --threads}.
     *
     * @param role       embedded, server or client
     * @param nic        the NIC name, or null
     * @param host       the server (client only)
     * @param port       the side channel's port
     * @param tests      the jdet tests
     * @param sizes      the sizes
     * @param iterations measured iterations, 0 for automatic
     * @param warmup     warm-up iterations, -1 for automatic
     * @param burst      the burst
     * @param waitMode   wait on events
     * @param verify     check the bytes received
     * @param faults     injected faults
     * @param maxRd      reads in flight
     * @param baselines  whether to run the UDP and TCP baselines
     * @param timeoutMs  the longest wait
     * @param acceptMs   the server's wait for its client
     * @param json       the JSON report, or null
     * @param plot       the plot, or null
     * @param quiet      no progress lines
     * @param durationMs the measuring time, 0 for automatic
     * @param given      the run options given on the command line
     * @throws IllegalArgumentException as the canonical constructor
     */
    public PerfConfig(final Role role, final String nic, final String host, final int port, final List<TestKind> tests,
                      final List<Integer> sizes, final long iterations, final long warmup, final int burst,
                      final boolean waitMode, final boolean verify, final FaultPlan faults, final int maxRd,
                      final boolean baselines, final long timeoutMs, final long acceptMs, final Path json,
                      final Path plot, final boolean quiet, final long durationMs, final Set<String> given) {
        this(role, nic, host, port, tests, sizes, iterations, warmup, burst, waitMode, verify, faults, maxRd,
            baselines ? Baseline.DEFAULT : Set.of(), timeoutMs, acceptMs, json, plot, quiet, durationMs, given,
            Fanout.SINGLE, io.jdet.Security.Mode.NONE);
    }

    /**
     * A configuration with plain connections (see the canonical constructor).
     *
     * @throws IllegalArgumentException as the canonical constructor
     */
    @SuppressWarnings("checkstyle:ParameterNumber")
    public PerfConfig(final Role role, final String nic, final String host, final int port, final List<TestKind> tests,
                      final List<Integer> sizes, final long iterations, final long warmup, final int burst,
                      final boolean waitMode, final boolean verify, final FaultPlan faults, final int maxRd,
                      final Set<Baseline> baselines, final long timeoutMs, final long acceptMs, final Path json,
                      final Path plot, final boolean quiet, final long durationMs, final Set<String> given,
                      final Fanout fanout) {
        this(role, nic, host, port, tests, sizes, iterations, warmup, burst, waitMode, verify, faults, maxRd,
            baselines, timeoutMs, acceptMs, json, plot, quiet, durationMs, given, fanout, io.jdet.Security.Mode.NONE);
    }

    /**
     * Whether the Aeron baseline runs over IPC (jdet on the in-process fabric) rather than UDP.
     *
     * @return true when the NIC is {@code loop}
     */
    public boolean aeronIpc() {
        final String name = nicName();
        return name != null && name.startsWith("loop");
    }

    private static void check(final boolean ok, final String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /**
     * The NIC to open: the one given, else {@code udp:127.0.0.1} for the embedded run, else null, meaning "UDP on
     * the local address of the side channel" (what the peer reached, or what reaches the peer).
     *
     * @return the name, or null for the side channel's address
     */
    public String nicName() {
        if (nic != null) {
            final int comma = nic.indexOf(',');
            return comma < 0 ? nic : nic.substring(0, comma);
        }
        return role == Role.EMBEDDED ? EMBEDDED_NIC : null;
    }

    /**
     * The NIC the server end opens: in the embedded run {@code --nic A,B} gives the client end A and the server end
     * B (two NICs that cannot share a name, say {@code eth:} on the two ends of a veth pair); otherwise
     * {@link #nicName()}.
     *
     * @return the name, or null for the side channel's address
     */
    public String serverNicName() {
        final int comma = nic == null ? -1 : nic.indexOf(',');
        return comma < 0 ? nicName() : nic.substring(comma + 1);
    }

    /**
     * Whether the tool may fall back to the in-process fabric when the NIC does not exist: only for the embedded
     * run with the default NIC, so that {@code ./jdet perf} works before the UDP link lands.
     *
     * @return true if a missing UDP NIC means "use loop"
     */
    public boolean loopFallback() {
        return role == Role.EMBEDDED && nic == null;
    }

    /**
     * Iterations of a test at a size: the {@code --iters} value, else {@link #DURATION_CAP} with {@code --duration},
     * else round trips for 64 MiB of latency traffic
     * (100 to 10000) or messages for 256 MiB of bandwidth traffic (256 to 20000), so every size takes a similar,
     * short time.
     *
     * @param kind the test
     * @param size the message size
     * @return the measured iterations
     */
    public long iterations(final TestKind kind, final int size) {
        if (iterations > 0) {
            return iterations;
        }
        if (durationMs > 0) {
            return DURATION_CAP;
        }
        if (kind.latency()) {
            return Math.clamp(LATENCY_BYTES / size, 100, 10_000);
        }
        return kind.fixedSize() ? 20_000 : Math.clamp(BANDWIDTH_BYTES / size, 256, 20_000);
    }

    /**
     * Unmeasured iterations before a test: the {@code --warmup} value, else half the measured ones (10 to 5000),
     * enough for the JIT to compile the test's path before the first, small size is measured.
     *
     * @param measured the measured iterations
     * @return the warm-up iterations
     */
    public long warmup(final long measured) {
        return warmup >= 0 ? warmup : Math.clamp(measured / 2, 10, 5000);
    }

    /**
     * The burst used for a number of messages: {@code --burst}, but never more than the messages.
     *
     * @param messages the messages of the test
     * @return the burst
     */
    public int burst(final long messages) {
        return (int) Math.max(1, Math.min(burst, messages));
    }

    /**
     * How long the client aims each measurement to last, sizing its count from the warm-up's pace.
     *
     * @return {@code --duration} in nanoseconds, else {@link Phases#MEASURE_BUDGET_NS} with automatic counts, else
     *         0 (fixed counts)
     */
    public long measureNs() {
        if (durationMs > 0) {
            return TimeUnit.MILLISECONDS.toNanos(durationMs);
        }
        return iterations == 0 ? Phases.MEASURE_BUDGET_NS : 0;
    }

    /**
     * The longest wait, in nanoseconds.
     *
     * @return the timeout
     */
    public long timeoutNs() {
        return TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    }

    /**
     * The polling mode as printed and written to the JSON.
     *
     * @return {@code busy-poll} or {@code wait}
     */
    public String modeName() {
        return waitMode ? "wait" : "busy-poll";
    }
}
