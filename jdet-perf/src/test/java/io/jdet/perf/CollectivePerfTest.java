package io.jdet.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tiny {@code jdet perf --tests co-* --ranks 3} run on the in-process fabric: every figure is there, with its
 * model prediction and algorithm (never its speed); and the co-* tests' option rules.
 */
class CollectivePerfTest {
    @TempDir
    Path dir;

    @Test
    void everyCollectiveHasAFigureAndAModelPrediction() throws Exception {
        final Path json = dir.resolve("co.json");
        final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--nic", "loop", "--tests",
            "co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce", "--ranks", "3", "--sizes", "8,20K",
            "--iters", "5", "--warmup", "2", "-q", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains("# co-allreduce, 3 ranks"), run::describe);
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertEquals("jdet-perf-collectives/1", root.path("format").asText());
        assertEquals(3, root.path("ranks").asInt());
        assertTrue(root.path("alpha_us").asDouble() > 0, root::toString);
        assertTrue(root.path("beta_ns_per_byte").asDouble() >= 0, root::toString);
        final Set<String> seen = new HashSet<>();
        for (final JsonNode figure : root.path("results")) {
            seen.add(figure.path("test").asText() + "@" + figure.path("size").asInt());
            assertEquals(5, figure.path("iterations").asLong());
            assertTrue(figure.path("avg_us").asDouble() > 0, figure::toString);
            assertTrue(figure.path("model_us").asDouble() > 0, figure::toString);
            assertTrue(!figure.path("algorithm").asText().isEmpty(), figure::toString);
            // every collective of 3 members sends (the barrier's messages are empty), and each message is a frame
            assertTrue(figure.path("frames_per_op").asDouble() >= 2, figure::toString);
            assertTrue(figure.has("acks_per_op") && figure.path("acks_per_op").asDouble() >= 0, figure::toString);
            assertTrue(figure.path("acks_per_op").asDouble() < figure.path("frames_per_op").asDouble(),
                figure::toString);
        }
        assertTrue(run.out().contains("frames/op"), run::describe);
        assertEquals(Set.of("co-barrier@0", "co-bcast@8", "co-bcast@20480", "co-allgather@8", "co-allgather@20480",
            "co-alltoall@8", "co-alltoall@20480", "co-allreduce@8", "co-allreduce@20480"), seen);
    }

    @Test
    void aThreadPerMemberRunsEveryCollective() throws Exception {
        final Path json = dir.resolve("threads.json");
        final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--nic", "loop", "--tests",
            "co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce", "--ranks", "4", "--sizes", "8,20K",
            "--iters", "7", "--warmup", "2", "-q", "--thread-per-member", "--json", json.toString());
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains("a thread per member"), run::describe);
        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertTrue(root.path("driver").asText().startsWith("a thread per member"), root::toString);
        int figures = 0;
        for (final JsonNode figure : root.path("results")) {
            assertEquals(7, figure.path("iterations").asLong());
            assertTrue(figure.path("avg_us").asDouble() > 0, figure::toString);
            assertTrue(figure.path("frames_per_op").asDouble() >= 3, figure::toString); // 4 members: each sends
            figures++;
        }
        assertEquals(9, figures, root::toString);
    }

    @Test
    void theCollectiveTestsRunOnTheirOwnAndRanksNeedsThem() {
        final PerfToolTest.Run mixed = PerfToolTest.Run.of("perf", "--tests", "co-bcast,lat-send");
        assertEquals(2, mixed.status(), mixed::describe);
        assertTrue(mixed.err().contains("the co-* tests run on their own"), mixed::describe);
        final PerfToolTest.Run ranks = PerfToolTest.Run.of("perf", "--tests", "lat-send", "--ranks", "3");
        assertEquals(2, ranks.status(), ranks::describe);
        assertTrue(ranks.err().contains("--ranks is for the co-* tests"), ranks::describe);
        final PerfToolTest.Run threads = PerfToolTest.Run.of("perf", "--tests", "lat-send", "--thread-per-member");
        assertEquals(2, threads.status(), threads::describe);
        assertTrue(threads.err().contains("--thread-per-member is for the co-* tests"), threads::describe);
    }

    @Test
    void theCollectiveTestsRefuseTheOptionsTheyWouldIgnore() {
        final String[][] refused = {{"--wait"}, {"--verify"}, {"--secure", "auth"}, {"--loss", "0.01"},
            {"--dup", "0.01"}, {"--reorder", "0.01"}, {"--corrupt", "0.01"}, {"--seed", "3"}, {"--max-rd", "8"},
            {"--baselines", "udp"}, {"--no-baselines"}, {"--qps", "2"}, {"--threads", "1"}, {"-D", "1"},
            {"--burst", "10"}, {"--plot", dir.resolve("co.png").toString()}, {"--port", "45000"}};
        for (final String[] option : refused) {
            final java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("perf", "--nic", "loop",
                "--tests", "co-barrier", "--ranks", "2", "--iters", "2", "-q"));
            args.addAll(java.util.List.of(option));
            final PerfToolTest.Run run = PerfToolTest.Run.of(args.toArray(String[]::new));
            assertEquals(2, run.status(), run::describe);
            final String name = option[0].equals("-D") ? "--duration" : option[0];
            assertTrue(run.err().contains("the co-* tests do not use " + name + " ("), run::describe);
        }
        final PerfToolTest.Run two = PerfToolTest.Run.of("perf", "--tests", "co-bcast", "--wait", "--loss", "0.1");
        assertEquals(2, two.status(), two::describe);
        assertTrue(two.err().contains("the co-* tests do not use --wait, --loss ("), two::describe);
    }
}
