package io.jdet.collective;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CollectiveTuning;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.MemoryRegion;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;
import io.jdet.WrFlags;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every errno of the collective verbs, each raised before the post takes a slot. */
class CollectiveErrnoTest {

    private static void errno(final Errno expected, final Executable post) {
        assertEquals(expected, assertThrows(DetException.class, post).errno());
    }

    @Test
    void joinErrnos() {
        final Configuration c = new Configuration().collectives(new CollectiveTuning(5000, 8, 4, 1024, 4, 0, 0, 8, 0,
            0, 0, 0, 8, 0, 0));
        try (Group g = new Group(2, c)) {
            final Collective co = g.cos[0];
            final String root = g.nics[0].address();
            errno(Errno.EINVAL, () -> co.join(1, g.tag, 1, 0, root, 0));
            errno(Errno.EINVAL, () -> co.join(1, g.tag, 2, -1, root, 0));
            errno(Errno.EINVAL, () -> co.join(1, g.tag, 2, 2, root, 0));
            errno(Errno.EINVAL, () -> g.cos[1].join(1, g.tag, 2, 1, null, 0));
            errno(Errno.EINVAL, () -> co.join(1, g.tag, 2, 0, root, WrFlags.SOLICITED));
            errno(Errno.E2BIG, () -> co.join(1, g.tag, 9, 0, root, 0));
            errno(Errno.ENOTCONN, () -> co.barrier(1, 0));
            co.join(1, g.tag, 2, 0, root, 0);
            errno(Errno.EBUSY, () -> co.join(1, g.tag, 2, 0, root, 0));
            final Collective other = g.pds[1].createCollective(g.cqs[1]);
            errno(Errno.EEXIST, () -> other.join(1, g.tag, 3, 1, root, 0));
            errno(Errno.EEXIST, () -> other.join(1, g.tag, 2, 0, root, 0));
            other.close();
            g.cos[1].join(2, g.tag, 2, 1, root, 0);
            g.expectAll(WcType.JOIN, 0);
        }
    }

    /**
     * MPI's aliasing rule: a source overlapping a destination is EINVAL at post (an all-to-all with src == dst
     * completed SUCCESS with the blocks it had just received forwarded), and the group stays usable.
     */
    @Test
    void aSourceOverlappingADestinationIsRefused() {
        try (Group g = new Group(2, new Configuration().collectives(CollectiveTuning.DEFAULT)).joined()) {
            final Collective co = g.cos[0];
            final MemoryRegion mr = g.region(0, 64);
            final DataSegment all = Group.ds(mr, 0, 32);
            final DataSegment first = Group.ds(mr, 0, 16);
            final DataSegment second = Group.ds(mr, 16, 16);
            final DataSegment straddling = Group.ds(mr, 8, 16);
            errno(Errno.EINVAL, () -> co.alltoall(1, all, all, 0));
            errno(Errno.EINVAL, () -> co.alltoall(1, all, Group.ds(mr, 16, 32), 0));
            errno(Errno.EINVAL, () -> co.allgather(1, second, all, 0));
            errno(Errno.EINVAL, () -> co.scatter(1, 0, all, straddling, 0));
            errno(Errno.EINVAL, () -> co.gather(1, 0, straddling, all, 0));
            errno(Errno.EINVAL, () -> co.allgatherv(1, first, new DataSegment[] {second, straddling}, 0));
            errno(Errno.EINVAL, () -> co.alltoallv(1, new DataSegment[] {first, Group.ds(mr, 32, 8)},
                new DataSegment[] {Group.ds(mr, 40, 16), Group.ds(mr, 36, 8)}, 0));
            // Adjacent is not overlapping; the refused posts took no slot: an all-to-all still runs on both
            final MemoryRegion other = g.region(1, 64);
            co.alltoall(2, first, second, 0);
            g.cos[1].alltoall(2, Group.ds(other, 0, 16), Group.ds(other, 16, 16), 0);
            g.expectAll(WcType.ALLTOALL, 16);
        }
    }

