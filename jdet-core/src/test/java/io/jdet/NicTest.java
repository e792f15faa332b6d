package io.jdet;

import io.jdet.testing.Tests;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.Map;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NICs and protection domains ({@code det_open_nic}, {@code det_query_nic}, {@code det_alloc_pd}). */
@Timeout(30)
class NicTest {
    private Det det;
    private Arena arena;

    @BeforeEach
    void open() {
        det = Det.open();
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        det.close();
        arena.close();
    }

    @Test
    void shouldFailWithEnodevWhenNameIsUnknown() {
        assertErrno(Errno.ENODEV, () -> det.openNic("no-such-interface0", null));
        assertErrno(Errno.ENODEV, () -> det.openNic("", null));
        assertErrno(Errno.ENODEV, () -> det.openNic(null, null));
        assertErrno(Errno.ENODEV, () -> det.openNic("loop:", null));
        assertErrno(Errno.ENODEV, () -> det.openNic("loop:a/b", null));
    }

    @Test
    void shouldReportLimitsWhenQueried() {
        final String name = Tests.uniqueFabric("nic");
        final Nic nic = det.openNic(name, null);
        final NicAttributes a = nic.query();
        assertEquals(name, a.name());
        assertEquals(nic.address(), a.address());
        assertTrue(a.address().startsWith(name + "/"), a.address());
        assertEquals(0x8086, a.vendorId());
        assertEquals(Configuration.LOOP_MTU_DEFAULT, a.mtu());
        assertEquals(102, a.minCqSize());
        assertEquals(131072, a.maxCqSize());
        assertEquals(65536, a.maxQps());
        assertEquals(65536, a.maxPds());
        assertEquals(262144, a.maxMrs());
        assertEquals(524288, a.maxMws());
        assertEquals(65536, a.maxSqSize());
        assertEquals(65536, a.maxRqSize());
        assertEquals(256, a.maxSges());
        assertEquals(32768, a.maxOr());
        assertEquals(32768, a.maxIr());
        assertEquals(4096, a.pageSize());
        assertTrue(a.maxMrSize() >= Integer.MAX_VALUE);
    }

    @Test
    void shouldUseConfiguredMtuWhenQueried() {
        try (Det small = Det.open(new Configuration().loopMtu(1500))) {
            assertEquals(1500, small.openNic(Tests.uniqueFabric("nic"), null).query().mtu());
        }
    }

    @Test
    void shouldGiveDistinctAddressesWhenTwoNicsShareAFabric() {
        final String name = Tests.uniqueFabric("nic");
        final Nic a = det.openNic(name, null);
        final Nic b = det.openNic(name, null);
        assertNotEquals(a.address(), b.address());
    }

    @Test
    void shouldRefuseCloseWithEbusyWhenResourcesRemain() {
        final EventQueue events = det.createEvent(null);
        final Nic nic = det.openNic(Tests.uniqueFabric("nic"), events);
        final ProtectionDomain pd = nic.allocPd();
        assertErrno(Errno.EBUSY, nic::close);
        pd.close();
        final CompletionQueue cq = nic.createCq(0, null);
        assertErrno(Errno.EBUSY, nic::close);
        cq.close();
        nic.close();
        nic.close(); // twice does nothing
        events.close(); // the NIC no longer reports to it
    }

    @Test
    void shouldRefuseDeallocWithEbusyWhenDomainIsInUse() {
        final Nic nic = det.openNic(Tests.uniqueFabric("nic"), null);
        final ProtectionDomain pd = nic.allocPd();
        assertSame(nic, pd.nic());
        final MemoryRegion mr = pd.regMr(arena.allocate(64), Access.LOCAL_WRITE);
        assertErrno(Errno.EBUSY, pd::close);
        mr.close();
        final MemoryWindow mw = pd.createMw(1);
        assertErrno(Errno.EBUSY, pd::close);
        mw.close();
        final CompletionQueue cq = nic.createCq(1, null);
        final QueuePair qp = pd.createQp(QpCreate.of(cq, 1, 1));
        assertErrno(Errno.EBUSY, pd::close);
        qp.close();
        pd.close();
        pd.close(); // twice does nothing
        cq.close();
        nic.close();
    }

