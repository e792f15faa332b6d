package io.jdet.systest;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.QpModify;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The whole verbs workload between two UDP NICs of one JVM, each end in its own thread and device, with loss,
 * duplication, reordering and corruption injected on both. The two-JVM variant is {@link TwoProcessFaultTest}.
 */
@Timeout(120)
class FaultyUdpInProcessTest {

    static Configuration faulty(final long seed) {
        return PeerMain.faults(seed);
    }

    @Test
    void shouldDeliverEveryVerbExactlyOnceUnderFaults() throws Exception {
        try (Det serverDet = Det.open(faulty(1)); Det clientDet = Det.open(faulty(2));
             Endpoint server = new Endpoint(serverDet, "udp:127.0.0.1", VerbsWorkload.BUFFER_BYTES, 64);
             Endpoint client = new Endpoint(clientDet, "udp:127.0.0.1", VerbsWorkload.BUFFER_BYTES, 64)) {
            server.qp.modify(new QpModify().connect(client.nic.address(), client.qp.number(), client.qp.query().localPsn()));
            client.qp.modify(new QpModify().connect(server.nic.address(), server.qp.number(), server.qp.query().localPsn()));
            final CountDownLatch ready = new CountDownLatch(1);
            final CompletableFuture<Void> serverSide = CompletableFuture.runAsync(
                () -> VerbsWorkload.server(server, ready::countDown));
            assertTrue(ready.await(30, TimeUnit.SECONDS));
            VerbsWorkload.client(client, server.region.address(), server.region.rKey());
            serverSide.get(60, TimeUnit.SECONDS);
            final Map<String, Long> counters = client.nic.counters();
            assertTrue(counters.get("fault.dropped") > 0 && counters.get("fault.duplicated") > 0
                && counters.get("fault.corrupted") > 0 && counters.get("fault.reordered") > 0, counters.toString());
            assertTrue(server.nic.counters().get("link.rx.bad_crc") > 0, server.nic.counters().toString());
            client.assertEngineHealthy();
            server.assertEngineHealthy();
            System.out.println("client " + counters);
            System.out.println("server " + server.nic.counters());
        }
    }
}
