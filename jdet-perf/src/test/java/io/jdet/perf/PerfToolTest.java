package io.jdet.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs {@code jdet perf} in this JVM on tiny settings over the in-process fabric and checks what it writes: the
 * JSON's shape and sanity (never its speed) and the PNG.
 */
class PerfToolTest {
    private static final Duration DEADLINE = Duration.ofMinutes(2);

    @TempDir
    Path dir;

    @Test
    void shouldWriteJsonWithEveryFigureAndItsConditionsWhenRunOnLoop() throws Exception {
        final Path json = dir.resolve("perf.json");
        final Path png = dir.resolve("perf.png");
        final Run run = Run.of("perf", "--nic", "loop", "--sizes", "64,4K", "--iters", "200", "--burst", "50",
            "--json", json.toString(), "--plot", png.toString());
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains("DET Test Complete for buffer size 64 (burst 50)"), run::describe);
        assertTrue(run.out().contains(", busy-poll, security none; tests "), run::describe);
        assertTrue(run.out().contains("Summary: jdet (jdet/loop) / baseline"), run::describe);

        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertEquals("jdet perf", root.path("tool").asText());
        final JsonNode conditions = root.path("conditions");
        assertEquals("loop", conditions.path("nicUsed").asText());
        assertEquals("busy-poll", conditions.path("mode").asText());
        assertEquals("none", conditions.path("secure").asText());
        assertEquals(2, conditions.path("sizes").size());
        assertTrue(root.path("totalSeconds").asDouble() > 0);

