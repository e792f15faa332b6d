package io.jdet.systest;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.QpState;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two JVMs on the shared-memory link ({@code shm:<group>}): every verb, with and without injected faults, and a
 * peer killed with SIGKILL, whose connections fail with the usual statuses within the acknowledgement timeout and
 * whose ring file is deleted, while a restarted peer on the same group gets a new address.
 */
@Timeout(180)
class ShmTwoProcessTest {
    /** Long enough that a peer descheduled on a loaded 2-core machine is not taken for dead before it is killed. */
    private static final long ACK_TIMEOUT_MS = 2_000;

    private static String group(final String hint) {
        return "shm:" + hint + "-" + ProcessHandle.current().pid();
    }

    /** The ring file behind a shm NIC address {@code shm:<group>/<id>}, in the default directory. */
    private static Path ringFile(final String address) throws IOException {
        final String rest = address.substring("shm:".length());
        final Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        return Path.of(Configuration.SHM_DIRECTORY_DEFAULT, "jdet-" + uid).resolve(rest + ".ring");
    }

    private static long ringFiles(final Path groupDirectory) throws IOException {
        if (!Files.isDirectory(groupDirectory)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(groupDirectory)) {
            return files.filter(f -> f.toString().endsWith(".ring")).count();
        }
    }

    @Test
    void shouldRunEveryVerbBetweenTwoProcesses() throws Exception {
        final String nic = group("verbs");
        final Path directory;
        try (PeerProcess server = new PeerProcess(List.of(), "server", nic, String.valueOf(PeerMain.SERVICE), "-");
             Det det = Det.open(VerbsWorkload.configuration());
             Endpoint client = new Endpoint(det, nic, VerbsWorkload.BUFFER_BYTES, 64)) {
            final String address = server.awaitLine("ADDRESS", 60_000);
            assertTrue(address.startsWith(nic + "/"), address);
            directory = ringFile(address).getParent();
            final long[] remote = Handshake.parse(client.nic.connectionManager().connect(address,
                PeerMain.SERVICE, client.qp, null, 30_000));
            VerbsWorkload.client(client, remote[0], (int) remote[1]);
            server.awaitLine("OK", 60_000);
            server.closeInput(); // the client has its last completion: the server may go
            assertEquals(0, server.awaitExit(30_000), server.output());
            final Map<String, Long> c = client.nic.counters();
            assertEquals(0, c.get("link.rx.bad_length") + c.get("link.rx.bad_crc") + c.get("link.tx.lost"),
                c.toString());
        }
        assertEquals(0, ringFiles(directory), "both NICs deleted their rings when they closed");
    }

    @Test
    void shouldDeliverEveryVerbExactlyOnceUnderFaults() throws Exception {
        final String nic = group("faults");
        try (PeerProcess server = new PeerProcess(List.of(), "server", nic, String.valueOf(PeerMain.SERVICE), "303");
             Det det = Det.open(PeerMain.faults(304));
             Endpoint client = new Endpoint(det, nic, VerbsWorkload.BUFFER_BYTES, 64)) {
            final String address = server.awaitLine("ADDRESS", 60_000);
            final long[] remote = Handshake.parse(client.nic.connectionManager().connect(address,
                PeerMain.SERVICE, client.qp, null, 30_000));
            VerbsWorkload.client(client, remote[0], (int) remote[1]);
            server.awaitLine("OK", 60_000);
            server.closeInput(); // the client has its last completion: the server may go
            assertEquals(0, server.awaitExit(30_000), server.output());
            final Map<String, Long> c = client.nic.counters();
            assertTrue(c.get("fault.dropped") > 0 && c.get("fault.corrupted") > 0, c.toString());
            assertTrue(c.get("link.rx.bad_crc") > 0, "the peer's corrupted frames were caught: " + c);
        }
    }

    @Test
    void shouldFailConnectionsAndCleanUpWhenPeerIsKilled() throws Exception {
        final String nic = group("death");
        try (PeerProcess peer = new PeerProcess(List.of(), "sink", nic, String.valueOf(PeerMain.SERVICE));
             Det det = Det.open(new Configuration().ackTimeoutMs(ACK_TIMEOUT_MS))) {
            final EventQueue events = det.createEvent(null);
            final Endpoint e = new Endpoint(det, nic, VerbsWorkload.BUFFER_BYTES, 64, events);
            final String address = peer.awaitLine("ADDRESS", 60_000);
            final long[] remote = Handshake.parse(e.nic.connectionManager().connect(address, PeerMain.SERVICE, e.qp,
                null, 30_000));
            peer.awaitLine("CONNECTED", 30_000);
            final int size = 60_000;
            for (int i = 0; i < 20; i++) {
                e.qp.write(i, e.at(VerbsWorkload.WRITE_AREA, size), 1, remote[0] + VerbsWorkload.WRITE_AREA,
                    (int) remote[1], 0, 0);
            }
            for (final WorkCompletion wc : e.sent(20, 30_000)) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            final Path ring = ringFile(address);
            assertTrue(Files.exists(ring));
            peer.kill();
            // Frames now go into a ring nobody reads, or are dropped once it is known dead: the retransmission
            // timeout fails the request with RETRY_EXCEEDED and flushes the rest.
            for (int i = 0; i < 8; i++) {
                e.qp.write(100 + i, e.at(VerbsWorkload.WRITE_AREA, size), 1, remote[0] + VerbsWorkload.WRITE_AREA,
                    (int) remote[1], 0, 0);
            }
            final List<WorkCompletion> rest = e.sent(8, 20 * ACK_TIMEOUT_MS + 10_000);
            assertEquals(WcStatus.RETRY_EXCEEDED, rest.get(0).status(), rest.toString());
            for (final WorkCompletion wc : rest.subList(1, rest.size())) {
                assertEquals(WcStatus.FLUSHED, wc.status(), rest.toString());
            }
            assertEquals(QpState.ERROR, e.qp.query().state());
            final EventRecord record = new EventRecord();
            events.waitOn(10_000_000, record);
            assertEquals(EventCode.ACK_TIMEOUT, record.code(), record.toString());
            // The next NIC to open the group deletes the dead peer's ring; a restarted peer gets a new address.
            try (PeerProcess again = new PeerProcess(List.of(), "sink", nic, String.valueOf(PeerMain.SERVICE))) {
                final String second = again.awaitLine("ADDRESS", 60_000);
                assertNotEquals(address, second);
                assertFalse(Files.exists(ring), "the killed peer's ring was deleted");
                assertTrue(Files.exists(ringFile(second)));
                assertEquals(QpState.ERROR, e.qp.query().state());
            }
            e.close();
            events.close();
            // The restarted peer was killed too: opening the group once more sweeps its ring, and the last NIC
            // to close removes the group directory.
            try (Det sweeper = Det.open()) {
                sweeper.openNic(nic, null).close();
            }
            assertEquals(0, ringFiles(ring.getParent()));
            assertFalse(Files.exists(ring.getParent()));
        }
    }
}
