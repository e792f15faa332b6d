package io.jdet.systest;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.QpState;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.WrFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer process killed mid-stream: the survivor's oldest outstanding work request completes with RETRY_EXCEEDED
 * after the (short) acknowledgement timeout, the rest are flushed, the queue pair is in ERROR with an ACK_TIMEOUT
 * event, nothing hangs, and every resource closes.
 */
@Timeout(120)
class PeerDeathTest {
    private static final long ACK_TIMEOUT_MS = 400;

    @Test
    void shouldFailOutstandingWorkWhenThePeerDies() throws Exception {
        try (PeerProcess peer = new PeerProcess(List.of(), "sink", "udp:127.0.0.1", String.valueOf(PeerMain.SERVICE));
             Det det = Det.open(new Configuration().ackTimeoutMs(ACK_TIMEOUT_MS))) {
            final EventQueue events = det.createEvent(null);
            final Endpoint e = new Endpoint(det, "udp:127.0.0.1", VerbsWorkload.BUFFER_BYTES, 64, events);
            final String address = peer.awaitLine("ADDRESS", 60_000);
            final long[] remote = Handshake.parse(e.nic.connectionManager().connect(address, PeerMain.SERVICE, e.qp,
                null, 30_000));
            peer.awaitLine("CONNECTED", 30_000);
            final int size = 60_000;
            long posted = 0;
            long completed = 0;
            // Stream writes and reads (a read waits for a response, a write for an ack) and kill the peer midway.
            while (completed < 300) {
                while (posted - completed < 32) {
                    final long at = VerbsWorkload.WRITE_AREA + posted % 16 * size;
                    if (posted % 4 == 3) {
                        e.qp.read(posted, e.at(at, size), 1, remote[0] + at, (int) remote[1], 0);
                    } else {
                        e.qp.write(posted, e.at(at, size), 1, remote[0] + at, (int) remote[1], 0, 0);
                    }
                    posted++;
                }
                final WorkCompletion wc = e.sent(1, 30_000).get(0);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                completed++;
            }
            peer.kill();
            final long killedAt = System.nanoTime();
            for (int i = 0; i < 32; i++) {
                if (e.qp.query().state() != QpState.CONNECTED) {
                    break;
                }
                e.qp.write(posted++, e.at(VerbsWorkload.WRITE_AREA, size), 1, remote[0] + VerbsWorkload.WRITE_AREA,
                    (int) remote[1], i % 2 == 0 ? WrFlags.SUPPRESSED : 0, 0);
                if (posted - completed >= 64) {
                    break;
                }
            }
            // Every outstanding request completes: successes first, then one RETRY_EXCEEDED, then FLUSHED (a flush
            // reports suppressed requests too).
            final List<WorkCompletion> rest = e.sent((int) (posted - completed), 20 * ACK_TIMEOUT_MS + 10_000);
            final double failedAfterMs = (System.nanoTime() - killedAt) / 1e6;
            int exceeded = 0;
            boolean sawFailure = false;
            for (final WorkCompletion wc : rest) {
                if (wc.status() == WcStatus.SUCCESS) {
                    assertTrue(!sawFailure, "a success after the failure: " + rest);
                    continue;
                }
                if (!sawFailure) {
                    assertEquals(WcStatus.RETRY_EXCEEDED, wc.status(), rest.toString());
                    assertTrue(wc.type() == WcType.RDMA_WRITE || wc.type() == WcType.RDMA_READ);
                    exceeded++;
                    sawFailure = true;
                } else {
                    assertEquals(WcStatus.FLUSHED, wc.status(), rest.toString());
                }
            }
            assertEquals(1, exceeded, rest.toString());
            assertEquals(QpState.ERROR, e.qp.query().state());
            final EventRecord record = new EventRecord();
            events.waitOn(10_000_000, record);
            assertEquals(EventCode.ACK_TIMEOUT, record.code(), record.toString());
            e.assertEngineHealthy(); // the peer's death was answered by the protocol, not caught as a failure
            System.out.printf("peer killed: RETRY_EXCEEDED and flush after %.0f ms (ack timeout %d ms)%n",
                failedAfterMs, ACK_TIMEOUT_MS);
            e.close();
            events.close();
        }
    }
}
