package io.jdet.perf;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad command lines exit 2 with a message; a client without a working server exits 1 within its deadline. */
class CommandLineTest {

    private static void assertRejected(final String expected, final String... args) {
        final PerfToolTest.Run run = PerfToolTest.Run.of(args);
        assertEquals(2, run.status(), run::describe);
        assertTrue(run.err().contains(expected), () -> "expected '" + expected + "' in\n" + run.describe());
        assertTrue(run.err().contains("Usage:"), run::describe);
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
