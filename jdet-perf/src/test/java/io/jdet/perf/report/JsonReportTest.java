package io.jdet.perf.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jdet.FaultPlan;
import io.jdet.perf.TestKind;
import io.jdet.perf.rig.LatencyRig;
import io.jdet.perf.trust.LoadSample;
import io.jdet.perf.trust.Stability;
import io.jdet.perf.trust.StepLoad;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JSON report read back with Jackson: every field carries the value it was given, unknown numbers are null, the
 * ratios keep their names; and the summary's words on unreliable figures and injected faults.
 */
class JsonReportTest {
    private static final String LOADAVG = "0.50 0.40 0.30 1/100 1";
    private static final String STAT = "cpu 100 0 0 1000 0 0 0 0";

    private static RunInfo info(final FaultPlan faults) {
        return new RunInfo("embedded", "udp:127.0.0.1", "udp:127.0.0.1", "udp:127.0.0.1:1", "udp:127.0.0.1:2", null,
            "busy-poll", false, "encrypt", faults, 4, 1000, "127.0.0.1", List.of(64), List.of("lat-send", "bw-write"),
            "java", "os", 2, "2026-01-01T00:00:00Z");
    }

    private static Results results(final FaultPlan faults, final boolean unstableLatency) {
        final Results results = new Results(info(faults));
        final Histogram early = LatencyRig.newHistogram();
        final Histogram late = LatencyRig.newHistogram();
        early.recordValueWithCount(unstableLatency ? 600_000 : 4_000, 50);
        late.recordValueWithCount(4_000, 50);
        final Histogram all = early.copy();
        all.add(late);
        final StepLoad quiet = new StepLoad(LoadSample.parse(0, LOADAVG, STAT, "some avg10=0.00 total=1000"),
            LoadSample.parse(1_000_000_000L, LOADAVG, "cpu 300 0 0 1800 0 0 0 0", "some avg10=0.00 total=2000"), 2);
        results.add(new LatencyResult(TestKind.LAT_SEND, "jdet/udp", 64, 100, 50, 1_000_000, 77, all,
            Stability.ofLatency(early, late, 2), quiet));
        results.add(new LatencyResult(TestKind.UDP_PINGPONG, "udp", 64, 100, 50, 800_000, 70, late,
            Stability.ofLatency(late, late, 1), quiet));
        final Histogram bursts = LatencyRig.newHistogram();
        bursts.recordValue(2_000);
        bursts.recordValue(2_500);
        results.add(new BandwidthResult(TestKind.BW_WRITE, "jdet/udp", 64, 2000, 1000, 1000, 5_000_000, 12, bursts,
            Stability.ofStream(25.0, 26.0, bursts, 1), quiet));
        results.add(new BandwidthResult(TestKind.UDP_STREAM, "udp", 64, 2000, 1000, 1000, 4_000_000, 12, bursts,
            Stability.ofStream(Double.NaN, Double.NaN, bursts, 1), null));
        results.setupCosts(List.of(new SetupCost("dev open", 8.5, 0), new SetupCost("MEM reg", 15, 256)));
        results.counters("client", Map.of("frames.sent", 10L));
        results.counters("server", Map.of("frames.sent", 11L));
        results.warning("before the run: load average 6.20 on 2 CPUs");
        results.totalSeconds(1.5);
        return results;
    }

