package io.jdet.collective;

import io.jdet.Access;
import io.jdet.CollectiveTuning;
import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.EventRecord;
import io.jdet.FaultPlan;
import io.jdet.MemoryRegion;
import io.jdet.ProtectionDomain;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.ResourceType;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A member that stops, one that leaves, and a lossy link: the survivors fail (or finish) and never hang. */
class CollectiveFailureTest {

    private static Configuration quick() {
        // the timeout bounds the join too: long enough for a join on a loaded machine, short for the test
        return new Configuration().ackTimeoutMs(300).collectives(CollectiveTuning.DEFAULT.withTimeoutMs(2000));
    }

    /** Polls the survivors (all but {@code dead}) for one completion each, within a deadline. */
    private static WorkCompletion[] survivors(final Group g, final int dead) {
        final WorkCompletion[] got = new WorkCompletion[g.p];
        final WorkCompletion[] one = {new WorkCompletion()};
        int have = 0;
        final long deadline = System.nanoTime() + 20_000_000_000L;
        while (have < g.p - 1) {
            for (int i = 0; i < g.p; i++) {
                if (i != dead && got[i] == null && g.cqs[i].poll(one) == 1) {
                    got[i] = one[0];
                    one[0] = new WorkCompletion();
                    have++;
                }
            }
            assertTrue(System.nanoTime() < deadline, "a survivor hung");
        }
        return got;
    }

    /** The groups named by CO_ERROR events; the group's internal queue pairs raise none of their own. */
    private static Set<Object> coErrorHandles(final Group g) {
        final Set<Object> handles = new HashSet<>();
        final EventRecord rec = new EventRecord();
        while (g.events.pending() > 0) {
            g.events.waitOn(0, rec);
            assertEquals(ResourceType.CO, rec.type(), "only the group's events reach the user: " + rec);
            if (rec.code() == EventCode.CO_ERROR) {
                handles.add(rec.handle());
            }
        }
        return handles;
    }

    private void allreduceWithout(final Group g, final int dead) {
        for (int i = 0; i < g.p; i++) {
            if (i != dead) {
                final MemoryRegion mr = g.region(i, 64);
                g.cos[i].allreduce(5, null, Group.ds(mr), ReduceOp.SUM, ReduceType.INT64, 0);
                g.cos[i].barrier(6, 0); // queued behind: flushed
            }
        }
        final WorkCompletion[] first = survivors(g, dead);
        final WorkCompletion[] second = survivors(g, dead);
        final Set<Object> events = coErrorHandles(g);
        for (int i = 0; i < g.p; i++) {
            if (i != dead) {
                assertEquals(WcType.ALLREDUCE, first[i].type());
                assertNotEquals(WcStatus.SUCCESS, first[i].status(), "member " + i);
                assertEquals(0, first[i].length());
                assertEquals(WcStatus.FLUSHED, second[i].status());
                assertTrue(events.contains(g.cos[i]), "CO_ERROR event of member " + i);
                final int m = i;
                assertEquals(Errno.ENOTCONN, assertThrows(DetException.class, () -> g.cos[m].barrier(7, 0)).errno());
            }
        }
    }

    @Test
    void aMemberThatStopsFailsTheCollectiveOnEverySurvivor() {
        try (Group g = new Group(5, quick()).joined()) {
            allreduceWithout(g, 3);
        }
    }

    @Test
    void aMemberThatLeavesFailsTheCollectiveOnEverySurvivor() {
        try (Group g = new Group(4, quick()).joined()) {
            g.cos[1].close();
            allreduceWithout(g, 1);
        }
    }

