package io.jdet.internal.verbs;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.ResourceType;
import io.jdet.internal.link.FabricLink;
import io.jdet.internal.link.ForwardingLink;
import io.jdet.internal.link.Link;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A link that fails under the application thread blocked in {@code EventQueue.waitOn} (the NIC's link waiter)
 * makes the NIC fatal, as a failure under the progress thread does, with one NIC_FATAL event.
 */
@Timeout(60)
class LinkWaiterFailureTest {

    /** A fabric link whose awaits throw once it is broken: the link failing outside the engine. */
    private static final class BreakingLink extends ForwardingLink {
        private volatile boolean broken;

        BreakingLink(final String fabric) {
            super(new FabricLink(fabric, 65_000, 256));
        }

        void breakIt() {
            broken = true;
            inner.wakeup();
        }

        @Override
        public void await(final int waiter, final long timeoutNs) {
            if (broken) {
                throw new IllegalStateException("injected: the link's wait failed");
            }
            inner.await(waiter, timeoutNs);
        }
    }

    /**
     * Nic: "If the NIC's engine dies (its progress thread meets an Error, or its link fails outside the protocol),
     * the NIC becomes fatal ...: it raises one NIC_FATAL event ... Never silent". When an application thread is
     * blocked in EventQueue.waitOn, it is the one sleeping on the link (the link waiter), so the link's failure
     * reached it as a raw IllegalStateException, which waitOn documents as "the queue is closed", instead of the
     * NIC_FATAL event it was waiting for.
     */
    @Test
    void aLinkFailingUnderABlockedWaiterMakesTheNicFatalInsteadOfEscapingTheWait() throws Exception {
        try (Det det = Det.open(new Configuration())) {
            final DeviceImpl device = (DeviceImpl) det;
            final EventQueue events = det.createEvent(null);
            final BreakingLink link = new BreakingLink(Tests.uniqueFabric("audit").substring("loop:".length()));
            final NicImpl nic;
            synchronized (device) {
                nic = device.attach("breaking", link, (EventQueueImpl) events);
            }
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final EventRecord record = new EventRecord();
            final Thread waiter = Thread.ofPlatform().name("waiter").start(() -> {
                try {
                    events.waitOn(TimeUnit.SECONDS.toMicros(30), record);
                } catch (final Throwable t) {
                    failure.set(t);
                }
            });
            Tests.await("the waiter sleeps on the link", () -> nic.linkWaiter() == waiter);
            link.breakIt();
            waiter.join(Tests.TIMEOUT.toMillis());
            assertFalse(waiter.isAlive(), "the waiter did not return");
            assertNull(failure.get(), "the link's failure escaped waitOn: " + failure.get());
            assertEquals(EventCode.NIC_FATAL, record.code());
            assertEquals(ResourceType.NIC, record.type());
            assertSame(nic, record.handle());
            Tests.await("the progress thread ended", () -> !nic.progressThread().isAlive());
            assertEquals(0, events.pending(), "one NIC_FATAL event, not one per thread that met the failure");
            assertTrue(nic.counters().get("engine.errors") >= 1);
        }
    }
}
