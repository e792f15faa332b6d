package io.jdet.perf;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.Nic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code jdet stat} reading another JVM's NIC counters, and {@code jdet perf --capture}. */
@Timeout(120)
class StatAndCaptureTest {
    @TempDir
    Path dir;

    /**
     * The process {@code jdet stat} looks at: opens a NIC, prints its address, and waits for its standard input to
     * close.
     *
     * @param args unused
     * @throws IOException if standard input fails
     */
    public static void main(final String[] args) throws IOException {
        try (Det det = Det.open(new Configuration()); Nic nic = det.openNic("loop:stat-target", null)) {
            System.out.println(nic.address());
            System.out.flush();
            System.in.readAllBytes();
        }
    }

    @Test
    void shouldShowTheCountersOfTheNicsOfAnotherProcess() throws Exception {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process target = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
            StatAndCaptureTest.class.getName()).redirectErrorStream(true).start();
        try {
            final String address = new BufferedReader(new InputStreamReader(target.getInputStream(),
                StandardCharsets.UTF_8)).readLine();
            assertNotNull(address, "the target process started");
            final StringWriter out = new StringWriter();
            final StringWriter err = new StringWriter();
            final int status = Main.run(new String[] {"stat", Long.toString(target.pid())}, new PrintWriter(out),
                new PrintWriter(err));
            assertEquals(0, status, out + "\n" + err);
            final String text = out.toString();
            assertTrue(text.startsWith("pid " + target.pid()), text);
            assertTrue(text.contains("  NIC " + address), text);
            assertTrue(text.matches("(?s).*\\n    frames\\.sent +0\\n.*"), text);
            assertTrue(text.contains("rx.bad_header"), text);
        } finally {
            target.getOutputStream().close();
            if (!target.waitFor(10, TimeUnit.SECONDS)) {
                target.destroyForcibly();
            }
        }
    }

    @Test
    void shouldSaySoWhenNoProcessHasNics() {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int status = Main.run(new String[] {"stat", Long.toString(ProcessHandle.current().pid())},
            new PrintWriter(out), new PrintWriter(err));
        assertEquals(1, status);
        assertTrue(err.toString().contains("no running process with jdet NICs"), err.toString());
    }

    @Test
    void shouldWriteACaptureWhenPerfIsAskedTo() throws IOException {
        final Path file = dir.resolve("perf.pcapng");
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int status;
        try {
            status = Main.run(new String[] {"perf", "--nic", "loop", "--no-baselines", "--tests", "lat-write",
                "--size", "64", "--iters", "20", "--warmup", "0", "--capture", file.toString()},
                new PrintWriter(out), new PrintWriter(err));
        } finally {
            System.clearProperty(Configuration.CAPTURE_PROP);
        }
        assertEquals(0, status, out + "\n" + err);
        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x0A0D0D0A, b.getInt(0), "a pcapng section header");
        int writes = 0;
        for (int at = b.getInt(4); at < b.limit(); at += b.getInt(at + 4)) {
            // enhanced packet: 28 bytes of block header, 28 of IPv4 and UDP, then the jdet header
            if (b.getInt(at) == 6 && b.getShort(at + 56) == 0x444A && b.get(at + 56 + 3) == 1) {
                writes++;
            }
        }
        assertTrue(writes >= 20, "the RDMA writes of the run were captured: " + writes);
    }
}
