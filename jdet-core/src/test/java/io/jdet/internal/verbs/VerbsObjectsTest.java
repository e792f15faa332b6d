package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CompletionQueue;
import io.jdet.CqArm;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.MemoryWindow;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.QueuePair;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Proxy;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Protection domains, windows and completion queues at the edges of their lives and limits: every verb of a
 * deallocated domain is refused, a domain counts its windows, a collective needs an open queue of
 * its own NIC, limits are inclusive, and a verb that fails or succeeds leaves the NIC usable from other threads.
 */
@Timeout(30)
class VerbsObjectsTest {
    private static final int RW = Access.LOCAL_READ | Access.LOCAL_WRITE;

    /** Another thread must be able to use the NIC (take its engine lock) right after a verb returned. */
    private static void assertUsableFromAnotherThread(final Nic nic) throws Exception {
        final ProtectionDomain pd = CompletableFuture.supplyAsync(nic::allocPd)
            .get(Tests.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        pd.close();
    }

    @Test
    void shouldRefuseEveryVerbOfADeallocatedDomain() throws Exception {
        try (Det det = Det.open(); Arena arena = Arena.ofShared()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("objects"), null);
            final CompletionQueue cq = nic.createCq(8, null);
            final ProtectionDomain pd = nic.allocPd();
            assertSame(nic, pd.nic());
            pd.close();
            assertUsableFromAnotherThread(nic);
            final MemorySegment memory = arena.allocate(64);
            assertThrows(IllegalStateException.class, () -> pd.regMr(memory, RW));
            assertThrows(IllegalStateException.class, () -> pd.createMw(1));
            assertThrows(IllegalStateException.class, () -> pd.createQp(QpCreate.of(cq, 4, 4)));
            assertThrows(IllegalStateException.class, () -> pd.createCollective(cq));
            pd.close(); // twice does nothing
            assertUsableFromAnotherThread(nic);
        }
    }