    @Test
    void lossDuplicationAndReorderingDoNotChangeResults() {
        final Configuration c = new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0, 42))
            .collectives(CollectiveTuning.DEFAULT.withSlots(256, 4).withTimeoutMs(20_000));
        for (final int p : new int[] {3, 8}) {
            try (Group g = new Group(p, c).joined()) {
                CollectiveVerbsTest.bcast(g, 1, 3000);
                CollectiveVerbsTest.allgather(g, 200);
                CollectiveVerbsTest.alltoall(g, 64);
                CollectiveVerbsTest.allreduce(g, ReduceOp.SUM, ReduceType.INT64, 300);
                CollectiveVerbsTest.gatherv(g, 2);
            }
        }
    }

    /** The same tunables with every message of a byte or more sent by rendezvous (straight into the destination). */
    private static Configuration quickRendezvous() {
        final Configuration c = quick();
        return c.collectives(c.collectives().withRendezvousBytes(1));
    }

    @ParameterizedTest(name = "rendezvous {0}")
    @ValueSource(booleans = {false, true})
    void aRegionDeregisteredAfterThePostFailsTheGroupWithoutAByteWritten(final boolean rendezvous) {
        try (Group g = new Group(2, rendezvous ? quickRendezvous() : quick()).joined()) {
            bcastIntoARegionClosedUnderIt(g, false); // before the broadcast ran: it must not write there
            assertTrue(coErrorHandles(g).contains(g.cos[1]));
            assertEquals(Errno.ENOTCONN, assertThrows(DetException.class, () -> g.cos[1].barrier(2, 0)).errno());
        }
    }

    /**
     * The same after the broadcast started (a poll ran its first step): the copies of later steps run under the
     * engine lock that the deregistration takes, and check the region first, so no byte lands after close returned.
     * By rendezvous, rank 1's first step granted the root remote write on the region: each frame of the root's
     * write resolves the grant under that lock and finds the region gone.
     */
    @ParameterizedTest(name = "rendezvous {0}")
    @ValueSource(booleans = {false, true})
    void aRegionDeregisteredWhileTheCollectiveRunsIsNotWrittenAfterCloseReturned(final boolean rendezvous) {
        try (Group g = new Group(2, rendezvous ? quickRendezvous() : quick()).joined()) {
            bcastIntoARegionClosedUnderIt(g, true);
        }
    }

    /**
     * As deregistering, so re-keying (here: moving the region to another protection domain) while the broadcast runs:
     * rank 1's first step ran (by rendezvous it granted the root its destination), then its application re-keys the
     * region and goes on to other work, polling no more; the root broadcasts. Not a byte may land after modify
     * returned: the region is no longer the one the collective was given, and may now serve another domain.
     */
    @ParameterizedTest(name = "rendezvous {0}")
    @ValueSource(booleans = {false, true})
    void aRegionReKeyedWhileTheCollectiveRunsIsNotWrittenAfterModifyReturned(final boolean rendezvous) {
        try (Group g = new Group(2, rendezvous ? quickRendezvous() : quick()).joined()) {
            final MemorySegment memory = g.arena.allocate(64, 8);
            final MemoryRegion dst = g.pds[1].regMr(memory, Access.LOCAL_READ | Access.LOCAL_WRITE);
            final MemoryRegion src = g.region(0, 64);
            src.segment().fill((byte) 3);
            g.cos[1].bcast(1, 0, Group.ds(dst), 0);
            final WorkCompletion[] one = {new WorkCompletion()};
            assertEquals(0, g.cqs[1].poll(one)); // rank 1's broadcast starts
            final ProtectionDomain other = g.nics[1].allocPd();
            dst.modify(other, Access.LOCAL_READ | Access.LOCAL_WRITE);
            g.cos[0].bcast(1, 0, Group.ds(src), 0);
            final long deadline = System.nanoTime() + 20_000_000_000L;
            while (g.cqs[0].poll(one) == 0) {
                assertTrue(System.nanoTime() < deadline, "the root hung");
            }
            try {
                Thread.sleep(200); // frames in flight settle (rank 1's engine places them without its application)
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (long i = 0; i < memory.byteSize(); i++) {
                assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of the re-keyed region");
            }
            while (g.cqs[1].poll(one) == 0) {
                assertTrue(System.nanoTime() < deadline, "rank 1 hung");
            }
            assertEquals(WcStatus.LOCAL_PROTECTION_ERR, one[0].status(), one[0].toString());
            dst.close();
            other.close();
        }
    }

    /**
     * Rank 1 posts a broadcast into a region it deregisters, after its first step ran if {@code started}; rank 0
     * then broadcasts: rank 1 fails LOCAL_PROTECTION_ERR and not a byte of the region is written.
     */
    private static void bcastIntoARegionClosedUnderIt(final Group g, final boolean started) {
        final MemorySegment memory = g.arena.allocate(64, 8);
        final MemoryRegion dst = g.pds[1].regMr(memory, Access.LOCAL_READ | Access.LOCAL_WRITE);
        final MemoryRegion src = g.region(0, 64);
        src.segment().fill((byte) 3);
        g.cos[1].bcast(1, 0, Group.ds(dst), 0);
        if (started) {
            g.cqs[1].poll(new WorkCompletion[] {new WorkCompletion()}); // rank 1's broadcast starts
        }
        dst.close();
        g.cos[0].bcast(1, 0, Group.ds(src), 0);
        final WorkCompletion[] got = g.awaitAll(20_000);
        assertEquals(WcStatus.LOCAL_PROTECTION_ERR, got[1].status(), got[1].toString());
        for (long i = 0; i < memory.byteSize(); i++) {
            assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of the deregistered region");
        }
    }

    /**
     * Members that disagree on a broadcast's length break the rules of the wire, eager or by rendezvous: the member
     * that finds out fails BAD_RESPONSE, and the other learns it from the torn-down connection; never a hang, never
     * SUCCESS at the member whose bytes were wrong. Root 0 sends {@code rootBytes}, rank 1 expects {@code rank1Bytes}
     * (the default tuning: rendezvous from 16 KiB); {@code finder} is the member whose check trips: rank 1 for a chunk
     * longer than what remains (eager) or a chunk into the destination it advertised (eager sent where it expected a
     * rendezvous), the root for an advertisement of another length (both by rendezvous).
     */
    @ParameterizedTest(name = "root {0} B, rank 1 {1} B")
    @org.junit.jupiter.params.provider.CsvSource({"100,50,1", "1000,100000,1", "131072,98304,0"})
    void membersThatDisagreeOnALengthFailWithBadResponse(final int rootBytes, final int rank1Bytes,
                                                         final int finder) {
        try (Group g = new Group(2, quick()).joined()) {
            final MemoryRegion src = g.region(0, rootBytes);
            final MemoryRegion dst = g.region(1, rank1Bytes);
            g.cos[0].bcast(1, 0, Group.ds(src), 0);
            g.cos[1].bcast(1, 0, Group.ds(dst), 0);
            final WorkCompletion[] got = g.awaitAll(20_000);
            assertEquals(WcStatus.BAD_RESPONSE, got[finder].status(), got[finder] + " " + g.cos[finder]);
            assertNotEquals(WcStatus.SUCCESS, got[1].status(), "rank 1's bytes are not the root's: " + got[1]);
            assertTrue(coErrorHandles(g).contains(g.cos[finder]));
        }
    }

    @Test
    void scratchMemoryThatCannotBeRegisteredFailsTheGroupAsThisMembersOwnError() {
        // The registration quota (the device's, both members') is full when a reduction starts: the member that
        // first needs its scratch memory cannot register it and says so with LOCAL_OP_ERR (not a timeout); the
        // other fails too, never hangs, and neither reports a sum.
        try (Group g = new Group(2, quick().maxRegisteredBytes(4L << 20)).joined()) {
            final MemoryRegion[] mr = {g.region(0, 64), g.region(1, 64)};
            for (long k = 4L << 20; k >= 8; k /= 2) {
                while (true) {
                    try {
                        g.pds[1].regMr(g.arena.allocate(k, 8), Access.LOCAL_READ);
                    } catch (final DetException full) {
                        assertEquals(Errno.EDQUOT, full.errno());
                        break;
                    }
                }
            }
            g.cos[0].reduce(2, 0, Group.ds(mr[0]), Group.ds(mr[0]), ReduceOp.SUM, ReduceType.INT64, 0);
            g.cos[1].reduce(2, 0, Group.ds(mr[1]), null, ReduceOp.SUM, ReduceType.INT64, 0);
            final WorkCompletion[] got = g.awaitAll(20_000);
            assertTrue(got[0].status() == WcStatus.LOCAL_OP_ERR || got[1].status() == WcStatus.LOCAL_OP_ERR,
                got[0] + " / " + got[1]);
            final Set<Object> failed = coErrorHandles(g);
            for (int i = 0; i < 2; i++) {
                assertNotEquals(WcStatus.SUCCESS, got[i].status(), got[i].toString());
                assertTrue(failed.contains(g.cos[i]), "CO_ERROR of member " + i);
            }
        }
    }

    @Test
    void aClosedGroupsEventsDoNotOutliveIt() {
        try (Group g = new Group(2, quick()).joined()) {
            g.cos[1].close();
            final MemoryRegion mr = g.region(0, 64);
            g.cos[0].allreduce(5, null, Group.ds(mr), ReduceOp.SUM, ReduceType.INT64, 0);
            survivors(g, 1); // member 0 fails: its CO_ERROR is queued
            g.cos[0].close();
            final EventRecord rec = new EventRecord();
            while (g.events.pending() > 0) {
                g.events.waitOn(0, rec);
                assertTrue(rec.handle() != g.cos[0] && rec.handle() != g.cos[1], "an event about a closed group: "
                    + rec);
            }
        }
    }

    @Test
    void closingTheDeviceWithAGroupStillOpenClosesEverything() {
        // The group's completion queue refuses a close of its own while the group lives (EBUSY); the device's close
        // must still take the queue, the group's queue pairs and the NIC down, and not stop halfway.
        try (Group g = new Group(2, quick()).joined()) {
            g.det.close();
            for (final io.jdet.Nic nic : g.nics) {
                assertThrows(IllegalStateException.class, nic::allocPd, "the NIC was closed");
            }
            assertThrows(IllegalStateException.class, () -> g.cqs[0].poll(new WorkCompletion[1]));
        }
    }

    /**
     * Det.close "closes everything opened through it": it left the device's groups open (only their poll hooks
     * went). Their tags stayed claimed in the process, so a new device joining the same tag got EEXIST for good;
     * a joining group's joiner ran on; and the memory of every group's slots was never freed.
     */
    @Test
    void closingTheDeviceClosesItsGroupsAndFreesTheirTags() {
        try (Group g = new Group(2, quick()).joined()) {
            final long joining = g.tag + 0x1_0000_0000L;
            final io.jdet.Collective waiting = g.pds[0].createCollective(g.cqs[0]);
            waiting.join(1, joining, 2, 0, g.nics[0].address(), 0); // rank 1 never comes
            g.det.close();
            assertThrows(IllegalStateException.class, () -> g.cos[1].barrier(1, 0), "the group was destroyed");
            assertThrows(IllegalStateException.class, () -> waiting.barrier(1, 0), "the group was destroyed");
            try (Group h = new Group(2, quick())) { // a new device in this process: the same tags are free
                for (final long tag : new long[] {g.tag, joining}) {
                    for (int i = 0; i < 2; i++) {
                        h.cos[i].close();
                        h.cos[i] = h.pds[i].createCollective(h.cqs[i]);
                        h.cos[i].join(1, tag, 2, i, h.nics[0].address(), 0); // was EEXIST
                    }
                    h.expectAll(WcType.JOIN, 0);
                }
            }
        }
    }

    @Test
    void aLostRootFailsTheJoinWithinTheTimeout() {
        try (Group g = new Group(3, quick())) {
            for (int i = 1; i < 3; i++) {
                g.cos[i].join(1, g.tag, 3, i, g.nics[0].address(), 0);
            }
            final WorkCompletion[] got = survivors(g, 0);
            for (int i = 1; i < 3; i++) {
                assertEquals(WcType.JOIN, got[i].type());
                assertEquals(WcStatus.RETRY_EXCEEDED, got[i].status());
            }
        }
    }

    @Test
    void inPlaceBuffersSurviveTheFailureUntouchedByLaterFrames() {
        try (Group g = new Group(2, quick()).joined()) {
            final MemoryRegion mr = g.region(0, 8);
            mr.segment().set(ValueLayout.JAVA_LONG, 0, 77);
            g.cos[0].allreduce(1, null, Group.ds(mr), ReduceOp.MAX, ReduceType.INT64, 0);
            final WorkCompletion[] got = survivors(g, 1);
            assertNotEquals(WcStatus.SUCCESS, got[0].status());
        }
    }
}
