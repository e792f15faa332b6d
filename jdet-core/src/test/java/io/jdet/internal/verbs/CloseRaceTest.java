package io.jdet.internal.verbs;

import io.jdet.Det;
import io.jdet.EventQueue;
import io.jdet.Nic;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code Nic.close} and {@code Det.close} racing shut the NIC down once: neither throws (the reorder pool's arena,
 * closed twice, threw "Already closed" from one of them), and both return with the NIC closed.
 */
@Timeout(120)
class CloseRaceTest {

    @Test
    void closingANicWhileItsDeviceClosesShutsItDownOnceAndNeitherCloseThrows() throws Exception {
        for (int round = 0; round < 200; round++) {
            final Det det = Det.open();
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic(Tests.uniqueFabric("race"), events);
            final CyclicBarrier start = new CyclicBarrier(2);
            final CompletableFuture<Void> nicClose = CompletableFuture.runAsync(() -> {
                await(start);
                nic.close();
            });
            await(start);
            det.close();
            nicClose.get(30, TimeUnit.SECONDS); // throws if nic.close() threw
            assertThrows(IllegalStateException.class, nic::query, "round " + round + ": the NIC is still open");
            assertThrows(IllegalStateException.class, events::pending, "round " + round + ": its queue is open");
        }
    }

    private static void await(final CyclicBarrier barrier) {
        try {
            barrier.await(10, TimeUnit.SECONDS);
        } catch (final Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
