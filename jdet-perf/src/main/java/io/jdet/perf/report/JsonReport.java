package io.jdet.perf.report;

import io.jdet.FaultPlan;
import io.jdet.perf.PerfException;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The JSON report: the run's conditions, then every figure with the conditions it was measured under, the
 * jdet/baseline ratios, the targets, det_perf's setup costs and the NICs' protocol counters. Each latency figure
 * carries its raw HdrHistogram (compressed, Base64, as HdrHistogram's log format stores it) so that any other
 * percentile can be computed later.
 */
public final class JsonReport {
    /** The report's format version. */
    public static final int FORMAT = 1;

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
            Files.writeString(file, render(results), StandardCharsets.UTF_8);
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
        final RunInfo info = results.info();
        final JsonWriter json = new JsonWriter().beginObject()
            .field("tool", "jdet perf").field("format", FORMAT).field("totalSeconds", results.totalSeconds());
        json.name("conditions");
        conditions(json, info);
        json.name("latency").beginArray();
        for (final LatencyResult r : results.latencies()) {
            json.beginObject().field("test", r.kind().label()).field("transport", r.transport())
                .field("size", r.size()).field("iterations", r.iterations()).field("warmup", r.warmup());
            figureConditions(json, info, r.kind().jdet());
            json.field("elapsedNs", r.elapsedNs()).field("polls", r.polls())
                .field("usecPerMsg", r.usecPerMsg()).field("mbPerSec", r.mbPerSec());
            json.name("oneWayUs").beginObject().field("min", r.minUs())
                .field("mean", r.histogram().getMean() / 1e3).field("p50", r.percentileUs(50))
                .field("p90", r.percentileUs(90)).field("p99", r.percentileUs(99))
                .field("p99.9", r.percentileUs(99.9)).field("max", r.maxUs()).endObject();
            json.field("histogram", encode(r.histogram())).endObject();
        }
        json.endArray().name("bandwidth").beginArray();
        for (final BandwidthResult r : results.bandwidths()) {
            json.beginObject().field("test", r.kind().label()).field("transport", r.transport())
                .field("size", r.size()).field("messages", r.messages()).field("warmup", r.warmup())
                .field("burst", r.burst());
            figureConditions(json, info, r.kind().jdet());
            json.field("elapsedNs", r.elapsedNs()).field("polls", r.polls()).field("usecPerMsg", r.usecPerMsg())
                .field("messagesPerSec", r.messagesPerSec()).field("mbPerSec", r.mbPerSec()).endObject();
        }
        json.endArray().name("ratios").beginArray();
        for (final int size : info.sizes()) {
            for (final Comparisons.Ratio ratio : Comparisons.RATIOS) {
                final OptionalDouble value = ratio.at(results, size);
                if (value.isPresent()) {
                    json.beginObject().field("name", ratio.name()).field("jdet", ratio.jdet().label())
                        .field("baseline", ratio.baseline().label()).field("size", size)
                        .field("metric", ratio.jdet().latency() ? "median one-way us" : "MB/s")
                        .field("value", value.getAsDouble()).endObject();
                }
            }
        }
        json.endArray().name("targets").beginArray();
        for (final Comparisons.Target target : Comparisons.targets(results)) {
            json.beginObject().field("name", target.name()).field("status", target.status())
                .field("details", target.details()).endObject();
        }
        json.endArray().name("setupCosts").beginArray();
        for (final SetupCost cost : results.setupCosts()) {
            json.beginObject().field("name", cost.name()).field("usec", cost.usec()).field("pages", cost.pages())
                .field("usecPerPage", cost.usecPerPage()).endObject();
        }
        json.endArray().name("counters").beginObject();
        for (final Map.Entry<String, Map<String, Long>> end : results.counters().entrySet()) {
            json.name(end.getKey()).beginObject();
            end.getValue().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(c -> json.field(c.getKey(), c.getValue()));
            json.endObject();
        }
        return json.endObject().endObject().text();
    }

    private static void conditions(final JsonWriter json, final RunInfo info) {
        json.beginObject().field("role", info.role()).field("nicRequested", info.nicRequested())
            .field("nicUsed", info.nicUsed()).field("localAddress", info.localAddress())
            .field("peerAddress", info.peerAddress()).field("note", info.note()).field("mode", info.mode())
            .field("verify", info.verify()).field("maxRd", info.maxRd()).field("burst", info.burst())
            .field("baselineHost", info.baselineHost());
        faults(json, info.faults());
        json.name("sizes").beginArray();
        info.sizes().forEach(json::value);
        json.endArray().name("tests").beginArray();
        info.tests().forEach(json::value);
        json.endArray().field("java", info.java()).field("os", info.os()).field("cpus", info.cpus())
            .field("startedAt", info.startedAt()).endObject();
    }

    /** The conditions of one figure: the polling mode, verification, and the faults (jdet figures only). */
    private static void figureConditions(final JsonWriter json, final RunInfo info, final boolean jdet) {
        json.field("mode", info.mode()).field("verify", info.verify());
        if (jdet) {
            json.field("maxRd", info.maxRd());
        }
        faults(json, jdet ? info.faults() : FaultPlan.NONE);
    }

    private static void faults(final JsonWriter json, final FaultPlan faults) {
        json.name("faults").beginObject().field("loss", faults.lossRate()).field("dup", faults.duplicateRate())
            .field("reorder", faults.reorderRate()).field("corrupt", faults.corruptRate())
            .field("seed", faults.seed()).endObject();
    }

    private static String encode(final Histogram histogram) {
        final ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        final int length = histogram.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer.array(), length));
    }
}
