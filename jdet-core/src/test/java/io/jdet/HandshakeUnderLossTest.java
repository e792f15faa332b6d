package io.jdet;

import io.jdet.testing.Loopback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The connection manager's handshake over a link that loses 40 % of its frames: {@code connect} and {@code accept}
 * must agree (both succeed, or both fail). The requester resends READY only a few times; the acceptor resends its
 * ACCEPT until READY comes, which the requester answers with READY again. Before the acceptor resent, about one
 * seed in 40 (163 and 337 among them, in a stress run) lost all four READYs and the accept failed while the connect
 * had succeeded. Which frames a seed drops depends on timing too, so this smoke run of a few seeds may miss that
 * case; {@code CmImplTest.shouldConnectBeforeAcceptingAndReturnWhenRequesterConfirms} checks the resend itself.
 */
@Timeout(120)
class HandshakeUnderLossTest {
    private static final int SERVICE = 0x77;

    @Test
    void connectAndAcceptAgreeAtFortyPercentLoss() throws Exception {
        final StringBuilder split = new StringBuilder();
        for (final long seed : new long[] {163, 337, 0, 1, 2, 3}) {
            final Configuration c = new Configuration().faults(new FaultPlan(0.4, 0, 0, 0, seed)).minRtoUs(200)
                .maxRtoUs(4000).jmx(false);
            try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c).connect(false));
                 ConnectionListener listener = pair.nicB.connectionManager().listen(SERVICE)) {
                final CompletableFuture<Boolean> accepted = CompletableFuture.supplyAsync(() -> {
                    try {
                        listener.take(3_000).accept(pair.qpB, null, 3_000);
                        return true;
                    } catch (final RuntimeException e) {
                        return false;
                    }
                });
                boolean connected = true;
                try {
                    pair.nicA.connectionManager().connect(pair.nicB.address(), SERVICE, pair.qpA, null, 3_000);
                } catch (final RuntimeException e) {
                    connected = false;
                }
                if (accepted.get(10, TimeUnit.SECONDS) != connected) {
                    split.append(seed).append(connected ? " (connected, accept failed) " : " (accepted only) ");
                }
            }
        }
        assertEquals("", split.toString(), "seeds where connect and accept disagree");
    }
}
