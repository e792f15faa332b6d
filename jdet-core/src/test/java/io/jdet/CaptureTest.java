package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Pcapng;
import io.jdet.testing.Tests;
import io.jdet.testing.Tshark;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32C;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code Configuration.capture}: the frames a NIC sends and receives, written as pcapng, read back by a small reader
 * and, where tshark can be had, dissected by {@code tools/wireshark/jdet.lua} with field checks.
 */
@Timeout(120)
class CaptureTest {
    private static final int SERVICE = 0x77;

    @TempDir
    Path dir;

    /** A connection made by the connection manager, then one of each verb; returns the NICs' addresses. */
    private static String[] session(final Configuration configuration) {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(configuration).connect(false))) {
            final ConnectionListener listener = pair.nicB.connectionManager().listen(SERVICE);
            final CompletableFuture<Void> accepted = CompletableFuture.runAsync(() ->
                listener.take(10_000).accept(pair.qpB, "welcome".getBytes(StandardCharsets.US_ASCII), 10_000));
            pair.nicA.connectionManager().connect(pair.nicB.address(), SERVICE, pair.qpA,
                "hello".getBytes(StandardCharsets.US_ASCII), 10_000);
            accepted.join();
            pair.qpB.recv(1, sge(pair.mrB, 0, 1024), 1);
            pair.bufA.fill((byte) 0x5A);
            pair.qpA.send(2, sge(pair.mrA, 0, 300), 1, 0, 0);
            pair.qpA.write(3, sge(pair.mrA, 0, 200), 1, pair.mrB.address() + 4096, pair.mrB.rKey(),
                0, 0);
            pair.qpA.read(4, sge(pair.mrA, 8192, 100), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            Tests.expectSuccess(pair.cqA, 3);
            Tests.expectSuccess(pair.cqB, 1);
            pair.qpA.fetchAdd(5, 1, new DataSegment().set(pair.mrA, 16384, 8), pair.mrB.address() + 8192,
                pair.mrB.rKey(), 0);
            Tests.expectSuccess(pair.cqA, 1);
            assertTrue(pair.nicA.counters().get("capture.frames") > 0, "capture counter");
            return new String[] {pair.nicA.address(), pair.nicB.address()};
        }
    }

    private static int crcOf(final ByteBuffer frame) {
        final byte[] bytes = new byte[frame.remaining()];
        frame.duplicate().get(bytes);
        bytes[36] = bytes[37] = bytes[38] = bytes[39] = 0;
        final CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    private static byte[] bytes(final ByteBuffer frame) {
        final byte[] bytes = new byte[frame.remaining()];
        frame.duplicate().get(bytes);
        return bytes;
    }

    @Test
    void shouldRecordEveryFrameBothWaysWhenCaptureIsOn() throws IOException {
        final Path file = dir.resolve("session.pcapng");
        final String[] nics = session(new Configuration().capture(file.toString()));
        final Pcapng capture = Pcapng.read(file);

        assertEquals(2, capture.interfaces.size());
        assertEquals(nics[0], capture.interfaces.get(0).name());
        assertEquals(nics[1], capture.interfaces.get(1).name());
        for (final Pcapng.Interface i : capture.interfaces) {
            assertEquals(228, i.linkType(), "LINKTYPE_IPV4");
            assertEquals(9, i.tsResolution(), "nanosecond timestamps");
        }
        final List<byte[]> sentByA = new ArrayList<>();
        final Map<Integer, List<Integer>> opcodesOut = new HashMap<>();
        long lastTs = 0;
        for (final Pcapng.Packet p : capture.packets) {
            final ByteBuffer f = p.frame();
            assertEquals(0x444A, f.getShort(0) & 0xFFFF, "magic");
            assertEquals(f.remaining() - 80, f.getShort(6) & 0xFFFF, "payload length");
            assertEquals(crcOf(f), f.getInt(36), "every recorded frame carries its right CRC, received ones too");
            assertEquals(0x4A44, p.srcPort(), "synthetic fabric port");
            assertTrue(p.timestamp() >= lastTs, "timestamps in order");
            lastTs = p.timestamp();
            if (p.outbound()) {
                opcodesOut.computeIfAbsent(p.iface(), k -> new ArrayList<>()).add(f.get(3) & 0xFF);
                if (p.iface() == 0) {
                    sentByA.add(bytes(f));
                }
            }
        }
        // A's opcodes, in order: the CM handshake, the verbs, the DISCONNECT (QP_DESTROYED) of the close.
        assertEquals(List.of(32, 35, 0, 1, 2, 4, 7), opcodesOut.get(0).stream().filter(op -> op != 6).distinct()
            .toList());
        assertTrue(opcodesOut.get(1).containsAll(List.of(33, 16, 17)), "B sent ACCEPT, READ_RESP, ATOMIC_RESP");
        // Everything B received from A is a frame A sent, byte for byte.
        int receivedByB = 0;
        for (final Pcapng.Packet p : capture.packets) {
            if (!p.outbound() && p.iface() == 1) {
                final byte[] got = bytes(p.frame());
                assertTrue(sentByA.stream().anyMatch(s -> java.util.Arrays.equals(s, got)), "a frame A sent");
                receivedByB++;
            }
        }
        assertTrue(receivedByB >= 6, "B received A's frames: " + receivedByB);
    }

    @Test
    void shouldDissectEveryFieldWhenTsharkReadsTheCapture() throws IOException {
        final Path file = dir.resolve("dissect.pcapng");
        session(new Configuration().capture(file.toString()));
        final Pcapng capture = Pcapng.read(file);
        final List<String> rows = Tshark.run(file, "-2", "-T", "fields", "-E", "separator=;", "-e", "frame.number",
            "-e", "frame.interface_id", "-e", "jdet.opcode", "-e", "jdet.seq", "-e", "jdet.crc.good", "-e",
            "jdet.msg_id", "-e", "jdet.analysis.request_in", "-e", "jdet.cm.request_in", "-e", "jdet.cm.service_id",
            "-e", "jdet.payload_length");
        assertEquals(capture.packets.size(), rows.size(), String.join("\n", rows));
        final Map<String, Integer> lastRequest = new HashMap<>();
        final Map<String, Set<String>> requestFrames = new HashMap<>();
        for (int i = 0; i < rows.size(); i++) {
            final String[] c = rows.get(i).split(";", -1);
            final ByteBuffer f = capture.packets.get(i).frame();
            final int op = f.get(3) & 0xFF;
            assertEquals(String.valueOf(i + 1), c[0]);
            assertEquals(String.valueOf(capture.packets.get(i).iface()), c[1]);
            assertEquals(String.valueOf(op), c[2], rows.get(i));
            assertEquals(Integer.toUnsignedString(f.getInt(16)), c[3], rows.get(i));
            assertEquals("1", c[4], "CRC good: " + rows.get(i));
            assertEquals(String.valueOf(f.getShort(6) & 0xFFFF), c[9]);
            final String requestKey = c[1] + "/" + f.getInt(28);
            if (op == 2 || op == 4) {
                requestFrames.computeIfAbsent(requestKey, k -> new HashSet<>()).add(String.valueOf(i + 1));
            } else if (op == 16 || op == 17) {
                // a request resent on a loaded machine may be answered twice: either copy of it is the right link
                assertTrue(requestFrames.getOrDefault(requestKey, Set.of()).contains(c[6]),
                    "response linked to " + requestFrames.get(requestKey) + ": " + rows.get(i));
            } else if (op == 32) {
                lastRequest.putIfAbsent(c[1] + "/cm", i + 1); // a resent REQUEST links to the first
                assertEquals("0x00000077", c[8]);
            } else if (op == 33) {
                assertEquals(String.valueOf(lastRequest.get(c[1] + "/cm")), c[7], "ACCEPT linked: " + rows.get(i));
            }
        }
        final List<String> tree = Tshark.run(file, "-V");
        assertEquals(capture.packets.size(),
            tree.stream().filter(l -> l.startsWith("jdet (Java Direct Ethernet Transport)")).count());
        assertTrue(tree.stream().anyMatch(l -> l.contains("Private data: 68656c6c6f")), "CM private data \"hello\"");
        final List<String> info = Tshark.run(file, "-Y", "jdet.opcode == 2");
        assertTrue(info.stream().allMatch(l -> l.contains("READ qp ") && l.contains(" seq ")), String.join("\n", info));
    }

    @Test
    void shouldFlagCorruptionAndRetransmissionsWhenFaultsAreInjected() throws IOException {
        final Path file = dir.resolve("faults.pcapng");
        final Configuration faulty = new Configuration().capture(file.toString()).minRtoUs(300).maxRtoUs(5_000)
            .faults(new FaultPlan(0.1, 0, 0, 0.05, 7));
        final long retransmitted;
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(faulty))) {
            for (int i = 0; i < 100; i++) {
                pair.qpA.write(i, sge(pair.mrA, 0, 256), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
                Tests.expectSuccess(pair.cqA, 1);
            }
            final Map<String, Long> a = pair.nicA.counters();
            retransmitted = a.get("frames.retransmitted") + a.get("frames.sack_retransmitted");
        }
        assertTrue(retransmitted > 0, "10% loss over 100 writes made A retransmit");
        final Pcapng capture = Pcapng.read(file);
        long badCrc = 0;
        for (final Pcapng.Packet p : capture.packets) {
            final ByteBuffer f = p.frame();
            if (crcOf(f) != f.getInt(36)) {
                assertTrue(p.outbound(), "a corrupted frame is recorded where it was sent, never received");
                badCrc++;
            }
        }
        assertTrue(badCrc > 0, "5% corruption left bad frames in the capture");
        assertEquals(badCrc, Tshark.run(file, "-Y", "jdet.crc.good == 0").size(), "the dissector's CRC check");
        assertEquals(badCrc, Tshark.run(file, "-Y", "_ws.expert.group == \"Checksum\" && jdet.crc.bad").size());
        final long flagged = Tshark.run(file, "-Y", "jdet.analysis.retransmission && frame.interface_id == 0"
            + " && frame.packet_flags_direction == 2").size();
        assertTrue(flagged > 0 && flagged <= retransmitted + badCrc,
            "retransmissions flagged: " + flagged + ", A retransmitted " + retransmitted);
    }

    @Test
    void shouldSurviveFuzzedCapturesWithoutLuaErrors() throws IOException, InterruptedException {
        final Path file = dir.resolve("clean.pcapng");
        session(new Configuration().capture(file.toString()));
        final Path editcap = Path.of(Tshark.require()).resolveSibling("editcap");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(editcap), "editcap not installed");
        final Path fuzzed = dir.resolve("fuzzed.pcapng");
        final Process p = new ProcessBuilder(editcap.toString(), "-E", "0.05", file.toString(), fuzzed.toString())
            .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertEquals(0, p.waitFor());
        final List<String> tree = Tshark.run(fuzzed, "-V");
        assertFalse(tree.isEmpty());
    }

    @Test
    void shouldFailToOpenTheNicWhenTheCaptureFileCannotBeWritten() {
        try (Det det = Det.open(new Configuration().capture(dir.resolve("missing/dir/x.pcapng").toString()))) {
            final DetException e = assertThrows(DetException.class, () -> det.openNic(Tests.uniqueFabric("cap"), null));
            assertEquals(Errno.EINVAL, e.errno());
        }
    }

    @Test
    void shouldWriteNothingWhenCaptureIsOff() {
        try (Loopback pair = Loopback.open()) {
            assertArrayEquals(new Object[] {null, null},
                new Object[] {pair.nicA.counters().get("capture.frames"), pair.det.configuration().capture()});
        }
    }
}
