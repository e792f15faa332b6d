package io.jdet.perf;

import io.jdet.FaultPlan;
import io.jdet.perf.rig.Abort;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a server does with a client that sends values no jdet client sends: it refuses them with a clear error before
 * it allocates or registers anything, and it never waits on one message longer than its timeout.
 */
class HostileClientTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final long SERVER_TIMEOUT_MS = 2_000;

    private static PerfConfig server() {
        return new PerfConfig(PerfConfig.Role.SERVER, "loop:hostile-test", null, 0, List.of(TestKind.LAT_SEND),
            List.of(8), 0, -1, 1000, false, false, FaultPlan.NONE, 4, true, SERVER_TIMEOUT_MS, SERVER_TIMEOUT_MS,
            null, null, true, 0, Set.of());
    }

    private static PerfConfig client(final List<Integer> sizes) {
        return new PerfConfig(PerfConfig.Role.CLIENT, "loop:hostile-test", "127.0.0.1", 1,
            List.of(TestKind.LAT_SEND), sizes, 0, -1, 1000, false, false, FaultPlan.NONE, 4, true, 5_000, 5_000,
            null, null, true, 0, Set.of());
    }

    /** A well-formed HELLO with one field replaced. */
    private static Message hello(final String key, final Object value) {
        final PerfConfig config = client(List.of(64));
        return Message.of("HELLO").with("version", SideChannel.VERSION)
            .with(RunSettings.of(config).toMessage().fields()).with(RunOptions.of(config)).with("maxsize", 64)
            .with(key, value).build();
    }

    @Test
    void shouldRefuseAPatternSizeBeyondTheLargestMessageBeforeWelcomingTheClient() throws Exception {
        for (final long maxSize : new long[] {Sizes.MAX + 1L, 0, -1, Integer.MAX_VALUE, 1L << 32}) {
            final String reply = serveOne(channel -> channel.send(hello("maxsize", maxSize)));
            assertTrue(reply.contains("maxsize"), maxSize + ": " + reply);
        }
    }

    @Test
    void shouldRefuseMaxRdOutsideItsRange() throws Exception {
        for (final long maxRd : new long[] {0, -1, 1025, 1L << 32}) {
            final String reply = serveOne(channel -> channel.send(hello("maxrd", maxRd)));
            assertTrue(reply.contains("maxrd"), maxRd + ": " + reply);
        }
    }

    @Test
    void shouldRefuseStepsNoClientSendsBeforeAllocatingForThem() throws Exception {
        final String[][] cases = {
            {"TEST", "lat-send", "0", "10", "0", "1", "size"},           // a zero size: was "/ by zero"
            {"TEST", "bw-send", "0", "10", "0", "1", "size"},
            {"TEST", "lat-send", "4096", "10", "0", "1", "size"},        // beyond the HELLO's maxsize 64
            {"TEST", "lat-send", "2147483647", "10", "0", "1", "size"},  // 4 x 2 GiB buffers
            {"TEST", "lat-send", "4294967304", "10", "0", "1", "size"},  // 2^32 + 8, cast to 8
            {"TEST", "bw-send", "64", "10", "0", "0", "burst"},
            {"TEST", "bw-send", "64", "10", "0", "2147483647", "burst"}, // sq depth burst + 1 overflows
            {"TEST", "bw-send", "64", "-5", "0", "1", "iters"},
            {"TEST", "bw-send", "64", "10", "-5", "1", "warmup"},
            {"TEST", "udp-pingpong", "64", "10", "0", "1", "udp-pingpong"}, // a baseline as a jdet test
            {"TEST", "co-barrier", "64", "10", "0", "1", "co-barrier"},
            {"BASE", "lat-send", "64", "10", "0", "1", "lat-send"},       // a jdet test as a baseline
            {"TEST", "no-such-test", "64", "10", "0", "1", "unknown test"},
        };
        for (final String[] c : cases) {
            final String reply = serveOne(channel -> {
                channel.send(hello("maxsize", 64));
                channel.expect("WELCOME");
                channel.send(Message.of(c[0]).with("kind", c[1]).with("size", Long.parseLong(c[2]))
                    .with("iters", Long.parseLong(c[3])).with("warmup", Long.parseLong(c[4]))
                    .with("burst", Long.parseLong(c[5])).with("port", 9).build());
            });
            assertTrue(reply.contains(c[6]), String.join(" ", c) + ": " + reply);
            assertTrue(!reply.contains("timed out"), String.join(" ", c) + ": " + reply);
        }
    }

    @Test
    void shouldRefuseAGroupOfAnotherShapeOrKind() throws Exception {
        final String[][] cases = {
            {"bw-send", "65", "1", "qps"},
            {"bw-send", "4294967297", "1", "qps"},  // 2^32 + 1, cast to 1
            {"lat-send", "2", "1", "lat-send"},     // a latency test is never a group
        };
        for (final String[] c : cases) {
            final String reply = serveOne(channel -> {
                channel.send(hello("maxsize", 64));
                channel.expect("WELCOME");
                channel.send(Message.of("GROUP").with("kind", c[0]).with("size", 64).with("iters", 10)
                    .with("warmup", 0).with("burst", 1).with("qps", Long.parseLong(c[1]))
                    .with("threads", Long.parseLong(c[2])).build());
            });
            assertTrue(reply.contains(c[3]), String.join(" ", c) + ": " + reply);
            assertTrue(!reply.contains("timed out"), String.join(" ", c) + ": " + reply);
        }
    }

    /** A client that sends a message one byte at a time, each just inside the timeout, must not hold the server. */
    @Test
    void shouldNotWaitOnOneMessageLongerThanItsTimeout() throws Exception {
        final CompletableFuture<Throwable> failure = new CompletableFuture<>();
        try (ServerSocket listener = SideChannel.listen(InetAddress.getLoopbackAddress(), 0)) {
            final Thread server = serving(listener, failure);
            final long start = System.nanoTime();
            try (Socket slow = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort())) {
                final OutputStream out = slow.getOutputStream();
                final byte[] line = hello("maxsize", 64).toJson();
                // 12 bytes 500 ms apart: 6 s in all, every gap a quarter of the server's 2 s timeout.
                for (int i = 0; i < 12 && !failure.isDone(); i++) {
                    try {
                        out.write(line[i]);
                        out.flush();
                    } catch (final IOException e) {
                        break; // the server hung up: what the test wants
                    }
                    Thread.sleep(500);
                }
                final Throwable e = assertTimeoutPreemptively(DEADLINE, () -> failure.get(30, TimeUnit.SECONDS));
                final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(e instanceof PerfException && e.getMessage().contains("timed out"), String.valueOf(e));
                assertTrue(tookMs < 2 * SERVER_TIMEOUT_MS + 1_000, "the server waited " + tookMs + " ms");
            }
            server.join(DEADLINE);
        }
    }

    /** Binary garbage and invalid UTF-8 get a clear refusal, not a hang. */
    @Test
    void shouldRefuseGarbageClearly() throws Exception {
        for (final byte[] garbage : new byte[][] {
            {'{', (byte) 0xC3, (byte) 0x28, '}', '\n'},
            "{\"verb\":\"HELLO\",\"fields\":{\"x\":\"\u0000\"}}\n".getBytes(StandardCharsets.UTF_8),
            {(byte) 0xFF, (byte) 0xFE, 0, 0, '\n'}}) {
            final CompletableFuture<Throwable> failure = new CompletableFuture<>();
            try (ServerSocket listener = SideChannel.listen(InetAddress.getLoopbackAddress(), 0)) {
                final Thread server = serving(listener, failure);
                try (Socket bad = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort())) {
                    bad.getOutputStream().write(garbage);
                    bad.getOutputStream().flush();
                    final Throwable e = assertTimeoutPreemptively(DEADLINE, () -> failure.get(30, TimeUnit.SECONDS));
                    assertTrue(e instanceof PerfException && !e.getMessage().contains("timed out"),
                        String.valueOf(e));
                    final InputStream in = bad.getInputStream();
                    final String reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    assertTrue(reply.startsWith("{\"verb\":\"ERROR\""), reply);
                }
                server.join(DEADLINE);
            }
        }
    }

    /** A hostile server's READY port is the server's error, not the client's internal error. */
    @Test
    void shouldRefuseAPortOutOfRangeAsThePeersError() {
        for (final long port : new long[] {0, -1, 65_536, 1L << 32}) {
            final PerfException e = org.junit.jupiter.api.Assertions.assertThrows(PerfException.class,
                () -> BaselineStep.port(Message.of("READY").with("port", port).build()));
            assertTrue(e.getMessage().contains("READY port " + port), e.getMessage());
        }
        assertEquals(7000, BaselineStep.port(Message.of("READY").with("port", 7000).build()));
    }

    /** A server thread serving one connection; how it ended (null: served to the end) completes the future. */
    private static Thread serving(final ServerSocket listener, final CompletableFuture<Throwable> failure) {
        return Thread.ofPlatform().daemon().start(() -> {
            try (SideChannel side = SideChannel.accept(listener, 5_000, SERVER_TIMEOUT_MS)) {
                ServerDriver.serve(server(), side, new Abort(), null);
                failure.complete(null);
            } catch (final RuntimeException e) {
                failure.complete(e);
            }
        });
    }

    /** A server serving one hand-driven client: what the client received after its opening, as text. */
    private static String serveOne(final Consumer<SideChannel> opening) throws IOException, InterruptedException {
        return SideChannelTest.serveOne(server(), SERVER_TIMEOUT_MS, opening);
    }
}
