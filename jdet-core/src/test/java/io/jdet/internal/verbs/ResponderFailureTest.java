package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.Configuration;
import io.jdet.EventCode;
import io.jdet.EventRecord;
import io.jdet.MemoryRegion;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Failures inside the responding engine, set up from inside: a request whose execution throws, and a read whose
 * region is deregistered while its response still waits to be sent. Each must fail the request at the initiator,
 * never complete it SUCCESS.
 */
@Timeout(60)
class ResponderFailureTest {
    private static final long ORIGINAL = 0x5a5a_5a5a_5a5a_5a5aL;
    private static final long PATTERN = 0x1122_3344_5566_7788L;

    /**
     * A region over read-only memory that claims write rights (what an unchecked modify used to produce): the
     * peer's write throws inside the engine. It must come back as REMOTE_OP_ERR, both queue pairs in ERROR, the
     * target unchanged; the application at B polls all along and never sees the exception.
     */
    @Test
    void shouldFailWriteWithRemoteOpErrWhenItsExecutionThrows() {
        try (Loopback pair = Loopback.open()) {
            final MemorySegment target = pair.arena.allocate(64);
            target.set(ValueLayout.JAVA_LONG, 0, ORIGINAL);
            final MrImpl mr = (MrImpl) pair.pdB.regMr(target.asReadOnly(), Access.LOCAL_READ | Access.REMOTE_READ);
            final NicImpl nicB = (NicImpl) pair.nicB;
            nicB.lock.lock();
            try {
                mr.access |= Access.LOCAL_WRITE | Access.REMOTE_WRITE;
            } finally {
                nicB.lock.unlock();
            }
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, PATTERN);

            pair.qpA.write(1, sge(pair.mrA, 0, 8), 1, mr.address(), mr.rKey(), 0, 0);
            final WorkCompletion wc = pollAWhilePollingB(pair);

            assertEquals(WcStatus.REMOTE_OP_ERR, wc.status(), "never SUCCESS: " + wc);
            assertEquals(ORIGINAL, target.get(ValueLayout.JAVA_LONG, 0));
            assertEvents(pair, EventCode.QP_FATAL);
            assertEquals(1L, pair.nicB.counters().get("engine.errors"), "the one failure, counted");
            assertEquals(0L, pair.nicA.counters().get("engine.errors"));
            pair.expectEngineErrors(0, 1);
        }
    }

    /**
     * A read of 32 frames whose response cannot all go out (A's engine is held, its inbound ring fills), and whose
     * region B deregisters and reuses meanwhile: the rest of the response may not be read from that memory, so the
     * read fails with PROTECTION_ERR and no byte written after the deregistration reaches A.
     */
    @Test
    void shouldFailReadWhenItsRegionIsDeregisteredWhileTheResponseWaits() {
        final Configuration smallRing = new Configuration().loopRingFrames(8).windowFrames(64)
            .ackTimeoutMs(120_000); // no give-up while a loaded machine fills the ring: the NAK must arrive
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(smallRing).bufferBytes(4 << 20))) {
            final int length = 32 * (((NicImpl) pair.nicB).maxPayload);
            final MemorySegment source = pair.arena.allocate(length, 64);
            source.fill((byte) 0x11);
            final MemoryRegion mr = pair.pdB.regMr(source, Access.LOCAL_READ | Access.REMOTE_READ);
            final NicImpl nicA = (NicImpl) pair.nicA;

            nicA.lock.lock(); // nothing at A takes frames from its ring now
            try {
                pair.qpA.read(1, sge(pair.mrA, 0, length), 1, mr.address(), mr.rKey(), 0);
                Tests.await("B's response stalled on A's full ring", () -> pair.nicB.counters().get("link.busy") > 0);
                mr.close();
                source.fill((byte) 0x22); // the memory is the application's again
            } finally {
                nicA.lock.unlock();
            }

            // B's NAK may meet A's full ring and be lost; A's acknowledgement of the frames it drained then reaches B
            // in ERROR, which repeats the NAK.
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.PROTECTION_ERR, wc.status(), "never SUCCESS: " + wc);
            assertEvents(pair, EventCode.INVALID_RDMA_KEY);
            final long leaked = pair.bufA.asSlice(0, length).elements(ValueLayout.JAVA_BYTE)
                .filter(b -> b.get(ValueLayout.JAVA_BYTE, 0) == 0x22).count();
            assertEquals(0, leaked, "bytes read after the deregistration reached A");
            assertEquals(0L, pair.nicA.counters().get("engine.errors"));
            assertEquals(0L, pair.nicB.counters().get("engine.errors"));
        }
    }

    private static WorkCompletion pollAWhilePollingB(final Loopback pair) {
        final WorkCompletion[] atA = {new WorkCompletion()};
        final WorkCompletion[] atB = {new WorkCompletion()};
        final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
        while (pair.cqA.poll(atA) == 0) {
            if (pair.cqB.poll(atB) != 0) {
                fail("B has no work posted, yet completed " + atB[0]);
            }
            if (System.nanoTime() - deadline > 0) {
                fail("no completion at A within " + Tests.TIMEOUT);
            }
        }
        return Tests.copy(atA[0]);
    }

    private static void assertEvents(final Loopback pair, final EventCode code) {
        pair.awaitBothInError();
        final List<EventRecord> atB = Tests.awaitEvent(pair.eventsB, r -> r.code() == code);
        final EventRecord local = atB.get(atB.size() - 1);
        assertFalse(local.remote(), "the responder raises it locally: " + local);
        assertSame(pair.qpB, local.handle());
        final List<EventRecord> atA = Tests.awaitEvent(pair.eventsA, r -> r.code() == code);
        assertTrue(atA.get(atA.size() - 1).remote(), "the requester gets the remote bit");
    }
}
