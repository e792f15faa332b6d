package io.jdet.perf;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The options that shape a run and so must be the same at both ends, as perftest requires: the client sends its
 * values in its HELLO. A server takes the client's value of every option it was not given; one it was given with
 * another value makes it refuse the client, naming each difference. The NIC, the side channel's port, the timeout,
 * {@code --quiet} and the output files are each end's own.
 */
final class RunOptions {
    /** Each run option's HELLO key and the command-line option that sets it. */
    static final Map<String, String> OPTION = options();
    /** The HELLO keys of the run options. */
    static final java.util.Set<String> KEYS = OPTION.keySet();

    private RunOptions() {
    }

    private static Map<String, String> options() {
        final Map<String, String> options = new LinkedHashMap<>();
        options.put("tests", "--tests");
        options.put("sizes", "--sizes/--size");
        options.put("iters", "--iters");
        options.put("duration", "--duration");
        options.put("warmup", "--warmup");
        options.put("burst", "--burst");
        options.put("wait", "--wait/--poll");
        options.put("verify", "--verify");
        options.put("loss", "--loss");
        options.put("dup", "--dup");
        options.put("reorder", "--reorder");
        options.put("corrupt", "--corrupt");
        options.put("seed", "--seed");
        options.put("maxrd", "--max-rd");
        options.put("baselines", "--baselines/--no-baselines");
        options.put("qps", "--qps");
        options.put("threads", "--threads");
        options.put("secure", "--secure");
        return java.util.Collections.unmodifiableMap(options);
    }

    /**
     * The run options of a configuration, as the HELLO carries them.
     *
     * @param config the configuration
     * @return key to value (text, whole number, decimal or boolean), in {@link #OPTION}'s order
     */
    static Map<String, Object> of(final PerfConfig config) {
        final Map<String, Object> values = new LinkedHashMap<>();
        values.put("tests", config.tests().stream().map(TestKind::label).collect(Collectors.joining(",")));
        values.put("sizes", config.sizes().stream().map(Sizes::format).collect(Collectors.joining(",")));
        values.put("iters", config.iterations());
        values.put("duration", config.durationMs() / 1000.0);
        values.put("warmup", config.warmup());
        values.put("burst", (long) config.burst());
        values.put("wait", config.waitMode());
        values.put("verify", config.verify());
        values.put("loss", config.faults().lossRate());
        values.put("dup", config.faults().duplicateRate());
        values.put("reorder", config.faults().reorderRate());
        values.put("corrupt", config.faults().corruptRate());
        values.put("seed", config.faults().seed());
        values.put("maxrd", (long) config.maxRd());
        values.put("baselines", Baseline.format(config.baselines()));
        values.put("qps", (long) config.fanout().qps());
        values.put("threads", (long) config.fanout().threads());
        values.put("secure", RunSettings.secureName(config.secure()));
        return values;
    }

    /**
     * The run options the server was given that differ from the client's.
     *
     * @param server the server's configuration, with the options its command line gave
     * @param hello  the client's HELLO
     * @return one line per difference, for example {@code --wait/--poll: server true, client false}; empty when
     *         they agree
     */
    static List<String> conflicts(final PerfConfig server, final Message hello) {
        final Map<String, Object> mine = of(server);
        final List<String> conflicts = new ArrayList<>();
        for (final String key : OPTION.keySet()) {
            if (server.given().contains(key)) {
                final Object theirs = hello.fields().get(key);
                if (!Objects.equals(show(mine.get(key)), show(theirs))) {
                    conflicts.add(OPTION.get(key) + ": server " + show(mine.get(key)) + ", client "
                        + (theirs == null ? "not sent" : show(theirs)));
                }
            }
        }
        return conflicts;
    }

    /** Values compare as the text they print as (a decimal sent as 0.0 and a whole 0 are one value). */
    private static String show(final Object value) {
        return value instanceof Double d && d == Math.rint(d) && !Double.isInfinite(d) ? Long.toString(d.longValue())
            : String.valueOf(value);
    }
}