    @Test
    void shouldFailWithEagainWhenNicHasMaximumRegionsOrWindows() {
        final Nic nic = det.openNic(Tests.uniqueFabric("nic"), null);
        final ProtectionDomain pd = nic.allocPd();
        final java.lang.foreign.MemorySegment memory = arena.allocate(8);
        final int maxMrs = nic.query().maxMrs();
        MemoryRegion last = null;
        for (int i = 0; i < maxMrs; i++) {
            last = pd.regMr(memory, Access.LOCAL_READ);
        }
        assertErrno(Errno.EAGAIN, () -> pd.regMr(memory, Access.LOCAL_READ));
        last.close(); // one given back: exactly one more fits
        pd.regMr(memory, Access.LOCAL_READ);
        assertErrno(Errno.EAGAIN, () -> pd.regMr(memory, Access.LOCAL_READ));
        final int maxMws = nic.query().maxMws();
        for (int i = 0; i < maxMws; i++) {
            pd.createMw(1 + (i & 1));
        }
        assertErrno(Errno.EAGAIN, () -> pd.createMw(1));
        assertEquals((long) maxMrs * 8, det.query().registeredBytes());
    }

    @Test
    void shouldFailWithEagainWhenNicHasMaximumDomains() {
        final Nic nic = det.openNic(Tests.uniqueFabric("nic"), null);
        final int max = nic.query().maxPds();
        for (int i = 0; i < max; i++) {
            nic.allocPd();
        }
        assertErrno(Errno.EAGAIN, nic::allocPd);
    }

    @Test
    void shouldFailWithEinvalWhenWindowTypeIsUnknown() {
        final ProtectionDomain pd = det.openNic(Tests.uniqueFabric("nic"), null).allocPd();
        assertErrno(Errno.EINVAL, () -> pd.createMw(0));
        assertErrno(Errno.EINVAL, () -> pd.createMw(3));
        assertEquals(2, pd.createMw(2).type());
    }

    @Test
    void shouldFailWithEnodevWhenConnectingAcrossFabrics() {
        final Nic a = det.openNic(Tests.uniqueFabric("nic"), null);
        final Nic b = det.openNic(Tests.uniqueFabric("nic"), null);
        final CompletionQueue cq = a.createCq(1, null);
        final QueuePair qp = a.allocPd().createQp(QpCreate.of(cq, 1, 1));
        assertErrno(Errno.ENODEV, () -> qp.modify(new QpModify().connect(b.address(), 1)));
        assertErrno(Errno.ENODEV, () -> qp.modify(new QpModify().connect(a.address() + "99", 1)));
        assertEquals(QpState.IDLE, qp.query().state());
    }

    @Test
    void shouldCountFramesWhenDataFlows() {
        try (io.jdet.testing.Loopback pair = io.jdet.testing.Loopback.open()) {
            pair.qpB.recv(1, io.jdet.testing.Loopback.sge(pair.mrB, 0, 16), 1);
            pair.qpA.send(2, io.jdet.testing.Loopback.sge(pair.mrA, 0, 16), 1, 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            Tests.expectSuccess(pair.cqB, 1);
            final Map<String, Long> a = pair.nicA.counters();
            final Map<String, Long> b = pair.nicB.counters();
            assertTrue(a.get("frames.sent") >= 1, a.toString());
            assertTrue(b.get("frames.received") >= 1, b.toString());
            assertEquals(1, b.get("messages.received"), b.toString());
            assertEquals(1, a.get("wr.posted"), a.toString());
            assertEquals(0, a.get("link.tx.errors"), "the link's own counters are reported with the engine's: " + a);
            assertEquals(0, b.get("link.rx.bad_crc"), b.toString());
        }
    }

    @Test
    void shouldTakeCompletionQueuesOfEverySizeInItsRangeAndRefuseTheRest() {
        final Nic nic = det.openNic(Tests.uniqueFabric("nic"), null);
        final int max = nic.query().maxCqSize();
        nic.createCq(0, null).close();
        nic.createCq(max, null).close();
        assertErrno(Errno.EINVAL, () -> nic.createCq(-1, null));
        assertErrno(Errno.EINVAL, () -> nic.createCq(max + 1, null));
    }

    @Test
    void shouldRefuseNewObjectsWithIllegalStateOnceClosed() {
        final Nic nic = det.openNic(Tests.uniqueFabric("nic"), null);
        nic.close();
        assertThrows(IllegalStateException.class, nic::allocPd);
        assertThrows(IllegalStateException.class, () -> nic.createCq(1, null));
    }
}
