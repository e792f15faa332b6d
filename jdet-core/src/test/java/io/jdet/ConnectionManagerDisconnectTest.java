package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;


import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link ConnectionManager#disconnect}: it waits for the queue pair's outstanding work, which completes on the data
 * path, not in the connection manager. That completion signals no one; the wait must notice it anyway, rather
 * than sleeping out its whole timeout and failing with ETIMEDOUT.
 */
@Timeout(60)
class ConnectionManagerDisconnectTest {
    private static final int SERVICE = 0xD15C;

    @Test
    void aDisconnectRightAfterAPostWaitsForTheWorkNotForItsTimeout() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            pair.connectThroughCm(SERVICE);
            pair.qpB.recv(1, sge(pair.mrB, 0, 64), 1);
            pair.qpA.send(2, sge(pair.mrA, 0, 64), 1, 0, 0);
            // 30 s: a wait that missed the send's completion would time out the whole of it and then fail
            pair.nicA.connectionManager().disconnect(pair.qpA, 30_000);
            assertEquals(QpState.IDLE, pair.qpA.query().state());
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            Loopback.awaitState(pair.qpB, QpState.IDLE);
        }
    }
}
