package io.jdet.internal.verbs;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.internal.link.FrameHandler;
import io.jdet.internal.link.Link;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Error paths of opening and closing NICs and event queues leak nothing and leave nothing half-done. */
@Timeout(30)
class ErrorPathLeakTest {

    /** A link that fails where it is told to, and counts its closes. */
    private static final class FailingLink implements Link {
        private final boolean failMtu;
        private final boolean failAddress;
        private final boolean failClose;
        int closes;

        FailingLink(final boolean failMtu, final boolean failAddress, final boolean failClose) {
            this.failMtu = failMtu;
            this.failAddress = failAddress;
            this.failClose = failClose;
        }

        @Override
        public String address() {
            if (failAddress) {
                throw new IllegalStateException("no address");
            }
            return "test:1";
        }

        @Override
        public int mtu() {
            if (failMtu) {
                throw new IllegalStateException("no mtu");
            }
            return 1500;
        }

        @Override
        public long resolve(final String address) {
            return -1;
        }

        @Override
        public String describe(final long peer) {
            return "test:" + peer;
        }

        @Override
        public boolean send(final long peer, final MemorySegment header, final int headerLength,
                            final FrameGather payload) {
            return true;
        }

        @Override
        public int receive(final FrameHandler handler, final int max) {
            return 0;
        }

        @Override
        public void await(final int waiter, final long timeoutNs) {
            java.util.concurrent.locks.LockSupport.parkNanos(timeoutNs);
        }

        @Override
        public void wakeup(final int waiter) {
        }

        @Override
        public void addCounters(final Map<String, Long> counters) {
        }

        @Override
        public void close() {
            closes++;
            if (failClose) {
                throw new IllegalStateException("close failed");
            }
        }
    }

    @Test
    void shouldCloseTheLinkWhenTheNicCannotBeMade() {
        try (Det det = Det.open()) {
            final DeviceImpl device = (DeviceImpl) det;
            final EventQueueImpl events = (EventQueueImpl) det.createEvent(null);
            for (final FailingLink link : new FailingLink[] {new FailingLink(true, false, false),
                new FailingLink(false, true, false)}) {
                synchronized (device) {
                    assertThrows(IllegalStateException.class, () -> device.attach("test", link, events));
                }
                assertEquals(1, link.closes, "the link opened for the NIC is closed");
                assertTrue(device.nics.isEmpty());
            }
            events.close(); // no NIC was left reporting to it
        }
    }

    @Test
    void shouldReleaseTheQueueAndLeaveTheDeviceWhenClosingTheLinkFails() {
        try (Det det = Det.open()) {
            final DeviceImpl device = (DeviceImpl) det;
            final EventQueueImpl events = (EventQueueImpl) det.createEvent(null);
            final FailingLink link = new FailingLink(false, false, true);
            final NicImpl nic;
            synchronized (device) {
                nic = device.attach("test", link, events);
            }
            final IllegalStateException e = assertThrows(IllegalStateException.class, nic::close);
            assertEquals("close failed", e.getMessage());
            assertTrue(device.nics.isEmpty(), "the NIC left its device");
            events.close(); // EBUSY if the NIC still counted as a user
            Tests.await("the progress thread ended", () -> !nic.progressThread().isAlive());
        }
    }

    @Test
    void shouldRefuseANicForAQueueWhoseCloseHasBegun() throws Exception {
        try (Det det = Det.open(new Configuration())) {
            final EventQueueImpl events = (EventQueueImpl) det.createEvent(null);
            final CompletableFuture<Void> closing;
            events.lock.lock(); // the close decides under the device lock, then waits here to wake its waiters
            try {
                closing = CompletableFuture.runAsync(events::close, r -> Thread.ofPlatform().start(r));
                Tests.await("close is past its decision", () -> events.lock.getQueueLength() == 1);
                assertThrows(IllegalStateException.class, () -> det.openNic(Tests.uniqueFabric("closing"), events),
                    "a closed queue, as every closed object, raises IllegalStateException");
                assertThrows(IllegalStateException.class, () -> events.generate("late"));
            } finally {
                events.lock.unlock();
            }
            closing.get();
        }
    }
}
