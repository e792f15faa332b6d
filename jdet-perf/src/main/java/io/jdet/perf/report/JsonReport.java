package io.jdet.perf.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.jdet.FaultPlan;
import io.jdet.perf.PerfException;
import io.jdet.perf.trust.CpuTimes;
import io.jdet.perf.trust.LoadSample;
import io.jdet.perf.trust.Stability;
import io.jdet.perf.trust.StepLoad;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;

/**
 * The JSON report, written with Jackson: the run's conditions and warnings, then every figure with the conditions it
 * was measured under (the machine's load around its step, its stability), the jdet/baseline ratios, the targets,
 * det_perf's setup costs and the NICs' protocol counters. Each latency figure carries its raw HdrHistogram
 * (compressed, Base64, as HdrHistogram's log format stores it) so that any other percentile can be computed later.
 * A number that is not finite, or not known, is written as {@code null}. {@code docs/PERF-JSON.md} documents every
 * field.
 */
public final class JsonReport {
    /**
     * The report's format version: 2 added the load, stability, peak and standard deviation fields; 3 the
     * bandwidth figures' {@code qps}, {@code threads} and {@code perThread} and the Aeron baselines.
     */
    public static final int FORMAT = 3;

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private JsonReport() {
    }

    /**
     * Writes the report.
     *
     * @param results the run's figures
     * @param file    where
     * @throws PerfException if the file cannot be written
     */
    public static void write(final Results results, final Path file) {
        try {
            MAPPER.writeValue(file.toFile(), tree(results));
        } catch (final IOException e) {
            throw new PerfException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Renders the report.
     *
     * @param results the run's figures
     * @return the JSON text
     */
    public static String render(final Results results) {
        try {
            return MAPPER.writeValueAsString(tree(results)) + "\n";
        } catch (final IOException e) {
            throw new IllegalStateException("a tree of plain values always serializes", e);
        }
    }

    /**
     * The report as a JSON tree.
     *
     * @param results the run's figures
     * @return the root object
     */
    public static ObjectNode tree(final Results results) {
        final RunInfo info = results.info();
        final ObjectNode root = MAPPER.createObjectNode().put("tool", "jdet perf").put("format", FORMAT);
        number(root, "totalSeconds", results.totalSeconds());
        conditions(root.putObject("conditions"), info);
        final ArrayNode warnings = root.putArray("warnings");
        results.warnings().forEach(warnings::add);
        final ArrayNode latency = root.putArray("latency");
        for (final LatencyResult r : results.latencies()) {
            final ObjectNode f = latency.addObject().put("test", r.kind().label()).put("transport", r.transport())
                .put("size", r.size()).put("iterations", r.iterations()).put("warmup", r.warmup());
            figureConditions(f, info, r.kind().jdet());
            f.put("elapsedNs", r.elapsedNs()).put("polls", r.polls());
            number(f, "usecPerMsg", r.usecPerMsg());
            number(f, "mbPerSec", r.mbPerSec());
            final ObjectNode us = f.putObject("oneWayUs");
            number(us, "min", r.minUs());
            number(us, "mean", r.meanUs());
            number(us, "stdev", r.stdevUs());
            number(us, "p50", r.percentileUs(50));
            number(us, "p90", r.percentileUs(90));
            number(us, "p99", r.percentileUs(99));
            number(us, "p99.9", r.percentileUs(99.9));
            number(us, "max", r.maxUs());
            f.put("histogram", encode(r.histogram()));
            trust(f, r);
        }
        final ArrayNode bandwidth = root.putArray("bandwidth");
        for (final BandwidthResult r : results.bandwidths()) {
            final ObjectNode f = bandwidth.addObject().put("test", r.kind().label()).put("transport", r.transport())
                .put("size", r.size()).put("messages", r.messages()).put("warmup", r.warmup())
                .put("burst", r.burst());
            figureConditions(f, info, r.kind().jdet());
            f.put("elapsedNs", r.elapsedNs()).put("polls", r.polls());
            number(f, "usecPerMsg", r.usecPerMsg());
            number(f, "messagesPerSec", r.messagesPerSec());
            number(f, "mbPerSec", r.mbPerSec());
            number(f, "peakMessagesPerSec", r.peakMessagesPerSec());
            number(f, "peakMbPerSec", r.peakMbPerSec());
            f.put("qps", r.qps()).put("threads", Math.max(1, r.threads().size()));
            final ArrayNode perThread = f.putArray("perThread");
            for (final ThreadShare share : r.threads()) {
                final ObjectNode t = perThread.addObject().put("thread", share.thread()).put("qps", share.qps())
                    .put("messages", share.messages()).put("elapsedNs", share.elapsedNs());
                number(t, "messagesPerSec", share.messagesPerSec());
                number(t, "mbPerSec", share.mbPerSec(r.size()));
            }
            trust(f, r);
        }
        final ArrayNode ratios = root.putArray("ratios");
        for (final int size : info.sizes()) {
            for (final Comparisons.Ratio ratio : Comparisons.RATIOS) {
                final OptionalDouble value = ratio.at(results, size);
                if (value.isPresent()) {
                    final ObjectNode r = ratios.addObject().put("name", ratio.name())
                        .put("jdet", ratio.jdet().label()).put("baseline", ratio.baseline().label())
                        .put("size", size).put("metric", ratio.jdet().latency() ? "median one-way us" : "MB/s");
                    number(r, "value", value.getAsDouble());
                    r.put("trusted", ratio.trusted(results, size)).put("comparable", Comparisons.comparable(results));
                }
            }
        }
        final ArrayNode targets = root.putArray("targets");
        for (final Comparisons.Target target : Comparisons.targets(results)) {
            targets.addObject().put("name", target.name()).put("status", target.status())
                .put("details", target.details()).put("trusted", target.trusted());
        }
        final ArrayNode costs = root.putArray("setupCosts");
        for (final SetupCost cost : results.setupCosts()) {
            final ObjectNode c = costs.addObject().put("name", cost.name());
            number(c, "usec", cost.usec());
            c.put("pages", cost.pages());
            number(c, "usecPerPage", cost.usecPerPage());
        }
        final ObjectNode counters = root.putObject("counters");
        for (final Map.Entry<String, Map<String, Long>> end : new TreeMap<>(results.counters()).entrySet()) {
            final ObjectNode e = counters.putObject(end.getKey());
            new TreeMap<>(end.getValue()).forEach(e::put);
        }
        return root;
    }

    private static void conditions(final ObjectNode json, final RunInfo info) {
        json.put("role", info.role()).put("nicRequested", info.nicRequested()).put("nicUsed", info.nicUsed())
            .put("localAddress", info.localAddress()).put("peerAddress", info.peerAddress()).put("note", info.note())
            .put("mode", info.mode()).put("verify", info.verify()).put("secure", info.secure())
            .put("maxRd", info.maxRd()).put("burst", info.burst()).put("baselineHost", info.baselineHost());
        faults(json, info.faults());
        final ArrayNode sizes = json.putArray("sizes");
        info.sizes().forEach(sizes::add);
        final ArrayNode tests = json.putArray("tests");
        info.tests().forEach(tests::add);
        json.put("java", info.java()).put("os", info.os()).put("cpus", info.cpus()).put("startedAt", info.startedAt());
    }

    /** The conditions of one figure: the polling mode, verification, and the faults (jdet figures only). */
    private static void figureConditions(final ObjectNode json, final RunInfo info, final boolean jdet) {
        json.put("mode", info.mode()).put("verify", info.verify());
        if (jdet) {
            json.put("maxRd", info.maxRd());
        }
        faults(json, jdet ? info.faults() : FaultPlan.NONE);
    }

    private static void faults(final ObjectNode json, final FaultPlan faults) {
        json.putObject("faults").put("loss", faults.lossRate()).put("dup", faults.duplicateRate())
            .put("reorder", faults.reorderRate()).put("corrupt", faults.corruptRate()).put("seed", faults.seed())
            .put("description", FaultWords.describe(faults));
    }

    /** Whether a figure can be trusted: its stability, and the machine's load around its step. */
    private static void trust(final ObjectNode json, final Figure figure) {
        json.put("trusted", figure.trusted());
        final Stability s = figure.stability();
        final ObjectNode stability = json.putObject("stability").put("stable", s.stable())
            .put("attempts", s.attempts());
        number(stability, "early", s.early());
        number(stability, "late", s.late());
        number(stability, "spread", s.spread());
        final ArrayNode reasons = stability.putArray("reasons");
        s.reasons().forEach(reasons::add);
        final StepLoad load = figure.load();
        if (load == null) {
            json.putNull("load");
            return;
        }
        final ObjectNode l = json.putObject("load").put("busy", load.busy());
        final ArrayNode busy = l.putArray("reasons");
        load.busyReasons().forEach(busy::add);
        number(l, "cpuWaitPercent", load.cpuWaitPercent());
        number(l, "stealPercent", load.stealPercent());
        number(l, "cpuBusyPercent", load.cpuBusyPercent());
        l.put("cpus", load.cpus());
        sample(l.putObject("before"), load.before());
        sample(l.putObject("after"), load.after());
    }

    private static void sample(final ObjectNode json, final LoadSample sample) {
        number(json, "load1", sample.load1());
        number(json, "load5", sample.load5());
        number(json, "load15", sample.load15());
        if (sample.runnable() >= 0) {
            json.put("runnable", sample.runnable());
        } else {
            json.putNull("runnable");
        }
        number(json, "cpuWaitAvg10", sample.cpuWaitAvg10());
        if (sample.cpuWaitTotalUs() >= 0) {
            json.put("cpuWaitTotalUs", sample.cpuWaitTotalUs());
        } else {
            json.putNull("cpuWaitTotalUs");
        }
        final CpuTimes cpu = sample.cpu();
        if (cpu == null) {
            json.putNull("cpuTicks");
        } else {
            json.putObject("cpuTicks").put("user", cpu.user()).put("nice", cpu.nice()).put("system", cpu.system())
                .put("idle", cpu.idle()).put("iowait", cpu.iowait()).put("irq", cpu.irq())
                .put("softirq", cpu.softirq()).put("steal", cpu.steal());
        }
    }

    /** A number, or null when it is not finite. */
    private static void number(final ObjectNode json, final String name, final double value) {
        if (Double.isFinite(value)) {
            json.put(name, value);
        } else {
            json.putNull(name);
        }
    }

    private static String encode(final Histogram histogram) {
        final ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        final int length = histogram.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer.array(), length));
    }
}
