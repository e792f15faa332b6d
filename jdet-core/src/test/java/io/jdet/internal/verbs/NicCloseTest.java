package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.Det;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.MemoryWindow;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QueuePair;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What closing gives back: a NIC leaves its event queue (which may then close) and its device, and its UDP port;
 * closing the device closes every object on its NICs, windows and regions included, and their quota.
 */
@Timeout(60)
class NicCloseTest {

    @Test
    void aClosedNicLeavesItsEventQueueAndItsDevice() {
        try (Det det = Det.open()) {
            final EventQueue events = det.createEvent(null);
            final NicImpl nic = (NicImpl) det.openNic(Tests.uniqueFabric("close"), events);
            final CompletionQueue cq = nic.createCq(4, events);
            assertEquals(2, ((EventQueueImpl) events).users, "the NIC and its completion queue");
            cq.close();
            nic.close();
            assertEquals(0, ((EventQueueImpl) events).users);
            assertFalse(((DeviceImpl) det).nics.contains(nic));
            events.close(); // no EBUSY: nothing reports there any more
        }
    }

    @Test
    void aClosedUdpNicGivesItsPortBack() {
        try (Det det = Det.open()) {
            final Nic first = det.openNic("udp:127.0.0.1", null);
            final String address = first.address();
            first.close();
            det.openNic(address, null).close(); // the same port again
        }
    }

    @Test
    void closingTheDeviceClosesEveryObjectAndGivesTheQuotaBack() {
        try (Arena arena = Arena.ofShared()) {
            final Det det = Det.open();
            final Nic nic = det.openNic(Tests.uniqueFabric("close"), null);
            final ProtectionDomain pd = nic.allocPd();
            final CompletionQueue cq = nic.createCq(4, null);
            final QueuePair qp = pd.createQp(QpCreate.of(cq, 2, 2));
            final MemoryRegion mr = pd.regMr(arena.allocate(4096), Access.LOCAL_READ | Access.LOCAL_WRITE
                | Access.MW_BIND);
            final MemoryWindow mw = pd.createMw(1);
            final DeviceImpl device = (DeviceImpl) det;
            assertEquals(4096, device.registeredBytes.get());
            det.close();
            assertEquals(0, device.registeredBytes.get(), "the regions' quota");
            assertThrows(IllegalStateException.class, mr::rKey, "the region is deregistered");
            assertThrows(IllegalStateException.class, mw::query, "the window is destroyed");
            assertThrows(IllegalStateException.class, () -> pd.regMr(arena.allocate(64), Access.LOCAL_WRITE));
            assertThrows(IllegalStateException.class, qp::query);
            assertThrows(IllegalStateException.class, () -> cq.poll(new io.jdet.WorkCompletion[1]));
        }
    }
    @Test
    void anInterruptedCloserStillWaitsForTheProgressThreadAndKeepsItsInterrupt(
        @org.junit.jupiter.api.io.TempDir final java.nio.file.Path dir) throws Exception {
        // The progress thread sleeps on the shared-memory ring's futex; the link is unmapped right after the join.
        // An interrupted closer must not cut the join short (the progress thread would wake on an unmapped ring and
        // report the NIC fatal after its close), and must find its interrupt still set afterwards.
        for (int i = 0; i < 20; i++) {
            final Det det = Det.open(new io.jdet.Configuration().shmDirectory(dir.toString()));
            final EventQueue events = det.createEvent(null);
            final NicImpl nic = (NicImpl) det.openNic("shm:close" + i, events);
            Thread.sleep(2); // the progress thread goes to sleep on the ring
            Thread.currentThread().interrupt();
            nic.close();
            assertTrue(Thread.interrupted(), "the closer's interrupt is kept");
            assertFalse(nic.progressThread().isAlive(), "joined before the link closed");
            assertEquals(0, events.pending(), "no event after the close");
            det.close();
        }
    }
}
