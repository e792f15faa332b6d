package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Memory regions ({@code det_reg_mr}, {@code det_modify_mr}, {@code det_reg_shared}, {@code det_dereg_mr}). */
@Timeout(30)
class MemoryRegionTest {
    private Det det;
    private Arena arena;
    private Nic nic;
    private ProtectionDomain pd;

    @BeforeEach
    void open() {
        det = Det.open();
        arena = Arena.ofShared();
        nic = det.openNic(Tests.uniqueFabric("mr"), null);
        pd = nic.allocPd();
    }

    @AfterEach
    void close() {
        det.close();
        arena.close();
    }

    @Test
    void shouldFailWithEinvalWhenAccessCombinationIsIllegal() {
        final MemorySegment memory = arena.allocate(64);
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, Access.REMOTE_READ));
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, Access.REMOTE_READ | Access.LOCAL_WRITE));
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, Access.REMOTE_WRITE | Access.LOCAL_READ));
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, Access.REMOTE_ATOMIC | Access.LOCAL_READ));
        assertEquals(0, det.query().registeredBytes(), "a refused registration reserves nothing");
    }

    @Test
    void shouldFailWithEinvalWhenAccessHasUnknownBits() {
        final MemorySegment memory = arena.allocate(64);
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, Access.LOCAL_READ | 0x40));
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, Access.LOCAL_READ | 0x100));
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, Access.LOCAL_READ | Access.ZERO_BASED));
        assertErrno(Errno.EINVAL, () -> pd.regMr(memory, -1));
    }

    @Test
    void shouldFailWithEinvalWhenLengthIsZero() {
        assertErrno(Errno.EINVAL, () -> pd.regMr(arena.allocate(64).asSlice(0, 0), Access.LOCAL_READ));
    }

    @Test
    void shouldFailWithErangeWhenAddressPlusLengthWraps() {
        final MemorySegment wrapping = MemorySegment.ofAddress(-64).reinterpret(128);
        assertErrno(Errno.ERANGE, () -> pd.regMr(wrapping, Access.LOCAL_READ));
    }

    @Test
    void shouldFailWithEfaultWhenSegmentIsOnTheHeap() {
        assertErrno(Errno.EFAULT, () -> pd.regMr(MemorySegment.ofArray(new byte[64]), Access.LOCAL_READ));
    }

    @Test
    void shouldFailWithEfaultWhenSegmentIsConfinedToOneThread() {
        try (Arena confined = Arena.ofConfined()) {
            assertErrno(Errno.EFAULT, () -> pd.regMr(confined.allocate(64), Access.LOCAL_READ));
        }
    }

    @Test
    void shouldFailWithE2bigWhenLongerThanTheNicAllows() {
        final long max = nic.query().maxMrSize();
        final MemorySegment huge = MemorySegment.ofAddress(1 << 20).reinterpret(max + 1);
        assertErrno(Errno.E2BIG, () -> pd.regMr(huge, Access.LOCAL_READ));
        // Exactly the most is a region (registration touches no byte of it: the pages need not exist).
        try (MemoryRegion most = pd.regMr(MemorySegment.ofAddress(1 << 20).reinterpret(max), Access.LOCAL_READ)) {
            assertEquals(max, most.length());
        }
    }

    @Test
    void shouldFailWithEdquotWhenQuotaWouldBeExceeded() {
        try (Det small = Det.open(new Configuration().maxRegisteredBytes(8192))) {
            final ProtectionDomain domain = small.openNic(Tests.uniqueFabric("mr"), null).allocPd();
            final MemoryRegion first = domain.regMr(arena.allocate(4096), Access.LOCAL_READ);
            final MemoryRegion second = domain.regMr(arena.allocate(4096), Access.LOCAL_READ);
            assertEquals(8192, small.query().registeredBytes());
            assertEquals(2, small.query().pageCount());
            assertErrno(Errno.EDQUOT, () -> domain.regMr(arena.allocate(1), Access.LOCAL_READ));
            assertErrno(Errno.EDQUOT, () -> first.regShared(domain, Access.LOCAL_READ));
            assertEquals(8192, small.query().registeredBytes(), "a refused registration reserves nothing");
            second.close();
            domain.regMr(arena.allocate(4096), Access.LOCAL_READ).close();
            assertEquals(4096, small.query().registeredBytes());
        }
    }

    @Test
    void shouldIssueDistinctNonZeroKeysWhenRegistered() {
        final MemoryRegion local = pd.regMr(arena.allocate(64), Access.LOCAL_READ | Access.LOCAL_WRITE);
        assertNotEquals(0, local.lKey());
        assertEquals(0, local.rKey(), "no remote right, no remote key");
        for (final int remote : new int[] {Access.LOCAL_READ | Access.REMOTE_READ,
            Access.LOCAL_WRITE | Access.REMOTE_WRITE, Access.LOCAL_WRITE | Access.REMOTE_ATOMIC}) {
            final MemoryRegion mr = pd.regMr(arena.allocate(64), remote);
            assertNotEquals(0, mr.lKey());
            assertNotEquals(0, mr.rKey(), "a remote right gives a remote key");
            assertNotEquals(mr.lKey(), mr.rKey(), "l_key and r_key differ");
            assertNotEquals(local.lKey(), mr.lKey());
        }
    }

    @Test
    void shouldReportItsStateWhenQueried() {
        final MemorySegment memory = arena.allocate(256);
        final int access = Access.LOCAL_READ | Access.REMOTE_READ | Access.MW_BIND;
        final MemoryRegion mr = pd.regMr(memory, access);
        final MrAttributes a = mr.query();
        assertSame(pd, a.pd());
        assertEquals(memory.address(), a.address());
        assertEquals(memory.address(), mr.address());
        assertEquals(256, a.length());
        assertEquals(256, mr.length());
        assertEquals(access, a.access());
        assertEquals(mr.lKey(), a.lKey());
        assertEquals(mr.rKey(), a.rKey());
        assertEquals(memory, mr.segment());
        mr.close();
        assertThrows(IllegalStateException.class, mr::query);
        mr.close(); // twice does nothing
    }

    @Test
    void shouldNotReissueFreedKeysWhenRegisteringAgain() {
        final MemorySegment memory = arena.allocate(64);
        final Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            final MemoryRegion mr = pd.regMr(memory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            assertTrue(seen.add(mr.lKey()), "l_key 0x" + Integer.toHexString(mr.lKey()) + " reissued");
            assertTrue(seen.add(mr.rKey()), "r_key 0x" + Integer.toHexString(mr.rKey()) + " reissued");
            mr.close();
        }
    }

    @Test
    void shouldNotRepeatAnRKeyInAMillionRegistrations() {
        final MemorySegment memory = arena.allocate(64);
        final java.util.BitSet seen = new java.util.BitSet(1 << 24);
        for (int i = 0; i < 1 << 20; i++) {
            final MemoryRegion mr = pd.regMr(memory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            final int handle = mr.rKey() >>> 8; // the key's unpredictable part; the low byte is its tag
            assertTrue(!seen.get(handle), "r_key 0x" + Integer.toHexString(mr.rKey()) + " reissued after " + i);
            seen.set(handle);
            mr.close();
        }
    }

    @Test
    void shouldIssueNewKeysWhenModified() {
        final MemoryRegion mr = pd.regMr(arena.allocate(64), Access.LOCAL_READ | Access.LOCAL_WRITE
            | Access.REMOTE_WRITE);
        final int oldL = mr.lKey();
        final int oldR = mr.rKey();
        mr.modify(null, -1);
        assertNotEquals(oldL, mr.lKey());
        assertNotEquals(oldR, mr.rKey());
        assertNotEquals(mr.lKey(), mr.rKey());
        assertEquals(mr.lKey(), mr.query().lKey());

        mr.modify(null, Access.LOCAL_READ);
        assertEquals(0, mr.rKey(), "no remote right left, no remote key");
        assertEquals(Access.LOCAL_READ, mr.query().access());

        final ProtectionDomain other = nic.allocPd();
        mr.modify(other, Access.LOCAL_READ | Access.REMOTE_READ);
        assertSame(other, mr.query().pd());
        assertNotEquals(0, mr.rKey());
        assertErrno(Errno.EBUSY, other::close);
        pd.close(); // the region no longer counts against its old domain
    }

    @Test
    void shouldFailWithEinvalWhenModifiedIllegally() {
        final MemoryRegion mr = pd.regMr(arena.allocate(64), Access.LOCAL_READ);
        final int key = mr.lKey();
        assertErrno(Errno.EINVAL, () -> mr.modify(null, Access.REMOTE_WRITE));
        assertErrno(Errno.EINVAL, () -> mr.modify(null, Access.LOCAL_READ | 0x40));
        final ProtectionDomain elsewhere = det.openNic(Tests.uniqueFabric("mr"), null).allocPd();
        assertErrno(Errno.EINVAL, () -> mr.modify(elsewhere, -1));
        assertEquals(key, mr.lKey(), "a refused modify keeps the keys");
    }

    @Test
    void shouldRegisterSameMemoryTwiceWhenShared() {
        final MemorySegment memory = arena.allocate(128);
        final MemoryRegion mr = pd.regMr(memory, Access.LOCAL_READ);
        final ProtectionDomain other = nic.allocPd();
        final MemoryRegion shared = mr.regShared(other, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        assertEquals(mr.address(), shared.address());
        assertEquals(mr.length(), shared.length());
        assertSame(other, shared.query().pd());
        assertNotEquals(mr.lKey(), shared.lKey());
        assertNotEquals(0, shared.rKey());
        assertEquals(256, det.query().registeredBytes(), "each registration counts");
        assertErrno(Errno.EINVAL, () -> mr.regShared(other, Access.REMOTE_WRITE));
        final ProtectionDomain elsewhere = det.openNic(Tests.uniqueFabric("mr"), null).allocPd();
        assertErrno(Errno.EINVAL, () -> mr.regShared(elsewhere, Access.LOCAL_READ));
        mr.close();
        assertEquals(Access.LOCAL_WRITE | Access.REMOTE_WRITE, shared.query().access(), "independent of the original");
    }

    @Test
    void shouldFailWithProtectionErrWhenOldRemoteKeyIsUsedAfterModify() {
        try (Loopback pair = Loopback.open()) {
            final int oldRKey = pair.mrB.rKey();
            pair.mrB.modify(null, -1);
            final WorkCompletion wc = pair.writeAtoB(pair.mrB.address(), oldRKey, 8);
            assertEquals(WcStatus.PROTECTION_ERR, wc.status());
            assertEquals(77, wc.id());
            pair.awaitBothInError();
        }
    }

    @Test
    void shouldAcceptNewRemoteKeyWhenModified() {
        try (Loopback pair = Loopback.open()) {
            pair.mrB.modify(null, -1);
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
            final WorkCompletion wc = pair.writeAtoB(pair.mrB.address() + 8, pair.mrB.rKey(), 8);
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(0x1122334455667788L, pair.bufB.get(ValueLayout.JAVA_LONG, 8));
        }
    }

    @Test
    void shouldFailWithEnxioWhenOldLocalKeyIsUsedAfterModifyOrDereg() {
        try (Loopback pair = Loopback.open()) {
            final DataSegment[] old = sge(pair.mrA, 0, 8);
            pair.mrA.modify(null, -1);
            assertErrno(Errno.ENXIO, () -> pair.qpA.send(1, old, 1, 0, 0));
            final DataSegment[] current = sge(pair.mrA, 0, 8);
            pair.mrA.close();
            assertErrno(Errno.ENXIO, () -> pair.qpA.send(1, current, 1, 0, 0));
            assertErrno(Errno.ENXIO, () -> pair.qpA.recv(1, current, 1));
        }
    }

    @Test
    void shouldFailWithPermissionErrorWhenRegionMovedToAnotherDomain() {
        try (Loopback pair = Loopback.open()) {
            pair.mrA.modify(pair.nicA.allocPd(), -1);
            assertErrno(Errno.EPERM, () -> pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0));
        }
    }

    @Test
    void shouldFailWithProtectionErrWhenRemoteKeyIsUsedAfterDereg() {
        try (Loopback pair = Loopback.open()) {
            final int rKey = pair.mrB.rKey();
            final long address = pair.mrB.address();
            pair.mrB.close();
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(address, rKey, 8).status());
            pair.awaitBothInError();
        }
    }
}
