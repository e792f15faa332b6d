package io.jdet.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jdet.perf.aeron.AeronMedia;
import io.jdet.perf.report.JsonReport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Short embedded runs of {@code --qps/--threads} and of the Aeron baseline, checking the accounting (every queue
 * pair's messages in the aggregate, each thread's share) and the JSON's shape, never the speed.
 */
class MultiQpAndAeronRunTest {
    @TempDir
    Path dir;

    @Test
    void shouldCountEveryQueuePairInTheAggregateAndEachThreadsShare() throws Exception {
        final Path json = dir.resolve("multi.json");
        final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--nic", "loop", "--tests",
            "lat-send,bw-send,bw-write,bw-read,bw-atomic", "--size", "64", "--iters", "200", "--burst", "50",
            "--qps", "4", "--threads", "2", "--verify", "--no-baselines", "-q", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains("Per thread"), run::describe);
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertEquals(JsonReport.FORMAT, root.path("format").asInt());
        // The latency test keeps one queue pair.
        assertEquals(200, root.path("latency").get(0).path("iterations").asLong());
        final Set<String> tests = new HashSet<>();
        for (final JsonNode figure : root.path("bandwidth")) {
            tests.add(figure.path("test").asText());
            assertEquals(4, figure.path("qps").asInt(), figure::toString);
            assertEquals(2, figure.path("threads").asInt(), figure::toString);
            assertEquals(4 * 200, figure.path("messages").asLong(), figure::toString);
            final JsonNode threads = figure.path("perThread");
            assertEquals(2, threads.size(), figure::toString);
            long messages = 0;
            for (int t = 0; t < 2; t++) {
                final JsonNode share = threads.get(t);
                assertEquals(t, share.path("thread").asInt());
                assertEquals(2, share.path("qps").asInt());
                assertEquals(2 * 200, share.path("messages").asLong(), figure::toString);
                // A thread's own time is within the measurement's wall time.
                assertTrue(share.path("elapsedNs").asLong() > 0, figure::toString);
                assertTrue(share.path("elapsedNs").asLong() <= figure.path("elapsedNs").asLong(),
                    figure::toString);
                assertTrue(share.path("messagesPerSec").asDouble() > 0, figure::toString);
                messages += share.path("messages").asLong();
            }
            assertEquals(figure.path("messages").asLong(), messages);
        }
        assertEquals(Set.of("bw-send", "bw-write", "bw-read", "bw-atomic"), tests);
    }

    @Test
    void shouldRunAeronUdpBesideJdetAndWriteItsRatios() throws Exception {
        final Path json = dir.resolve("aeron-udp.json");
        final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--tests", "lat-send,bw-send", "--sizes", "8,16K",
            "--iters", "200", "--burst", "50", "--verify", "--baselines", "aeron", "-q", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        if (!"udp:127.0.0.1".equals(root.path("conditions").path("nicUsed").asText())) {
            // Without UDP the run fell back to loop, where Aeron runs over IPC: the other test covers that.
            return;
        }
        assertFigures(root, "aeron-udp", "aeron/udp");
        assertTrue(run.out().contains("lat-send/a-udp-pp"), run::describe);
        assertFalse(AeronMedia.running(), "the embedded driver is closed at the end of the run");
    }

    @Test
    void shouldRunAeronIpcBesideJdetOnLoop() throws Exception {
        final Path json = dir.resolve("aeron-ipc.json");
        final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--nic", "loop", "--tests", "lat-send,bw-send",
            "--sizes", "8,16K", "--iters", "200", "--burst", "50", "--verify", "--wait", "--baselines", "aeron",
            "-q", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        assertFigures(new ObjectMapper().readTree(json.toFile()), "aeron-ipc", "aeron/ipc");
        assertFalse(AeronMedia.running(), "the embedded driver is closed at the end of the run");
    }

    private static void assertFigures(final JsonNode root, final String prefix, final String transport) {
        final Set<String> figures = new HashSet<>();
        for (final JsonNode f : root.path("latency")) {
            figures.add(f.path("test").asText() + "@" + f.path("size").asInt());
            if (f.path("test").asText().startsWith("aeron")) {
                assertEquals(transport, f.path("transport").asText());
                assertEquals(200, f.path("iterations").asLong());
                assertTrue(f.path("oneWayUs").path("p50").asDouble() > 0, f::toString);
            }
        }
        for (final JsonNode f : root.path("bandwidth")) {
            figures.add(f.path("test").asText() + "@" + f.path("size").asInt());
            assertEquals(1, f.path("qps").asInt());
            assertEquals(0, f.path("perThread").size());
            if (f.path("test").asText().startsWith("aeron")) {
                assertEquals(transport, f.path("transport").asText());
                assertEquals(200, f.path("messages").asLong());
                assertTrue(f.path("mbPerSec").asDouble() > 0, f::toString);
            }
        }
        assertEquals(Set.of("lat-send@8", "lat-send@16384", "bw-send@8", "bw-send@16384",
            prefix + "-pingpong@8", prefix + "-pingpong@16384", prefix + "-stream@8", prefix + "-stream@16384"),
            figures);
        final Set<String> ratios = new HashSet<>();
        for (final JsonNode r : root.path("ratios")) {
            ratios.add(r.path("name").asText() + "@" + r.path("size").asInt());
            assertTrue(r.path("value").asDouble() > 0, r::toString);
        }
        assertEquals(Set.of("lat-send/" + prefix + "-pingpong@8", "lat-send/" + prefix + "-pingpong@16384",
            "bw-send/" + prefix + "-stream@8", "bw-send/" + prefix + "-stream@16384"), ratios);
    }
}
