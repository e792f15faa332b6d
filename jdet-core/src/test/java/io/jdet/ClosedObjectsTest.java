package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Closed objects fail with one kind of error, {@link IllegalStateException}, naming what is closed; and what the
 * API prints names API concepts, not engine classes.
 */
@Timeout(30)
class ClosedObjectsTest {

    /**
     * package-info: "Using a closed object (... a destroyed ... completion queue ...) raises
     * IllegalStateException". CompletionQueue.query() of a destroyed queue returned its stale attributes.
     */
    @Test
    void aDestroyedCompletionQueueRefusesQuery() {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("closed"), null);
            final CompletionQueue cq = nic.createCq(1, null);
            cq.close();
            assertEquals("completion queue destroyed",
                assertThrows(IllegalStateException.class, cq::query).getMessage());
        }
    }

    /** The same rule for a closed NIC's query and a destroyed event queue's count, which answered stale values. */
    @Test
    void aClosedNicRefusesQueryAndADestroyedEventQueueRefusesPending() {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("closed"), null);
            nic.close();
            assertEquals("NIC closed", assertThrows(IllegalStateException.class, nic::query).getMessage());
            final EventQueue events = det.createEvent(null);
            events.close();
            assertEquals("event queue destroyed",
                assertThrows(IllegalStateException.class, events::pending).getMessage());
        }
    }

    @Test
    void shouldRefuseKeysOfADeregisteredRegionInsteadOfReturningZero() {
        try (Det det = Det.open(); Arena arena = Arena.ofShared()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("closed"), null);
            final ProtectionDomain pd = nic.allocPd();
            final MemoryRegion mr = pd.regMr(arena.allocate(64), Loopback.ALL_RIGHTS);
            final DataSegment segment = new DataSegment().set(mr, 0, 8);
            assertEquals(mr.lKey(), segment.lKey());
            mr.close();
            assertEquals("region deregistered", assertThrows(IllegalStateException.class, mr::rKey).getMessage());
            assertEquals("region deregistered", assertThrows(IllegalStateException.class, mr::lKey).getMessage());
            assertThrows(IllegalStateException.class, () -> segment.set(mr, 0, 8), "a data segment refuses it");
            assertThrows(IllegalStateException.class, () -> RemoteRegion.of(mr));
            assertThrows(IllegalStateException.class, mr::query);
            assertEquals("region deregistered", assertThrows(IllegalStateException.class,
                () -> mr.modify(null, Access.LOCAL_READ)).getMessage());
            assertEquals("region deregistered", assertThrows(IllegalStateException.class,
                () -> mr.regShared(pd, Access.LOCAL_READ)).getMessage());
            final MemoryRegion live = pd.regMr(arena.allocate(64), Loopback.ALL_RIGHTS);
            final ProtectionDomain gone = nic.allocPd();
            gone.close();
            assertThrows(IllegalStateException.class, () -> live.regShared(gone, Access.LOCAL_READ),
                "a deallocated domain takes no new region");
        }
    }

    @Test
    void shouldFailWithIllegalStateWhenAClosedObjectIsPassedToAVerb() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow window = pair.pdA.createMw(1);
            final MemoryRegion spare = pair.pdA.regMr(pair.arena.allocate(64),
                Loopback.ALL_RIGHTS);
            final long address = spare.address();
            window.close();
            assertEquals("window destroyed", assertThrows(IllegalStateException.class,
                () -> pair.qpA.bind(1, window, spare, address, 8, Access.REMOTE_READ, 0)).getMessage());
            final MemoryWindow fresh = pair.pdA.createMw(1);
            spare.close();
            assertEquals("region deregistered", assertThrows(IllegalStateException.class,
                () -> pair.qpA.bind(1, fresh, spare, address, 8, Access.REMOTE_READ, 0)).getMessage());
            final ProtectionDomain gone = pair.nicA.allocPd();
            gone.close();
            assertThrows(IllegalStateException.class, () -> pair.mrA.modify(gone, -1));
            fresh.close();
        }
    }

    @Test
    void shouldPrintQueuePairAttributesWithoutEngineClassNames() {
        try (Loopback pair = Loopback.open()) {
            final String text = pair.qpA.query().toString();
            assertTrue(text.startsWith("QpAttributes[CONNECTED, " + pair.nicA.address() + "#" + pair.qpA.number()
                + " -> " + pair.nicB.address() + "#" + pair.qpB.number()), text);
            assertFalse(text.contains("internal") || text.contains("Impl"), text);
            final String region = pair.mrA.query().toString();
            assertFalse(region.contains("internal") || region.contains("Impl"), region);
        }
    }

    @Test
    void shouldRoundTripARemoteRegionThroughPrivateData() {
        final RemoteRegion region = new RemoteRegion(0x7f00_1234_5678L, 1 << 20, 0xABCD_EF01);
        final byte[] bytes = region.encode();
        assertEquals(RemoteRegion.ENCODED_LENGTH, bytes.length);
        assertEquals(region, RemoteRegion.decode(bytes));
        final byte[] longer = java.util.Arrays.copyOf(bytes, bytes.length + 5);
        assertEquals(region, RemoteRegion.decode(longer), "trailing application bytes are ignored");
        assertThrows(IllegalArgumentException.class, () -> RemoteRegion.decode(new byte[19]));
        assertThrows(IllegalArgumentException.class, () -> RemoteRegion.decode(null));
        assertThrows(IllegalArgumentException.class, () -> new RemoteRegion(0, -1, 0));
    }
}
