package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link Configuration#udpSpinUs}: a thread blocked in {@link EventQueue#waitOn} on a UDP NIC busy-polls the socket
 * for that long before it sleeps in {@code ppoll}. Whether the frame comes during the spin or after it, or never
 * (the wait times out), the wait ends as a blocking one does.
 */
@Timeout(60)
class UdpSpinTest {
    @Test
    void aSpinOutsideZeroToOneSecondIsRefusedWithEinval() {
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().udpSpinUs(-1)));
        assertErrno(Errno.EINVAL, () -> Det.open(new Configuration().udpSpinUs(1_000_001)));
        assertEquals(Configuration.UDP_SPIN_US_DEFAULT, new Configuration().udpSpinUs());
    }

    @ParameterizedTest(name = "spin {0} us")
    @ValueSource(ints = {0, 20, 500_000})
    void aWaiterGetsItsEventWhetherTheFrameComesDuringTheSpinOrAfterIt(final int spinUs) throws Exception {
        final Configuration c = new Configuration().udpSpinUs(spinUs);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c).nic("udp:127.0.0.1"))) {
            for (int round = 0; round < 3; round++) {
                pair.qpB.recv(round, sge(pair.mrB, 0, 8), 1);
                pair.cqB.arm(CqArm.NEXT_SIGNALED, 0);
                final int id = round;
                // At once, while B's thread is still spinning; or after 50 ms, once a 20 us spin has given way to
                // ppoll (and while a 500 ms spin still polls).
                final CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                    if (id > 0) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
                    }
                    pair.qpA.send(100 + id, sge(pair.mrA, 0, 8), 1, 0, 0);
                });
                final EventRecord record = new EventRecord();
                pair.eventsB.waitOn(Tests.TIMEOUT.toNanos() / 1000, record);
                assertEquals(EventCode.CQ_COMPLETION, record.code(), record.toString());
                assertEquals(round, Tests.expectSuccess(pair.cqB, 1).get(0).id());
                sent.get(10, TimeUnit.SECONDS);
                Tests.expectSuccess(pair.cqA, 1);
            }
        }
    }

    @Test
    void aWaitWhoseTimeRunsOutDuringTheSpinEndsWithEtime() {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(new Configuration().udpSpinUs(
            500_000)).nic("udp:127.0.0.1"))) {
            pair.cqB.arm(CqArm.NEXT_SIGNALED, 0);
            assertErrno(Errno.ETIME, () -> pair.eventsB.waitOn(1000, new EventRecord()));
        }
    }
}