    @Test
    void postErrnosLeaveTheGroupUsable() {
        final Configuration c = new Configuration().collectives(CollectiveTuning.DEFAULT);
        try (Group g = new Group(2, c).joined()) {
            final Collective co = g.cos[0];
            final MemoryRegion mr = g.region(0, 64);
            final MemoryRegion readOnly = g.pds[0].regMr(g.arena.allocate(64), Access.LOCAL_READ);
            final DataSegment ok = Group.ds(mr);
            errno(Errno.EINVAL, () -> co.barrier(1, WrFlags.FENCED));
            errno(Errno.EINVAL, () -> co.bcast(1, 2, ok, 0));
            errno(Errno.EINVAL, () -> co.bcast(1, -1, ok, 0));
            errno(Errno.EINVAL, () -> co.bcast(1, 0, null, 0));
            errno(Errno.EINVAL, () -> co.scatter(1, 0, Group.ds(mr, 0, 63), null, 0));
            errno(Errno.EINVAL, () -> co.scatter(1, 0, ok, Group.ds(mr, 0, 8), 0));
            errno(Errno.EINVAL, () -> co.scatter(1, 1, null, null, 0));
            errno(Errno.EINVAL, () -> co.gather(1, 0, null, Group.ds(mr, 0, 63), 0));
            errno(Errno.EINVAL, () -> co.allgather(1, null, Group.ds(mr, 0, 63), 0));
            errno(Errno.EINVAL, () -> co.allgather(1, Group.ds(mr, 0, 8), ok, 0));
            errno(Errno.EINVAL, () -> co.alltoall(1, ok, Group.ds(mr, 0, 32), 0));
            errno(Errno.EINVAL, () -> co.scatterv(1, 0, new DataSegment[] {ok}, null, 0));
            errno(Errno.EINVAL, () -> co.alltoallv(1, new DataSegment[] {ok, null}, new DataSegment[] {ok, ok}, 0));
            errno(Errno.EINVAL, () -> co.allgatherv(1, Group.ds(mr, 0, 8), new DataSegment[] {ok, ok}, 0));
            errno(Errno.EINVAL, () -> co.allreduce(1, null, Group.ds(mr, 0, 12), ReduceOp.SUM, ReduceType.INT64, 0));
            errno(Errno.EINVAL, () -> co.allreduce(1, null, ok, ReduceOp.BXOR, ReduceType.FLOAT64, 0));
            errno(Errno.EINVAL, () -> co.allreduce(1, null, ok, null, ReduceType.INT64, 0));
            errno(Errno.EINVAL, () -> co.reduce(1, 1, null, null, ReduceOp.SUM, ReduceType.INT64, 0));
            errno(Errno.ENXIO, () -> co.bcast(1, 0, new DataSegment(mr.address(), 8, mr.lKey() ^ 0x5a5a00), 0));
            errno(Errno.ERANGE, () -> co.bcast(1, 0, new DataSegment(mr.address() + 60, 8, mr.lKey()), 0));
            errno(Errno.EACCES, () -> co.bcast(1, 1, Group.ds(readOnly), 0));
            final MemoryRegion foreign = g.nics[0].allocPd().regMr(g.arena.allocate(64), Access.LOCAL_READ
                | Access.LOCAL_WRITE);
            errno(Errno.EPERM, () -> co.bcast(1, 0, Group.ds(foreign), 0));
            // none of them took a slot: the group still runs
            for (int i = 0; i < 2; i++) {
                g.cos[i].barrier(2, 0);
            }
            g.expectAll(WcType.BARRIER, 0);
        }
    }

