package io.jdet.perf;

import io.jdet.FaultPlan;
import io.jdet.perf.rig.Abort;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The side channel's JSON messages, its version check, and the server's reconciliation of its run options with the
 * client's, over real loopback TCP with a hand-driven client.
 */
class SideChannelTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static PerfConfig server(final Set<String> given, final boolean waitMode, final List<Integer> sizes) {
        return new PerfConfig(PerfConfig.Role.SERVER, "loop:side-test", null, 0, List.of(TestKind.LAT_SEND), sizes,
            0, -1, 1000, waitMode, false, FaultPlan.NONE, 4, true, 5_000, 5_000, null, null, true, 0, given);
    }

    private static PerfConfig client(final boolean waitMode, final List<Integer> sizes) {
        return new PerfConfig(PerfConfig.Role.CLIENT, "loop:side-test", "127.0.0.1", 1, List.of(TestKind.LAT_SEND),
            sizes, 0, -1, 1000, waitMode, false, FaultPlan.NONE, 4, true, 5_000, 5_000, null, null, true, 0,
            Set.of());
    }

    @Test
    void shouldRoundTripTypedFieldsAsOneJsonLine() {
        final Message message = Message.of("TEST").with("kind", "lat-send").with("size", 64).with("rate", 0.25)
            .with("wait", true).with("text", "line\nbreak \"quoted\"").build();
        final byte[] json = message.toJson();
        assertTrue(new String(json, StandardCharsets.UTF_8).indexOf('\n') < 0);
        final Message back = Message.fromJson(json);
        assertEquals(message, back);
        assertEquals(64, back.number("size"));
        assertEquals(0.25, back.decimal("rate"));
        assertEquals(64.0, back.decimal("size"));
        assertTrue(back.flag("wait"));
        assertEquals("line\nbreak \"quoted\"", back.text("text"));
        assertEquals(Map.of("kind", "lat-send", "size", "64", "rate", "0.25", "wait", "true", "text",
            "line\nbreak \"quoted\""), back.texts());
    }

    @Test
    void shouldRefuseMalformedOrMistypedMessages() {
        final Message message = Message.of("X").with("n", "7").build();
        assertTrue(assertThrows(PerfException.class, () -> message.number("n")).getMessage()
            .contains("X.n is not a whole number"));
        assertTrue(assertThrows(PerfException.class, () -> message.text("m")).getMessage().contains("X without m"));
        for (final String bad : new String[] {"{", "[]", "{\"verb\": 1, \"fields\": {}}",
            "{\"verb\": \"X\", \"fields\": {\"a\": [1]}}", "{\"verb\": \"X\", \"fields\": {\"a\": null}}"}) {
            assertThrows(PerfException.class, () -> Message.fromJson(bad.getBytes(StandardCharsets.UTF_8)), bad);
        }
    }

    @Test
    void shouldRefuseAClientOfAnotherProtocolVersion() throws Exception {
        final String reply = serveOne(server(Set.of(), false, List.of(8)), channel -> channel.send(
            Message.of("HELLO").with("version", 1).with(RunOptions.of(client(false, List.of(8)))).build()));
        assertTrue(reply.contains("server: side channel: the client speaks protocol version 1, this end 2"), reply);
    }

    @Test
    void shouldRefuseTheBinaryProtocolOfOlderBuildsAtItsFirstByte() throws Exception {
        final CompletableFuture<Throwable> failure = new CompletableFuture<>();
        try (ServerSocket listener = SideChannel.listen(InetAddress.getLoopbackAddress(), 0)) {
            final Thread server = Thread.ofPlatform().start(() -> {
                try (SideChannel side = SideChannel.accept(listener, 5_000, 5_000)) {
                    ServerDriver.serve(server(Set.of(), false, List.of(8)), side, new Abort(), null);
                    failure.complete(null);
                } catch (final RuntimeException e) {
                    failure.complete(e);
                }
            });
            try (Socket old = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort())) {
                final OutputStream out = old.getOutputStream();
                out.write(new byte[] {0, 5, 'H', 'E', 'L', 'L', 'O', 0, 0});
                out.flush();
                final Throwable e = assertTimeoutPreemptively(DEADLINE, () -> failure.get(30, TimeUnit.SECONDS));
                assertTrue(e instanceof PerfException && e.getMessage().contains("does not speak version 2"),
                    String.valueOf(e));
            }
            server.join(DEADLINE);
        }
    }

    @Test
    void shouldRefuseRunOptionsThatDifferFromTheServersAndNameEach() throws Exception {
        final String reply = serveOne(server(Set.of("wait", "sizes", "verify"), true, List.of(8, 64)),
            channel -> ClientDriver.hello(client(false, List.of(8)), channel));
        assertTrue(reply.contains("the client's run options differ from the server's (--sizes/--size: server 8,64, "
            + "client 8; --wait/--poll: server true, client false)"), reply);
        assertTrue(reply.contains("as perftest requires"), reply);
    }

    @Test
    void shouldListConflictsOnlyForOptionsTheServerWasGiven() {
        final Message hello = Message.of("HELLO").with(RunOptions.of(client(false, List.of(8)))).build();
        assertEquals(List.of(), RunOptions.conflicts(server(Set.of(), true, List.of(8, 64)), hello));
        assertEquals(List.of(), RunOptions.conflicts(server(Set.of("tests", "sizes", "wait"), false, List.of(8)),
            hello));
        assertEquals(List.of("--wait/--poll: server true, client false"),
            RunOptions.conflicts(server(Set.of("wait"), true, List.of(8)), hello));
        assertEquals(List.of("--tests: server lat-send, client not sent"),
            RunOptions.conflicts(server(Set.of("tests"), false, List.of(8)), Message.of("HELLO").build()));
    }

    @Test
    void shouldRefuseAClientWhoseSecurityModeDiffersFromTheServers() throws Exception {
        final PerfConfig encrypting = parsed("--server", "--secure", "encrypt");
        final PerfConfig plain = parsed("--client", "127.0.0.1");
        assertTrue(encrypting.given().contains("secure"), encrypting.given()::toString);
        final String reply = serveOne(encrypting, channel -> ClientDriver.hello(plain, channel));
        assertTrue(reply.contains("the client's run options differ from the server's (--secure: server encrypt, "
            + "client none)"), reply);
        assertEquals(List.of("--secure: server none, client auth"), RunOptions.conflicts(
            parsed("--server", "--secure", "none"), Message.of("HELLO").with(RunOptions.of(parsed("--client",
                "127.0.0.1", "--secure", "auth"))).build()));
        // A server not given --secure takes the client's mode.
        assertEquals(List.of(), RunOptions.conflicts(parsed("--server"), Message.of("HELLO")
            .with(RunOptions.of(parsed("--client", "127.0.0.1", "--secure", "encrypt"))).build()));
        assertEquals(io.jdet.Security.Mode.ENCRYPT, RunSettings.of(Message.of("HELLO")
            .with(RunSettings.of(encrypting).toMessage().fields()).with(RunOptions.of(encrypting)).build()).secure());
    }

    @Test
    void shouldWaitWithTheServersOwnTimeout() throws Exception {
        final PerfConfig patient = new PerfConfig(PerfConfig.Role.CLIENT, "loop:side-test", "127.0.0.1", 1,
            List.of(TestKind.LAT_SEND), List.of(8), 0, -1, 1000, true, true, new FaultPlan(0.1, 0, 0, 0, 3), 8, true,
            60_000, 5_000, null, null, true, 0, Set.of());
        final Message hello = Message.of("HELLO").with(RunSettings.of(patient).toMessage().fields())
            .with(RunOptions.of(patient)).build();
        final RunSettings settings = ServerDriver.settings(server(Set.of(), false, List.of(8)), hello);
        assertEquals(5_000, settings.timeoutMs());
        assertEquals(new RunSettings(true, true, 8, 5_000, new FaultPlan(0.1, 0, 0, 0, 3)), settings);
        // A measurement of --duration 3 s may keep the server waiting 3 s for a phase: more than half of its 5 s.
        final PerfConfig lasting = new PerfConfig(PerfConfig.Role.CLIENT, "loop:side-test", "127.0.0.1", 1,
            List.of(TestKind.LAT_SEND), List.of(8), 0, -1, 1000, false, false, FaultPlan.NONE, 4, true, 60_000,
            5_000, null, null, true, 3_000, Set.of());
        final String reply = serveOne(server(Set.of(), false, List.of(8)), channel -> ClientDriver.hello(lasting,
            channel));
        assertTrue(reply.contains("the client's --duration 3 s is more than half of the server's --timeout 5 s, "
            + "the longest the server waits for a phase: give the server --timeout 6 or more"), reply);
    }

    /** The configuration a command line gives. */
    private static PerfConfig parsed(final String... args) {
        final PerfCommand command = new PerfCommand();
        new picocli.CommandLine(command).parseArgs(args);
        return command.config();
    }

    /** A server serving one hand-driven client: returns what the client received after its opening, as text. */
    private static String serveOne(final PerfConfig config, final java.util.function.Consumer<SideChannel> opening)
        throws IOException, InterruptedException {
        return serveOne(config, 5_000, opening);
    }

    /**
     * A server serving one hand-driven client (the opening), with its side channel's timeout: what the client
     * received after its opening, or the refusal it got, as text.
     */
    static String serveOne(final PerfConfig config, final long timeoutMs,
                           final java.util.function.Consumer<SideChannel> opening)
        throws IOException, InterruptedException {
        try (ServerSocket listener = SideChannel.listen(InetAddress.getLoopbackAddress(), 0)) {
            final Thread server = Thread.ofPlatform().daemon().start(() -> {
                try (SideChannel side = SideChannel.accept(listener, 5_000, timeoutMs)) {
                    ServerDriver.serve(config, side, new Abort(), null);
                } catch (final RuntimeException e) {
                    // Expected: the server refuses; the client's view is what the test checks.
                }
            });
            final String reply = assertTimeoutPreemptively(DEADLINE, () -> {
                try (SideChannel channel = SideChannel.connect("127.0.0.1", listener.getLocalPort(), 5_000)) {
                    opening.accept(channel);
                    return "accepted: " + channel.receive();
                } catch (final PerfException e) {
                    return e.getMessage();
                }
            });
            server.join(DEADLINE);
            return reply;
        }
    }
}
