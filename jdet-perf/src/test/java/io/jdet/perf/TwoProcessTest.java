package io.jdet.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code --server} in a child JVM and {@code --client} in this one. Two processes need a network link: the
 * in-process fabric cannot cross them, so the test needs {@code udp:127.0.0.1} (see {@link #requireUdp}).
 */
class TwoProcessTest {
    private static final Pattern LISTENING = Pattern.compile("listening on TCP port (\\d+)");

    @TempDir
    Path dir;

    static boolean udpAvailable() {
        try (Det det = Det.open()) {
            det.openNic("udp:127.0.0.1", null).close();
            return true;
        } catch (final DetException e) {
            if (e.errno() == Errno.ENODEV) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Two processes need the UDP link: without it the test is skipped with the reason, except in CI
     * ({@code CI=true}), where a skip would pass silently, so it fails.
     *
     * @param available whether {@code udp:127.0.0.1} opens
     * @param ci        whether the tests run in CI
     */
    static void requireUdp(final boolean available, final boolean ci) {
        final String why = "udp:127.0.0.1 gives ENODEV (no IPv4 loopback here?), and loop is in-process only, so "
            + "two processes cannot talk";
        if (!available && ci) {
            fail(why + ": CI=true, where this test must run rather than be skipped");
        }
        assumeTrue(available, "skipped: " + why + " (with CI=true this fails instead)");
    }

    @Test
    void shouldFailInCiAndSkipElsewhereWhenUdpIsMissing() {
        assertThrows(org.opentest4j.AssertionFailedError.class, () -> requireUdp(false, true));
        assertThrows(org.opentest4j.TestAbortedException.class, () -> requireUdp(false, false));
        requireUdp(true, true);
    }

    @Test
    void shouldRunServerAndClientInTwoProcessesOverUdp() throws Exception {
        requireUdp(udpAvailable(), "true".equalsIgnoreCase(System.getenv("CI")));
        final String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process server = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path"), Main.class.getName(), "perf", "--server", "--port", "0",
            "--timeout", "60").redirectErrorStream(true).start();
        try {
            final BufferedReader lines = new BufferedReader(new InputStreamReader(server.getInputStream(),
                StandardCharsets.UTF_8));
            final int port = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                        final Matcher m = LISTENING.matcher(line);
                        if (m.find()) {
                            return Integer.parseInt(m.group(1));
                        }
                    }
                    throw new IllegalStateException("the server exited without listening");
                } catch (final java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).get(60, TimeUnit.SECONDS);
            final CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> {
                try {
                    lines.transferTo(java.io.Writer.nullWriter());
                } catch (final java.io.IOException e) {
                    // The server is gone; its exit status tells the rest.
                }
            });

            final Path json = dir.resolve("two.json");
            final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--client", "127.0.0.1:" + port, "--sizes",
                "64,70000", "--iters", "100", "--burst", "20", "--verify", "--json", json.toString());
            assertEquals(0, run.status(), run::describe);
            final JsonNode root = new ObjectMapper().readTree(json.toFile());
            assertTrue(root.path("conditions").path("nicUsed").asText().startsWith("udp:"), root::toString);
            assertEquals("client", root.path("conditions").path("role").asText());
            assertTrue(server.waitFor(60, TimeUnit.SECONDS), "the server did not exit after the run");
            assertEquals(0, server.exitValue());
            drain.get(10, TimeUnit.SECONDS);
        } finally {
            server.destroyForcibly();
        }
    }
}