        final Set<String> latency = new HashSet<>();
        for (final JsonNode figure : root.path("latency")) {
            latency.add(figure.path("test").asText() + "@" + figure.path("size").asInt());
            assertEquals(200, figure.path("iterations").asLong());
            assertEquals("busy-poll", figure.path("mode").asText());
            assertTrue(figure.has("faults") && figure.has("verify") && figure.has("transport"));
            final JsonNode us = figure.path("oneWayUs");
            assertTrue(us.path("min").asDouble() > 0, figure::toString);
            assertTrue(us.path("min").asDouble() <= us.path("p50").asDouble(), figure::toString);
            assertTrue(us.path("p50").asDouble() <= us.path("p99").asDouble(), figure::toString);
            assertTrue(us.path("p99").asDouble() <= us.path("p99.9").asDouble(), figure::toString);
            assertTrue(us.path("p99.9").asDouble() <= us.path("max").asDouble() * 1.001, figure::toString);
            assertTrue(us.path("stdev").asDouble() >= 0, figure::toString);
            assertTrusted(figure);
            final byte[] raw = Base64.getDecoder().decode(figure.path("histogram").asText());
            final Histogram histogram = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(raw), 0);
            assertEquals(200, histogram.getTotalCount());
        }
        assertEquals(Set.of("lat-send@64", "lat-write@64", "udp-pingpong@64", "tcp-pingpong@64", "lat-send@4096",
            "lat-write@4096", "udp-pingpong@4096", "tcp-pingpong@4096"), latency);

        final Set<String> bandwidth = new HashSet<>();
        for (final JsonNode figure : root.path("bandwidth")) {
            bandwidth.add(figure.path("test").asText() + "@" + figure.path("size").asInt());
            assertEquals(200, figure.path("messages").asLong());
            assertEquals(50, figure.path("burst").asInt());
            assertTrue(figure.path("mbPerSec").asDouble() > 0, figure::toString);
            assertTrue(figure.path("messagesPerSec").asDouble() > 0, figure::toString);
            final double mb = figure.path("messagesPerSec").asDouble() * figure.path("size").asInt() / 1e6;
            assertEquals(mb, figure.path("mbPerSec").asDouble(), mb * 1e-9);
            // The fastest burst is at least as fast as the whole (its time per message is a lower bound).
            assertTrue(figure.path("peakMbPerSec").asDouble() >= mb * 0.999, figure::toString);
            assertTrusted(figure);
        }
        assertEquals(Set.of("bw-send@64", "bw-write@64", "bw-read@64", "bw-atomic@8", "udp-stream@64",
            "tcp-stream@64", "bw-send@4096", "bw-write@4096", "bw-read@4096", "udp-stream@4096", "tcp-stream@4096"),
            bandwidth);

        final List<String> ratios = new ArrayList<>();
        root.path("ratios").forEach(r -> ratios.add(r.path("name").asText() + "@" + r.path("size").asInt()));
        assertEquals(14, ratios.size(), ratios::toString);
        root.path("ratios").forEach(r -> assertTrue(r.path("value").asDouble() > 0, r::toString));
        root.path("ratios").forEach(r -> assertTrue(r.path("comparable").asBoolean() && r.has("trusted")));
        assertEquals(3, root.path("targets").size());
        assertEquals(15, root.path("setupCosts").size());
        root.path("setupCosts").forEach(c -> assertTrue(c.path("usec").asDouble() >= 0, c::toString));
        assertTrue(root.path("counters").path("client").path("frames.sent").asLong() > 0);
        assertTrue(root.path("counters").path("server").path("frames.sent").asLong() > 0);

        final BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, "not a readable PNG");
        assertTrue(image.getWidth() >= 800 && image.getWidth() <= 4000, "width " + image.getWidth());
        assertTrue(image.getHeight() >= 400 && image.getHeight() <= 2000, "height " + image.getHeight());
    }

    @Test
    void shouldCheckEveryByteWhenWaitingOnEventsWithMultiDatagramMessages() {
        final Run run = Run.of("perf", "--nic", "loop", "--wait", "--verify", "--sizes", "1,70000", "--iters", "40",
            "--burst", "8");
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains(", wait, verifying received bytes"), run::describe);
        assertTrue(run.out().contains("TCP stream:"), run::describe);
    }

    @Test
    void shouldDeliverEveryByteWhenTheLinkLosesDuplicatesReordersAndCorrupts() {
        final Run run = Run.of("perf", "--nic", "loop", "--verify", "--no-baselines", "--sizes", "8,5000",
            "--iters", "100", "--burst", "16", "--loss", "0.02", "--dup", "0.02", "--reorder", "0.02", "--corrupt",
            "0.02", "--seed", "7");
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains("faults injected by jdet's links: 2% of jdet's frames dropped, 2% sent twice, "
            + "2% held back behind the next one, 2% corrupted; seed 7"), run::describe);
        assertTrue(!run.out().contains("UDP ping-pong"), run::describe);
        assertTrue(!run.out().contains("FaultPlan[") && !run.out().contains("not met"), run::describe);
        assertTrue(run.out().contains("These ratios compare unlike things"), run::describe);
    }

    @Test
    void shouldMeasureForADurationAndCarryItToTheJson() throws IOException {
        final Path json = dir.resolve("duration.json");
        final Run run = Run.of("perf", "--nic", "loop", "--sizes", "64", "--tests", "lat-send,bw-write",
            "--no-baselines", "-D", "0.2", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertEquals(1, root.path("latency").size());
        assertEquals(1, root.path("bandwidth").size());
        assertTrue(root.path("latency").get(0).path("iterations").asLong() >= 100, root::toString);
        assertTrue(root.path("bandwidth").get(0).path("messages").asLong() >= 100, root::toString);
    }

    @Test
    void shouldCountOnlyTheMeasuredIterationsPolls() throws IOException {
        final Path json = dir.resolve("polls.json");
        // Waiting on events, a ping-pong polls a few times per round trip and a stream a few times per burst: the
        // warm-up's 3000 round trips and 60 bursts would push pc past those bounds.
        final Run run = Run.of("perf", "--nic", "loop", "--wait", "--tests", "lat-send,bw-send", "--size", "8",
            "--iters", "100", "--warmup", "3000", "--burst", "50", "--baselines", "udp,tcp", "-q", "--json",
            json.toString());
        assertEquals(0, run.status(), run::describe);
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertEquals(3, root.path("latency").size(), root::toString);
        assertEquals(3, root.path("bandwidth").size(), root::toString);
        for (final JsonNode figure : root.path("latency")) {
            // An unstable step is measured again and its first attempt counts as warm-up (a loaded machine).
            final long attempts = figure.path("stability").path("attempts").asLong(1);
            assertEquals(3000 + (attempts - 1) * 100, figure.path("warmup").asLong(), figure::toString);
            final long polls = figure.path("polls").asLong();
            assertTrue(polls >= 100 && polls < 3000, figure::toString);
            assertTrue(run.out().contains("pc=" + polls + " (total 100)"), run::describe);
        }
        for (final JsonNode figure : root.path("bandwidth")) {
            final long polls = figure.path("polls").asLong();
            assertTrue(polls >= 1 && polls < 60, figure::toString);
        }
    }

    @Test
    void shouldHeadABlockWithTheBurstItsStreamsRan() {
        // 20 messages cannot make a burst of 50: the streams run bursts of 20, and the heading says so.
        final Run run = Run.of("perf", "--nic", "loop", "--tests", "bw-send", "--no-baselines", "--size", "64",
            "--iters", "20", "--burst", "50", "-q");
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains("DET Test Complete for buffer size 64 (burst 20)"), run::describe);
    }

    @Test
    void shouldCompareTheFirstBurstWithTheRestWhenAStreamHasFewerThanTwoWholeBursts() throws IOException {
        final Path json = dir.resolve("halves.json");
        final Run run = Run.of("perf", "--nic", "loop", "--tests", "bw-write", "--no-baselines", "--size", "64",
            "--iters", "15", "--burst", "10", "-q", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        final JsonNode stability = new ObjectMapper().readTree(json.toFile()).path("bandwidth").get(0)
            .path("stability");
        assertTrue(stability.path("early").asDouble() > 0 && stability.path("late").asDouble() > 0,
            stability::toString);
        assertEquals(0, Phases.earlyHalf(10, 10));
        assertEquals(10, Phases.earlyHalf(15, 10));
        assertEquals(10, Phases.earlyHalf(20, 10));
        assertEquals(20, Phases.earlyHalf(45, 10));
    }

    /** A figure says whether it can be trusted, why, and the machine's load before and after its step. */
    private static void assertTrusted(final JsonNode figure) {
        assertTrue(figure.path("trusted").isBoolean(), figure::toString);
        final JsonNode stability = figure.path("stability");
        assertTrue(stability.path("attempts").asInt() >= 1 && stability.path("attempts").asInt() <= 2,
            figure::toString);
        assertEquals(stability.path("stable").asBoolean(), stability.path("reasons").isEmpty(), figure::toString);
        final JsonNode load = figure.path("load");
        assertTrue(load.path("busy").isBoolean() && load.has("before") && load.has("after"), figure::toString);
        assertTrue(load.path("before").has("load1") && load.path("after").has("cpuTicks"), figure::toString);
    }

    @Test
    void shouldSizeAutomaticIterationsWithinTheirCaps() throws IOException {
        final Path json = dir.resolve("auto.json");
        final Run run = Run.of("perf", "--nic", "loop", "--sizes", "8,64K", "--tests", "lat-write,bw-read",
            "--no-baselines", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        for (final JsonNode figure : root.path("latency")) {
            final long cap = figure.path("size").asInt() == 8 ? 10_000 : 1024;
            final long iterations = figure.path("iterations").asLong();
            assertTrue(iterations >= Math.min(100, cap) && iterations <= cap, figure::toString);
            // A test's first size warms up for a time, whatever the count; later sizes stay within half the cap.
            // A step found unstable (a loaded machine) is measured again, its discarded round trips (at most the
            // cap) counted as warm-up.
            assertTrue(figure.path("warmup").asLong() > 0, figure::toString);
            if (figure.path("size").asInt() != 8) {
                final long again = Math.max(1, figure.path("stability").path("attempts").asLong()) - 1;
                assertTrue(figure.path("warmup").asLong() <= cap / 2 + again * cap, figure::toString);
            }
        }
        for (final JsonNode figure : root.path("bandwidth")) {
            final long cap = figure.path("size").asInt() == 8 ? 20_000 : 4096;
            final long messages = figure.path("messages").asLong();
            // Above the cap only when the cap would be measured in less than Phases.MIN_MEASURE_NS (0.1 s) at the
            // warm-up's pace; the bound on the time is a sanity check of the sizing (20 times that aim), no figure.
            assertTrue(messages >= 100 && (messages <= cap
                || figure.path("elapsedNs").asLong() < 20 * Phases.MIN_MEASURE_NS), figure::toString);
            assertEquals(0, figure.path("warmup").asLong() % figure.path("burst").asLong(), figure::toString);
        }
    }

    @Test
    void shouldPlotWithASingleSize() throws IOException {
        final Path png = dir.resolve("one.png");
        final Run run = Run.of("perf", "--nic", "loop", "--size", "64", "--iters", "50", "--burst", "10",
            "--tests", "lat-send,bw-write", "--plot", png.toString());
        assertEquals(0, run.status(), run::describe);
        final BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image);
        assertTrue(Files.size(png) > 1000);
    }

    /** A run of the tool in this JVM, with its output. */
    record Run(int status, String out, String err) {
        static Run of(final String... args) {
            return assertTimeoutPreemptively(DEADLINE, () -> {
                final java.io.StringWriter out = new java.io.StringWriter();
                final java.io.StringWriter err = new java.io.StringWriter();
                final int status = Main.run(args, new java.io.PrintWriter(out), new java.io.PrintWriter(err));
                return new Run(status, out.toString(), err.toString());
            });
        }

        String describe() {
            return "exit " + status + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
        }
    }
}
