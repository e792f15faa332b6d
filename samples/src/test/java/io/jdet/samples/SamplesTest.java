package io.jdet.samples;

import io.jdet.ConnectionRejectedException;
import io.jdet.samples.kv.KvStore;
import io.jdet.samples.pingpong.PingPong;
import io.jdet.samples.transfer.FileTransfer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each sample as its README runs it: the server in a process of its own over UDP on 127.0.0.1, its client (two
 * for the key-value store) in this JVM; the results are checked, not only the exit codes.
 */
@Timeout(60)
class SamplesTest {

    @Test
    void shouldEchoEveryPingBetweenTwoProcesses() throws Exception {
        try (ServerProcess server = new ServerProcess(PingPong.class, "server", "udp:127.0.0.1:0")) {
            final String address = server.awaitAddress();
            final ByteArrayOutputStream report = new ByteArrayOutputStream();
            PingPong.ping(address, 300, 256, new PrintStream(report, true, StandardCharsets.UTF_8));
            assertTrue(report.toString(StandardCharsets.UTF_8).startsWith("300 pings of 256 bytes, every echo "
                + "checked"), report.toString(StandardCharsets.UTF_8));
            assertTrue(server.awaitSuccess().contains("echoed 300 messages of 256 bytes"));
        }
    }

    @Test
    void shouldTellTheClientWhyItWasRejected() throws Exception {
        try (ServerProcess server = new ServerProcess(PingPong.class, "server", "udp:127.0.0.1:0")) {
            final String address = server.awaitAddress();
            final ConnectionRejectedException e = assertThrows(ConnectionRejectedException.class,
                () -> PingPong.ping(address, 1, 1 << 20, new PrintStream(new ByteArrayOutputStream(), true,
                    StandardCharsets.UTF_8)));
            assertEquals(ConnectionRejectedException.Reason.REJECTED, e.reason());
            assertEquals("count and size must be >= 0, size <= 65536",
                new String(e.privateData(), StandardCharsets.UTF_8));
            assertTrue(server.awaitSuccess().contains("rejected udp:127.0.0.1:"));
        }
    }

    @Test
    void shouldLoseNoUpdateWhenTwoClientsCompareAndSwapTheSameValue() throws Exception {
        try (ServerProcess server = new ServerProcess(KvStore.class, "server", "udp:127.0.0.1:0", "64", "2")) {
            final String address = server.awaitAddress();
            try (KvStore.KvClient a = new KvStore.KvClient(address);
                 KvStore.KvClient b = new KvStore.KvClient(address)) {
                final CompletableFuture<Void> first = CompletableFuture.runAsync(() -> addMany(a));
                final CompletableFuture<Void> second = CompletableFuture.runAsync(() -> addMany(b));
                first.get(30, TimeUnit.SECONDS);
                second.get(30, TimeUnit.SECONDS);
                assertEquals(2 * 300, a.get(3), "every compare-and-swap increment of both clients counted");
                assertEquals(2 * 300, b.get(3));
                a.put(5, -42);
                assertEquals(-42, b.get(5), "b reads what a wrote, one-sided");
                final ByteArrayOutputStream out = new ByteArrayOutputStream();
                b.run(List.of("add", "7", "10", "3", "get", "7"), new PrintStream(out, true, StandardCharsets.UTF_8));
                assertEquals("add 7 10 x3 -> 30\nget 7 = 30\n", out.toString(StandardCharsets.UTF_8));
            }
            final String output = server.awaitSuccess();
            assertTrue(output.contains("slot 3 = 600\nslot 5 = -42\nslot 7 = 30\nserved 2 client(s)"), output);
        }
    }

    private static void addMany(final KvStore.KvClient client) {
        for (int i = 0; i < 300; i++) {
            client.add(3, 1);
        }
    }

    @Test
    void shouldTransferAFileByRdmaWriteAndVerifyIt(@TempDir final Path dir) throws Exception {
        final byte[] content = new byte[3 * FileTransfer.CHUNK * FileTransfer.SLOTS / 2 + 12_345];
        new Random(7).nextBytes(content);
        final Path input = Files.write(dir.resolve("input.bin"), content);
        final Path output = dir.resolve("output.bin");
        try (ServerProcess server = new ServerProcess(FileTransfer.class, "server", "udp:127.0.0.1:0",
            output.toString())) {
            final String address = server.awaitAddress();
            final ByteArrayOutputStream report = new ByteArrayOutputStream();
            final boolean verified = FileTransfer.send(address, input, true,
                new PrintStream(report, true, StandardCharsets.UTF_8));
            final String text = report.toString(StandardCharsets.UTF_8);
            assertTrue(verified, text);
            assertTrue(text.startsWith("verified: the server's copy has the same sha-256\nsent " + content.length
                + " bytes"), text);
            assertTrue(server.awaitSuccess().contains("received " + content.length + " bytes"));
        }
        assertArrayEquals(content, Files.readAllBytes(output));
    }

    @Test
    void shouldTransferAnEmptyFile(@TempDir final Path dir) throws Exception {
        final Path input = Files.write(dir.resolve("empty.bin"), new byte[0]);
        final Path output = dir.resolve("copy.bin");
        try (ServerProcess server = new ServerProcess(FileTransfer.class, "server", "udp:127.0.0.1:0",
            output.toString())) {
            assertTrue(FileTransfer.send(server.awaitAddress(), input, true, new PrintStream(
                new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
            assertTrue(server.awaitSuccess().contains("received 0 bytes"));
        }
        assertEquals(0, Files.size(output));
    }
}