    @Test
    void shouldReadBackEveryFigureWithItsLoadAndStability() throws Exception {
        final Results results = results(FaultPlan.NONE, true);
        final JsonNode root = new ObjectMapper().readTree(JsonReport.render(results));
        assertEquals(JsonReport.FORMAT, root.path("format").asInt());
        assertEquals(1.5, root.path("totalSeconds").asDouble());
        assertEquals(List.of("before the run: load average 6.20 on 2 CPUs"),
            List.of(root.path("warnings").get(0).asText()));
        assertTrue(root.path("conditions").path("note").isNull());
        assertEquals("encrypt", root.path("conditions").path("secure").asText());
        assertEquals("no faults", root.path("conditions").path("faults").path("description").asText());

        final JsonNode lat = root.path("latency").get(0);
        final LatencyResult r = results.latencies().get(0);
        assertEquals("lat-send", lat.path("test").asText());
        assertEquals(100, lat.path("iterations").asLong());
        assertEquals(50, lat.path("warmup").asLong());
        assertEquals(1_000_000, lat.path("elapsedNs").asLong());
        assertEquals(r.usecPerMsg(), lat.path("usecPerMsg").asDouble());
        assertEquals(r.minUs(), lat.path("oneWayUs").path("min").asDouble());
        assertEquals(r.stdevUs(), lat.path("oneWayUs").path("stdev").asDouble());
        assertEquals(r.percentileUs(99.9), lat.path("oneWayUs").path("p99.9").asDouble());
        final Histogram decoded = Histogram.decodeFromCompressedByteBuffer(
            ByteBuffer.wrap(Base64.getDecoder().decode(lat.path("histogram").asText())), 0);
        assertEquals(r.histogram(), decoded);
        assertFalse(lat.path("trusted").asBoolean());
        final JsonNode stability = lat.path("stability");
        assertFalse(stability.path("stable").asBoolean());
        assertEquals(2, stability.path("attempts").asInt());
        assertEquals(r.stability().early(), stability.path("early").asDouble());
        assertEquals(r.stability().late(), stability.path("late").asDouble());
        assertEquals(r.stability().reasons().get(0), stability.path("reasons").get(0).asText());

        final JsonNode load = lat.path("load");
        assertFalse(load.path("busy").asBoolean());
        assertEquals(0.1, load.path("cpuWaitPercent").asDouble(), 1e-9);
        assertEquals(100.0 * 200 / 1000, load.path("cpuBusyPercent").asDouble(), 1e-9);
        assertEquals(0.5, load.path("before").path("load1").asDouble());
        assertEquals(1, load.path("before").path("runnable").asInt());
        assertEquals(1000, load.path("before").path("cpuWaitTotalUs").asLong());
        assertEquals(300, load.path("after").path("cpuTicks").path("user").asLong());

        final JsonNode bw = root.path("bandwidth").get(0);
        final BandwidthResult b = results.bandwidths().get(0);
        assertEquals(b.mbPerSec(), bw.path("mbPerSec").asDouble());
        assertEquals(1e9 / 2000, bw.path("peakMessagesPerSec").asDouble(), 1);
        assertEquals(b.peakMbPerSec(), bw.path("peakMbPerSec").asDouble());
        assertTrue(bw.path("trusted").asBoolean());
        final JsonNode udp = root.path("bandwidth").get(1);
        assertTrue(udp.path("stability").path("early").isNull(), udp::toString);
        assertTrue(udp.path("load").isNull(), udp::toString);

        assertEquals(List.of("lat-send/udp-pingpong", "bw-write/udp-stream"),
            List.of(root.path("ratios").get(0).path("name").asText(), root.path("ratios").get(1).path("name").asText()));
        assertFalse(root.path("ratios").get(0).path("trusted").asBoolean());
        assertTrue(root.path("ratios").get(1).path("trusted").asBoolean());
        assertTrue(root.path("ratios").get(1).path("comparable").asBoolean());
        assertTrue(root.path("setupCosts").get(0).path("usecPerPage").isNull());
        assertEquals(15.0 / 256, root.path("setupCosts").get(1).path("usecPerPage").asDouble());
        assertEquals(11, root.path("counters").path("server").path("frames.sent").asLong());
    }

    @Test
    void shouldMarkUnreliableRatiosAndSayWhyInTheSummary() {
        final java.io.StringWriter text = new java.io.StringWriter();
        SummaryTable.print(new java.io.PrintWriter(text), results(FaultPlan.NONE, true));
        final String out = text.toString();
        assertTrue(out.contains("x?"), out);
        assertTrue(out.contains("? = a figure behind the ratio is unreliable"), out);
        assertTrue(out.contains("Figures to distrust (1 of 4)"), out);
        assertTrue(out.contains("lat-send     unstable when measured again: its early and late halves disagree "
            + "(600 vs 4.00 us median)\n"), out);
        assertTrue(out.contains("re-measured, UNSTABLE"), out);
        assertTrue(out.contains("warning: before the run: load average 6.20"), out);
        assertTrue(out.contains("0.50>0.50"), out);
    }

    @Test
    void shouldJudgeNoTargetOnUnreliableFigures() {
        final RunInfo loop = new RunInfo("embedded", "loop", "loop", "loop:a", "loop:b", null, "busy-poll", false,
            "none", FaultPlan.NONE, 4, 1000, "127.0.0.1", List.of(64), List.of("lat-send"), "java", "os", 2, "now");
        final Results results = new Results(loop);
        final Histogram early = LatencyRig.newHistogram();
        early.recordValueWithCount(600_000, 50);
        final Histogram late = LatencyRig.newHistogram();
        late.recordValueWithCount(4_000, 50);
        results.add(new LatencyResult(TestKind.LAT_SEND, "jdet/loop", 64, 100, 0, 1, 1, late,
            Stability.ofLatency(early, late, 2), null));
        final Comparisons.Target target = Comparisons.targets(results).get(2);
        assertEquals(Comparisons.UNSURE, target.status(), target::toString);
        assertTrue(target.details().matches("best median 4\\.00\\d us \\(unreliable\\)"), target::toString);
    }