    @Test
    void shouldCountWindowsAsUsersOfTheirDomain() throws Exception {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("objects"), null);
            final ProtectionDomain pd = nic.allocPd();
            final MemoryWindow first = pd.createMw(1);
            final MemoryWindow second = pd.createMw(2);
            assertErrno(Errno.EBUSY, pd::close);
            assertUsableFromAnotherThread(nic);
            first.close();
            assertErrno(Errno.EBUSY, pd::close, "one window is left");
            first.close(); // twice: counted once
            second.close();
            pd.close();
            assertThrows(IllegalStateException.class, first::query);
        }
    }

    @Test
    void shouldCheckTheQueueOfANewCollective() throws Exception {
        try (Det det = Det.open()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("objects"), null);
            final Nic other = det.openNic(Tests.uniqueFabric("objects"), null);
            final ProtectionDomain pd = nic.allocPd();
            assertErrno(Errno.EINVAL, () -> pd.createCollective(null));
            assertErrno(Errno.EINVAL, () -> pd.createCollective(other.createCq(8, null)));
            final CompletionQueue foreign = (CompletionQueue) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {CompletionQueue.class}, (proxy, method, args) -> null);
            assertThrows(IllegalArgumentException.class, () -> pd.createCollective(foreign));
            final CompletionQueue closed = nic.createCq(8, null);
            closed.close();
            assertThrows(IllegalStateException.class, () -> pd.createCollective(closed));
            assertUsableFromAnotherThread(nic);
            final CompletionQueue cq = nic.createCq(8, null);
            try (Collective co = pd.createCollective(cq)) {
                assertNotNull(co);
                assertUsableFromAnotherThread(nic);
            }
        }
    }

    @Test
    void shouldAcceptTheLargestThresholdAndSizeAndReleaseTheLock() throws Exception {
        try (Det det = Det.open()) {
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic(Tests.uniqueFabric("objects"), events);
            final CompletionQueue cq = nic.createCq(1, events);
            final int size = cq.query().size();
            cq.arm(CqArm.THRESHOLD, size);
            assertEquals(size, cq.query().threshold());
            cq.resize(nic.query().maxCqSize());
            assertTrue(cq.query().size() >= nic.query().maxCqSize(), "rounded up to whole pages");
            assertUsableFromAnotherThread(nic);
            assertErrno(Errno.EINVAL, () -> cq.resize(size - 1), "below the armed threshold");
            assertUsableFromAnotherThread(nic);
            cq.close();
            assertUsableFromAnotherThread(nic);
            assertThrows(IllegalStateException.class, () -> cq.resize(size));
        }
    }

    @Test
    void shouldForgetAThresholdOnceItFired() {
        try (Det det = Det.open()) {
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic(Tests.uniqueFabric("objects"), events);
            final CqImpl cq = (CqImpl) nic.createCq(300, events);
            cq.arm(CqArm.THRESHOLD, 200);
            for (int i = 0; i < 199; i++) {
                cq.completeCollective(i, io.jdet.WcStatus.SUCCESS, io.jdet.WcType.BARRIER, 0);
            }
            assertEquals(CqArm.THRESHOLD, cq.query().arm(), "199 completions do not meet a threshold of 200");
            assertEquals(0, events.pending());
            cq.completeCollective(199, io.jdet.WcStatus.SUCCESS, io.jdet.WcType.BARRIER, 0);
            assertEquals(1, events.pending());
            assertEquals(0, cq.query().arm(), "the threshold fired");
            final io.jdet.WorkCompletion[] wc = new io.jdet.WorkCompletion[200];
            for (int i = 0; i < wc.length; i++) {
                wc[i] = new io.jdet.WorkCompletion();
            }
            assertEquals(200, cq.poll(wc));
            cq.resize(10); // the old threshold no longer binds
            assertEquals(102, cq.query().size());
            cq.arm(CqArm.NEXT_SIGNALED, 0);
            cq.resize(1); // nor does an arm without THRESHOLD
            assertEquals(102, cq.query().size());
        }
    }

    @Test
    void shouldGiveKeysRandomLowBytes() {
        try (Det det = Det.open(); Arena arena = Arena.ofShared()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("objects"), null);
            final ProtectionDomain pd = nic.allocPd();
            final Set<Integer> regionTags = new HashSet<>();
            final Set<Integer> windowTags = new HashSet<>();
            for (int i = 0; i < 32; i++) {
                final MemoryRegion mr = pd.regMr(arena.allocate(64), RW | Access.REMOTE_WRITE);
                regionTags.add(mr.lKey() & 0xFF);
                assertEquals(mr.lKey() + 1, mr.rKey(), "the remote key is the next odd tag of the same handle");
                windowTags.add(pd.createMw(1).rKey() & 0xFF);
            }
            // 32 draws from 128 (regions: even tags) or 256 values all alike: about 2^-217 by chance.
            assertTrue(regionTags.size() > 1, "region keys " + regionTags);
            assertTrue(windowTags.size() > 1, "window keys " + windowTags);
        }
    }

    @Test
    void shouldFreeTheSlotsOfCompletionsMadeAfterAReset() {
        try (Loopback pair = Loopback.open(new Loopback.Options().depth(2, 2).connect(false))) {
            for (final QueuePair qp : List.of(pair.qpA, pair.qpB)) {
                qp.modify(new QpModify().state(QpState.ERROR));
                qp.modify(new QpModify().state(QpState.IDLE)); // a new epoch
            }
            pair.connect();
            // Four times the queues' depth: each polled completion of the new epoch must free its slot.
            for (int round = 0; round < 8; round++) {
                pair.qpB.recv(round, Loopback.sge(pair.mrB, 0, 8), 1);
                pair.qpA.send(100 + round, Loopback.sge(pair.mrA, 0, 8), 1, 0, 0);
                assertEquals(100 + round, Tests.expectSuccess(pair.cqA, 1).get(0).id());
                assertEquals(round, Tests.expectSuccess(pair.cqB, 1).get(0).id());
            }
            Tests.assertEngineHealthy(pair.nicA, pair.nicB);
        }
    }

    @Test
    void shouldFindTheRegionOfASegmentForACollectiveWithThePostsChecks() throws Exception {
        try (Det det = Det.open(); Arena arena = Arena.ofShared()) {
            final Nic nic = det.openNic(Tests.uniqueFabric("objects"), null);
            final PdImpl pd = (PdImpl) nic.allocPd();
            final MemoryRegion mr = pd.regMr(arena.allocate(64), Access.LOCAL_READ);
            final long at = mr.address();
            assertSame(mr, pd.region(new DataSegment(at + 8, 16, mr.lKey()), Access.LOCAL_READ, "s", -1));
            assertSame(mr, pd.region(new DataSegment(at + 64, 0, mr.lKey()), Access.LOCAL_READ, "s", -1),
                "an empty segment at the end of its region is inside it");
            assertSame(mr, pd.region(new DataSegment(at, 64, mr.lKey()), Access.LOCAL_READ, "s", -1));
            assertErrno(Errno.ERANGE, () -> pd.region(new DataSegment(at, -1, mr.lKey()), Access.LOCAL_READ, "s", -1));
            final DetException outside = assertErrno(Errno.ERANGE,
                () -> pd.region(new DataSegment(at + 1, 64, mr.lKey()), Access.LOCAL_READ, "dst", 3));
            assertTrue(outside.getMessage().contains(": dst[3] lies outside"), outside.getMessage());
            final DetException write = assertErrno(Errno.EACCES,
                () -> pd.region(new DataSegment(at, 8, mr.lKey()), Access.LOCAL_WRITE, "s", -1));
            assertTrue(write.getMessage().endsWith("lacks LOCAL_WRITE"), write.getMessage());
            final DetException both = assertErrno(Errno.EACCES, () -> pd.region(new DataSegment(at, 8, mr.lKey()),
                Access.LOCAL_READ | Access.LOCAL_WRITE, "s", -1));
            assertTrue(both.getMessage().endsWith("lacks LOCAL_WRITE"), both.getMessage());
            final MemoryRegion writeOnly = pd.regMr(arena.allocate(64), Access.LOCAL_WRITE);
            final DetException read = assertErrno(Errno.EACCES, () -> pd.region(new DataSegment(writeOnly.address(),
                8, writeOnly.lKey()), Access.LOCAL_READ | Access.LOCAL_WRITE, "s", -1));
            assertTrue(read.getMessage().endsWith("lacks LOCAL_READ"), read.getMessage());
            assertErrno(Errno.ENXIO, () -> pd.region(new DataSegment(at, 8, mr.lKey() ^ 0x100), Access.LOCAL_READ,
                "s", -1));
            final PdImpl other = (PdImpl) nic.allocPd();
            assertErrno(Errno.EPERM, () -> other.region(new DataSegment(at, 8, mr.lKey()), Access.LOCAL_READ, "s",
                -1));
            assertUsableFromAnotherThread(nic);
        }
    }
}
