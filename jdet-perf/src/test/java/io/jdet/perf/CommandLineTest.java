package io.jdet.perf;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad command lines exit 2 with one line saying why and where to look, checked before anything runs (output files
 * included); a client without a working server exits 1 within its deadline.
 */
class CommandLineTest {

    private static void assertRejected(final String expected, final String... args) {
        final PerfToolTest.Run run = PerfToolTest.Run.of(args);
        assertEquals(2, run.status(), run::describe);
        assertTrue(run.err().contains(expected), () -> "expected '" + expected + "' in\n" + run.describe());
        final String[] lines = run.err().strip().split("\n");
        assertEquals(2, lines.length, run::describe);
        assertTrue(lines[0].startsWith("jdet perf: "), run::describe);
        assertEquals("see 'jdet perf --help'", lines[1].strip(), run::describe);
        assertTrue(run.out().isEmpty(), run::describe);
    }

    @Test
    void shouldExitTwoWithAMessageForBadFlags() {
        assertRejected("Unknown option: '--bogus'", "perf", "--bogus");
        assertRejected("size 0 is outside [1, 64M]", "perf", "--sizes", "8,0");
        assertRejected("not a size: '4Q'", "perf", "--size", "4Q");
        assertRejected("unknown test 'lat-foo'", "perf", "--tests", "lat-send,lat-foo");
        assertRejected("--tests: udp-stream is a baseline", "perf", "--tests", "udp-stream");
        assertRejected("--burst must be in [1, 65535]", "perf", "--burst", "0");
        assertRejected("--server and --client exclude each other", "perf", "--server", "--client", "h");
        assertRejected("--poll and --wait exclude each other", "perf", "--poll", "--wait");
        assertRejected("fault rates must be in [0, 1]", "perf", "--loss", "2");
        assertRejected("only works without --server/--client", "perf", "--server", "--nic", "loop");
        assertRejected("--json and --plot are written by the client", "perf", "--server", "--json", "x.json");
        assertRejected("a size is given twice", "perf", "--sizes", "8,8");
        assertRejected("Invalid value for option '--iters'", "perf", "--iters", "many");
        assertRejected("--duration and --iters exclude each other", "perf", "-D", "2", "--iters", "100");
        assertRejected("--duration must be a positive number", "perf", "--duration", "0");
        assertRejected("--duration must be in [0.1 s, half of --timeout]", "perf", "-D", "20", "--timeout", "30");
        assertRejected("--duration needs a warm-up to size the measurement from", "perf", "-D", "0.2", "--warmup",
            "0");
    }

    @Test
    void shouldCheckOutputFilesBeforeTheRun() throws IOException {
        final Path folder = Files.createTempDirectory("jdet-out");
        try {
            assertRejected("--json " + folder.resolve("none/perf.json") + ": no folder " + folder.resolve("none"),
                "perf", "--json", folder.resolve("none/perf.json").toString());
            assertRejected("--plot " + folder + " is a folder, not a file", "perf", "--plot", folder.toString());
            assertRejected("--json and --plot name the same file", "perf", "--json",
                folder.resolve("x").toString(), "--plot", folder.resolve("./x").toString());
            // Nothing ran, so nothing was written.
            try (var files = Files.list(folder)) {
                assertEquals(0, files.count());
            }
        } finally {
            Files.delete(folder);
        }
    }

    @Test
    void shouldReadTheDurationAndWhichRunOptionsWereGiven() {
        final PerfCommand command = new PerfCommand();
        new picocli.CommandLine(command).parseArgs("-D", "1.5", "--wait", "--size", "64", "--nic", "udp:1.2.3.4");
        final PerfConfig config = command.config();
        assertEquals(1500, config.durationMs());
        assertEquals(1_500_000_000L, config.measureNs());
        assertEquals(PerfConfig.DURATION_CAP, config.iterations(TestKind.LAT_SEND, 8));
        assertEquals(java.util.Set.of("duration", "wait", "sizes"), config.given());
        final PerfCommand plain = new PerfCommand();
        new picocli.CommandLine(plain).parseArgs();
        assertEquals(0, plain.config().durationMs());
        assertEquals(java.util.Set.of(), plain.config().given());
    }

    @Test
    void shouldPrintUsageAndExitTwoWithoutACommand() {
        final PerfToolTest.Run run = PerfToolTest.Run.of();
        assertEquals(2, run.status(), run::describe);
        assertTrue(run.err().contains("perf") && run.err().contains("example"), run::describe);
    }

    @Test
    void shouldRunTheExample() {
        final PerfToolTest.Run run = PerfToolTest.Run.of("example");
        assertEquals(0, run.status(), run::describe);
        assertTrue(run.out().contains("data identical"), run::describe);
    }

    @Test
    void shouldFailCleanlyWhenNothingListens() throws IOException {
        final int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--client", "127.0.0.1:" + port,
                "--timeout", "5");
            assertEquals(1, run.status(), run::describe);
            assertTrue(run.err().contains("cannot reach a jdet perf server at 127.0.0.1:" + port), run::describe);
        });
    }

    @Test
    void shouldTimeOutCleanlyWhenTheServerNeverAnswers() throws Exception {
        final Thread acceptor;
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            acceptor = Thread.ofVirtual().start(() -> {
                try (Socket socket = silent.accept(); InputStream in = socket.getInputStream()) {
                    in.transferTo(OutputStreamSink.INSTANCE);
                } catch (final IOException e) {
                    // The client went away: the point of the test.
                }
            });
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                final PerfToolTest.Run run = PerfToolTest.Run.of("perf", "--client", "127.0.0.1:"
                    + silent.getLocalPort(), "--timeout", "1");
                assertEquals(1, run.status(), run::describe);
                assertTrue(run.err().contains("timed out"), run::describe);
            });
        }
        acceptor.join(Duration.ofSeconds(10));
    }

    /** Discards what the client sends. */
    private static final class OutputStreamSink extends java.io.OutputStream {
        static final OutputStreamSink INSTANCE = new OutputStreamSink();

        @Override
        public void write(final int b) {
        }
    }
}