    @Test
    void ownBlocksMustFitAndForwardersMustRead() {
        try (Group g = new Group(2, new Configuration()).joined()) {
            final Collective co = g.cos[0];
            final MemoryRegion mr = g.region(0, 64);
            final MemoryRegion writeOnly = g.pds[0].regMr(g.arena.allocate(64), Access.LOCAL_WRITE);
            // the root's own block is copied locally: where both ends are given they must be as long
            errno(Errno.EINVAL, () -> co.scatterv(1, 0, new DataSegment[] {Group.ds(mr, 0, 16), Group.ds(mr, 16, 8)},
                Group.ds(mr, 32, 8), 0));
            errno(Errno.EINVAL, () -> co.gatherv(1, 0, Group.ds(mr, 0, 16), new DataSegment[] {Group.ds(mr, 16, 8),
                Group.ds(mr, 24, 8)}, 0));
            errno(Errno.EINVAL, () -> co.alltoallv(1, new DataSegment[] {Group.ds(mr, 0, 16), Group.ds(mr, 16, 8)},
                new DataSegment[] {Group.ds(mr, 32, 4), Group.ds(mr, 40, 8)}, 0));
            // a broadcast's inner members forward from their destination
            errno(Errno.EACCES, () -> co.bcast(1, 1, Group.ds(writeOnly), 0));
            for (int i = 0; i < 2; i++) {
                g.cos[i].barrier(2, 0);
            }
            g.expectAll(WcType.BARRIER, 0);
        }
    }

    @Test
    void aReductionLargerThanHalfTheLargestRegionIsE2big() {
        // Its scratch memory, one region, would hold two such buffers. The 1 GiB region is a lazy mapping: only its
        // registration is paid, none of its pages.
        try (Group g = new Group(2, new Configuration()).joined()) {
            final long n = (g.nics[0].query().maxMrSize() / 2 / 8 + 1) * 8; // the least multiple of 8 above half
            final MemoryRegion big = g.pds[0].regMr(io.jdet.testing.LazyMemory.map(n, g.arena),
                Access.LOCAL_READ | Access.LOCAL_WRITE);
            errno(Errno.E2BIG, () -> g.cos[0].allreduce(1, null, Group.ds(big, 0, n), ReduceOp.SUM,
                ReduceType.INT64, 0));
            errno(Errno.E2BIG, () -> g.cos[0].reduce(1, 1, Group.ds(big, 0, n), null, ReduceOp.SUM,
                ReduceType.INT64, 0));
            for (int i = 0; i < 2; i++) {
                g.cos[i].barrier(2, 0); // nothing was taken
            }
            g.expectAll(WcType.BARRIER, 0);
            big.close();
        }
    }

    @Test
    void joinRefusesAMeshTheNicCannotHold() {
        // 4096 slots per peer: 11 peers need a completion queue of about 135 000 entries, above the NIC's largest
        final Configuration c = new Configuration().collectives(CollectiveTuning.DEFAULT.withSlots(64, 4096));
        try (Group g = new Group(2, c)) {
            final int most = g.nics[0].query().maxCqSize();
            final DetException e = assertThrows(DetException.class, () -> g.cos[0].join(1, g.tag, 12, 0,
                g.nics[0].address(), 0));
            assertEquals(Errno.E2BIG, e.errno(), e.getMessage());
            assertTrue(e.getMessage().contains(String.valueOf(most)), e.getMessage());
            g.joined(); // nothing was claimed: the group joins at a size that fits
        }
    }

    @Test
    void aGroupsCompletionQueueCannotBeClosedUnderIt() {
        try (Group g = new Group(2, new Configuration()).joined()) {
            errno(Errno.EBUSY, g.cqs[0]::close);
            for (int i = 0; i < 2; i++) {
                g.cos[i].barrier(1, 0);
            }
            g.expectAll(WcType.BARRIER, 0);
            g.cos[0].close();
            g.cqs[0].close(); // the group is gone: now it may go
        }
    }

    @Test
    void depthGivesEnospc() {
        final Configuration c = new Configuration().collectives(new CollectiveTuning(5000, 8, 2, 1024, 4, 0, 0, 8, 0,
            0, 0, 0, 8, 0, 0));
        try (Group g = new Group(2, c).joined()) {
            g.cos[0].barrier(1, 0);
            g.cos[0].barrier(2, 0);
            errno(Errno.ENOSPC, () -> g.cos[0].barrier(3, 0));
            for (int k = 0; k < 2; k++) {
                g.cos[1].barrier(1, 0);
            }
            g.expectAll(WcType.BARRIER, 0);
            g.expectAll(WcType.BARRIER, 0);
        }
    }
}
