package io.jdet.systest;

import io.jdet.Det;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two JVMs over 127.0.0.1, connected through the connection manager, both injecting 5% loss, 5% duplication,
 * 5% reordering and 1% corruption: every byte of every message of every verb arrives exactly once and in order,
 * every completion is right, and the atomics add up exactly ({@link VerbsWorkload} checks it all, on both sides).
 */
@Timeout(180)
class TwoProcessFaultTest {

    @Test
    void shouldDeliverEveryVerbExactlyOnceBetweenProcessesUnderFaults() throws Exception {
        for (final long seed : new long[] {101, 202}) {
            try (PeerProcess server = new PeerProcess(List.of(), "server", "udp:127.0.0.1",
                String.valueOf(PeerMain.SERVICE), String.valueOf(seed));
                 Det det = Det.open(PeerMain.faults(seed + 1));
                 Endpoint client = new Endpoint(det, "udp:127.0.0.1", VerbsWorkload.BUFFER_BYTES, 64)) {
                final String address = server.awaitLine("ADDRESS", 60_000);
                final long[] remote = Handshake.parse(client.nic.connectionManager().connect(address,
                    PeerMain.SERVICE, client.qp, null, 30_000));
                VerbsWorkload.client(client, remote[0], (int) remote[1]);
                server.awaitLine("OK", 60_000);
                server.closeInput(); // the client has its last completion: the server may go
                assertEquals(0, server.awaitExit(30_000), server.output());
                final Map<String, Long> c = client.nic.counters();
                assertTrue(c.get("fault.dropped") > 0 && c.get("fault.duplicated") > 0 && c.get("fault.corrupted") > 0
                    && c.get("fault.reordered") > 0, c.toString());
                assertTrue(c.get("link.rx.bad_crc") > 0, "the peer's corrupted frames were dropped: " + c);
                assertEquals(0, c.get("wr.flushed"), c.toString());
                assertEquals(0, c.get(Endpoint.ENGINE_ERRORS), c.toString()); // the server checked its own
            }
        }
    }
}