    @Test
    void shouldJudgeTheUdpTargetsOnlyWhenJdetRanOverUdp() {
        for (final String nic : new String[] {"shm:perf", "eth:veth0", "udp:127.0.0.1"}) {
            final RunInfo info = new RunInfo("embedded", nic, nic, nic + ":1", nic + ":2", null, "busy-poll", false,
                "none", FaultPlan.NONE, 4, 1000, "127.0.0.1", List.of(64 << 10), List.of("lat-send", "bw-write"),
                "java", "os", 2, "now");
            final Results results = new Results(info);
            final Histogram fast = LatencyRig.newHistogram();
            fast.recordValueWithCount(2_000, 100);
            final Histogram slow = LatencyRig.newHistogram();
            slow.recordValueWithCount(4_000, 100);
            results.add(new LatencyResult(TestKind.LAT_SEND, info.jdetTransport(), 64 << 10, 100, 0, 1, 1, fast,
                Stability.ofLatency(fast, fast, 1), null));
            results.add(new LatencyResult(TestKind.UDP_PINGPONG, "udp", 64 << 10, 100, 0, 1, 1, slow,
                Stability.ofLatency(slow, slow, 1), null));
            results.add(new LatencyResult(TestKind.TCP_PINGPONG, "tcp", 64 << 10, 100, 0, 1, 1, slow,
                Stability.ofLatency(slow, slow, 1), null));
            final Histogram bursts = LatencyRig.newHistogram();
            bursts.recordValueWithCount(2_000, 2);
            results.add(new BandwidthResult(TestKind.BW_WRITE, info.jdetTransport(), 64 << 10, 2000, 0, 1000,
                1_000_000, 1, bursts, Stability.ofStream(Double.NaN, Double.NaN, bursts, 1), null));
            results.add(new BandwidthResult(TestKind.UDP_STREAM, "udp", 64 << 10, 2000, 0, 1000, 2_000_000, 1,
                bursts, Stability.ofStream(Double.NaN, Double.NaN, bursts, 1), null));
            final List<Comparisons.Target> targets = Comparisons.targets(results);
            final String kind = nic.substring(0, nic.indexOf(':'));
            for (final Comparisons.Target target : targets.subList(0, 2)) {
                if (kind.equals("udp")) {
                    assertEquals("met", target.status(), target::toString);
                } else {
                    assertEquals("n/a", target.status(), target::toString);
                    assertTrue(target.details().startsWith("jdet ran on " + kind + ", not UDP: "), target::toString);
                }
            }
        }
    }

    @Test
    void shouldSumUpTheStepsTakenOnABusyMachine() {
        final Results results = new Results(info(FaultPlan.NONE));
        final Histogram steady = LatencyRig.newHistogram();
        steady.recordValueWithCount(4_000, 50);
        final StepLoad busy = new StepLoad(LoadSample.parse(0, "6.20 5 4 9/100 1", STAT, null),
            LoadSample.parse(1_000_000_000L, "7.00 5 4 9/100 1", STAT, null), 2);
        results.add(new LatencyResult(TestKind.LAT_SEND, "jdet/udp", 64, 100, 50, 1_000_000, 1, steady,
            Stability.ofLatency(steady, steady, 1), busy));
        final java.io.StringWriter text = new java.io.StringWriter();
        SummaryTable.print(new java.io.PrintWriter(text), results);
        final String out = text.toString();
        assertTrue(out.contains("Figures to distrust (1 of 1)"), out);
        assertTrue(out.contains("1 of 1 steps ran on a machine busier than its cores (load average 6.20 to 7.00 on "
            + "2 CPUs)"), out);
        assertTrue(out.contains("6.20>7.00"), out);
        assertTrue(out.contains("  busy"), out);
    }

    @Test
    void shouldNotJudgeTargetsWhenFaultsWereInjected() throws Exception {
        final FaultPlan faults = new FaultPlan(0.02, 0.005, 0, 0.001, 7);
        final Results results = results(faults, false);
        final java.io.StringWriter text = new java.io.StringWriter();
        SummaryTable.print(new java.io.PrintWriter(text), results);
        final String out = text.toString();
        assertTrue(out.contains("These ratios compare unlike things: faults were injected into jdet's links only "
            + "(2% of jdet's frames dropped, 0.5% sent twice, 0.1% corrupted; seed 7)"), out);
        assertFalse(out.contains("not met"), out);
        assertFalse(out.contains("FaultPlan["), out);
        for (final Comparisons.Target target : Comparisons.targets(results)) {
            assertEquals("n/a", target.status(), target::toString);
        }
        final JsonNode root = new ObjectMapper().readTree(JsonReport.render(results));
        assertFalse(root.path("ratios").get(0).path("comparable").asBoolean());
        assertEquals(0.02, root.path("latency").get(0).path("faults").path("loss").asDouble());
        assertEquals(0.0, root.path("latency").get(1).path("faults").path("loss").asDouble());
    }

    @Test
    void shouldDescribeAFaultPlanInWords() {
        assertEquals("no faults", FaultWords.describe(FaultPlan.NONE));
        assertEquals("2% of jdet's frames dropped; seed 1", FaultWords.describe(new FaultPlan(0.02, 0, 0, 0, 1)));
        assertEquals("12.5% of jdet's frames held back behind the next one, 100% corrupted; seed 3",
            FaultWords.describe(new FaultPlan(0, 0, 0.125, 1, 3)));
        assertEquals("0.123%", FaultWords.percent(0.00123456));
    }
}
