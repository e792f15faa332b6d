package io.jdet.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jdet.FaultPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code --server} and {@code --client} paths, each on its own thread of this JVM so that the in-process
 * fabric can join them (the command line forbids loop there; the configuration, built here, allows it). The same
 * code crosses processes in {@link TwoProcessTest} once UDP exists.
 */
class ServerClientTest {
    private static final Pattern LISTENING = Pattern.compile("listening on TCP port (\\d+)");

    @TempDir
    Path dir;

    private static PerfConfig config(final PerfConfig.Role role, final String host, final int port,
                                     final Path json) {
        return new PerfConfig(role, "loop:server-client", host, port, List.of(TestKind.values()).stream()
            .filter(TestKind::jdet).toList(), List.of(100, 3000), 60, -1, 12, true, true, FaultPlan.NONE, 2, true,
            20_000, 20_000, json, null, true, 0, java.util.Set.of());
    }

    @Test
    void shouldServeOneClientRunAndExit() throws Exception {
        final CompletableFuture<Integer> port = new CompletableFuture<>();
        final StringWriter serverLog = new StringWriter();
        final Writer watch = new Writer() {
            @Override
            public void write(final char[] buffer, final int offset, final int length) {
                serverLog.write(buffer, offset, length);
                final Matcher m = LISTENING.matcher(serverLog.toString());
                if (m.find()) {
                    port.complete(Integer.parseInt(m.group(1)));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        final CompletableFuture<Void> server = CompletableFuture.runAsync(() -> PerfRun.execute(
            config(PerfConfig.Role.SERVER, null, 0, null), new PrintWriter(watch, true),
            new PrintWriter(Writer.nullWriter())));
        final Path json = dir.resolve("client.json");
        final StringWriter out = new StringWriter();
        assertTimeoutPreemptively(Duration.ofMinutes(2), () -> PerfRun.execute(
            config(PerfConfig.Role.CLIENT, "127.0.0.1", port.get(30, TimeUnit.SECONDS), json),
            new PrintWriter(out, true), new PrintWriter(Writer.nullWriter())));
        server.get(30, TimeUnit.SECONDS);
        assertTrue(serverLog.toString().contains("run complete: 19 measurements served"), serverLog::toString);
        assertTrue(out.toString().contains("jdet perf: client over loop:server-client"), out::toString);

        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertEquals("client", root.path("conditions").path("role").asText());
        assertEquals("wait", root.path("conditions").path("mode").asText());
        assertEquals(8, root.path("latency").size());
        assertEquals(11, root.path("bandwidth").size());
        assertTrue(root.path("counters").path("server").path("frames.received").asLong() > 0);
    }
}
