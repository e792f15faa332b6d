package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The errors a post returns at once ({@code det_send(3)}, {@code det_validate_ds}): none of them queues work. */
@Timeout(30)
class PostErrorsTest {

    @Test
    void shouldFailWithE2bigWhenMoreSegmentsThanTheQueueAllows() {
        try (Loopback pair = Loopback.open(new Loopback.Options().sges(2))) {
            final DataSegment[] three = segments(pair.mrA, 3, 8);
            assertErrno(Errno.E2BIG, () -> pair.qpA.send(1, three, 3, 0, 0));
            assertErrno(Errno.E2BIG, () -> pair.qpA.write(1, three, 3, pair.mrB.address(), pair.mrB.rKey(), 0, 0));
            assertErrno(Errno.E2BIG, () -> pair.qpA.read(1, three, 3, pair.mrB.address(), pair.mrB.rKey(), 0));
            assertErrno(Errno.E2BIG, () -> pair.qpA.recv(1, three, 3));
            assertErrno(Errno.E2BIG, () -> pair.qpA.sendInvalidate(1, three, 3, 0, 1));
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEaccesWhenSourceLacksLocalRead() {
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion writeOnly = pair.pdA.regMr(pair.arena.allocate(64), Access.LOCAL_WRITE);
            final DataSegment[] from = sge(writeOnly, 0, 8);
            assertErrno(Errno.EACCES, () -> pair.qpA.send(1, from, 1, 0, 0));
            assertErrno(Errno.EACCES, () -> pair.qpA.write(1, from, 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0));
            assertErrno(Errno.EACCES, () -> pair.qpA.sendInvalidate(1, from, 1, 0, 1));
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEaccesWhenDestinationLacksLocalWrite() {
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion readOnly = pair.pdA.regMr(pair.arena.allocate(64), Access.LOCAL_READ);
            final DataSegment[] into = sge(readOnly, 0, 8);
            assertErrno(Errno.EACCES, () -> pair.qpA.recv(1, into, 1));
            assertErrno(Errno.EACCES, () -> pair.qpA.read(1, into, 1, pair.mrB.address(), pair.mrB.rKey(), 0));
            assertErrno(Errno.EACCES, () -> pair.qpA.compExch(1, 0, 1, into[0], pair.mrB.address(),
                pair.mrB.rKey(), 0));
            assertErrno(Errno.EACCES, () -> pair.qpA.fetchAdd(1, 1, into[0], pair.mrB.address(), pair.mrB.rKey(),
                0));
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEinvalWhenFlagsAreUnknown() {
        try (Loopback pair = Loopback.open()) {
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            final long b = pair.mrB.address();
            final int rKey = pair.mrB.rKey();
            for (final int bad : new int[] {0x04, 0x80, 0x100, Integer.MIN_VALUE}) {
                assertErrno(Errno.EINVAL, () -> pair.qpA.send(1, eight, 1, bad, 0));
                assertErrno(Errno.EINVAL, () -> pair.qpA.write(1, eight, 1, b, rKey, bad, 0));
                assertErrno(Errno.EINVAL, () -> pair.qpA.read(1, eight, 1, b, rKey, bad));
                assertErrno(Errno.EINVAL, () -> pair.qpA.compExch(1, 0, 0, eight[0], b, rKey, bad));
                assertErrno(Errno.EINVAL, () -> pair.qpA.fetchAdd(1, 0, eight[0], b, rKey, bad));
                assertErrno(Errno.EINVAL, () -> pair.qpA.localInvalidate(1, 1, bad));
                assertErrno(Errno.EINVAL, () -> pair.qpA.sendInvalidate(1, eight, 1, bad, 1));
            }
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEinvalWhenArgumentsAreMalformed() {
        try (Loopback pair = Loopback.open()) {
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            final long b = pair.mrB.address();
            final int rKey = pair.mrB.rKey();
            assertErrno(Errno.EINVAL, () -> pair.qpA.read(1, eight, 0, b, rKey, 0), "a read of no segments");
            assertErrno(Errno.EINVAL, () -> pair.qpA.compExch(1, 0, 0, eight[0], b + 4, rKey, 0), "misaligned");
            assertErrno(Errno.EINVAL, () -> pair.qpA.fetchAdd(1, 0, eight[0], b + 1, rKey, 0), "misaligned");
            assertErrno(Errno.EINVAL, () -> pair.qpA.send(1, eight, -1, 0, 0), "a negative count");
            assertErrno(Errno.EINVAL, () -> pair.qpA.send(1, eight, 2, 0, 0), "a count beyond the array");
            assertErrno(Errno.EINVAL, () -> pair.qpA.send(1, new DataSegment[1], 1, 0, 0), "a null segment");
            assertErrno(Errno.EINVAL, () -> pair.qpA.recv(1, null, 1), "no array");
            assertErrno(Errno.EINVAL, () -> pair.qpA.sendInvalidate(1, eight, 1, WrFlags.IMMEDIATE, 1),
                "invalidate with immediate");
            assertErrno(Errno.EINVAL, () -> pair.qpA.fetchAdd(1, 0, null, b, rKey, 0), "no local segment");
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEnotconnWhenNotConnected() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            final long b = pair.mrB.address();
            final int rKey = pair.mrB.rKey();
            final MemoryWindow mw = pair.pdA.createMw(1);
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.send(1, eight, 1, 0, 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.write(1, eight, 1, b, rKey, 0, 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.read(1, eight, 1, b, rKey, 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.compExch(1, 0, 0, eight[0], b, rKey, 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.fetchAdd(1, 0, eight[0], b, rKey, 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.bind(1, mw, pair.mrA, pair.mrA.address(), 8,
                Access.REMOTE_READ, 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.localInvalidate(1, mw.rKey(), 0));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.sendInvalidate(1, eight, 1, 0, 1));
            pair.qpA.recv(1, eight, 1); // receives may be posted while IDLE
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            assertErrno(Errno.ENOTCONN, () -> pair.qpA.recv(2, eight, 1), "no receives in ERROR");
        }
    }

    @Test
    void shouldFailWithEnospcWhenSendQueueIsFull() {
        try (Loopback pair = Loopback.open(new Loopback.Options().depth(2, 2).connect(false))) {
            Loopback.connect(pair.qpA, pair.nicB, pair.qpB); // B stays IDLE: nothing completes
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            pair.qpA.send(1, eight, 1, 0, 0);
            pair.qpA.write(2, eight, 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            assertErrno(Errno.ENOSPC, () -> pair.qpA.send(3, eight, 1, 0, 0));
            assertErrno(Errno.ENOSPC, () -> pair.qpA.read(3, eight, 1, pair.mrB.address(), pair.mrB.rKey(), 0));
            assertErrno(Errno.ENOSPC, () -> pair.qpA.localInvalidate(3, 1, 0));
            pair.qpA.recv(4, eight, 1);
            pair.qpA.recv(5, eight, 1);
            assertErrno(Errno.ENOSPC, () -> pair.qpA.recv(6, eight, 1));
        }
    }

    @Test
    void shouldHoldSlotsOfSuppressedRequestsUntilSignaledCompletionIsPolled() {
        try (Loopback pair = Loopback.open(new Loopback.Options().depth(3, 1))) {
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            final long b = pair.mrB.address();
            final int rKey = pair.mrB.rKey();
            pair.qpA.write(1, eight, 1, b, rKey, WrFlags.SUPPRESSED, 0);
            pair.qpA.write(2, eight, 1, b, rKey, WrFlags.SUPPRESSED, 0);
            pair.qpA.write(3, eight, 1, b, rKey, 0, 0);
            assertErrno(Errno.ENOSPC, () -> pair.qpA.write(4, eight, 1, b, rKey, 0, 0));
            Tests.await("the signaled completion queued", () -> pair.cqA.query().depth() == 1);
            assertErrno(Errno.ENOSPC, () -> pair.qpA.write(4, eight, 1, b, rKey, 0, 0),
                "slots free when the completion is polled, not when it is queued");
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(3, wc.id());
            assertEquals(3, wc.reapCount(), "the signaled completion frees the two suppressed slots and its own");
            for (int i = 4; i <= 6; i++) {
                pair.qpA.write(i, eight, 1, b, rKey, 0, 0);
            }
            final List<WorkCompletion> wcs = Tests.expectSuccess(pair.cqA, 3);
            for (final WorkCompletion each : wcs) {
                assertEquals(1, each.reapCount());
            }
        }
    }

    @Test
    void shouldStayFullWhenOnlySuppressedRequestsCompleted() {
        try (Loopback pair = Loopback.open(new Loopback.Options().depth(2, 1))) {
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            final long b = pair.mrB.address();
            final int rKey = pair.mrB.rKey();
            pair.qpA.write(1, eight, 1, b, rKey, WrFlags.SUPPRESSED, 0);
            pair.qpA.write(2, eight, 1, b, rKey, WrFlags.SUPPRESSED, 0);
            Tests.await("both writes acknowledged", () -> pair.nicA.counters().get("wr.completed") == 2);
            Tests.assertNoCompletion(pair.cqA, 10);
            assertErrno(Errno.ENOSPC, () -> pair.qpA.write(3, eight, 1, b, rKey, 0, 0),
                "a send queue of suppressed requests never frees itself (DET's documented deadlock)");
        }
    }

    @Test
    void shouldFailWithEnxioWhenLocalKeyIsInvalid() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdA.createMw(1);
            final int windowKey = pair.qpA.bind(1, mw, pair.mrA, pair.mrA.address(), 64, Access.REMOTE_READ, 0);
            Tests.expectSuccess(pair.cqA, 1);
            final long at = pair.mrA.address();
            for (final int key : new int[] {0, 0x00ff_ff00, pair.mrA.rKey(), windowKey, pair.mrB.lKey() + 0x100}) {
                final DataSegment[] bad = {new DataSegment(at, 8, key)};
                assertErrno(Errno.ENXIO, () -> pair.qpA.send(1, bad, 1, 0, 0), "key 0x" + Integer.toHexString(key));
                assertErrno(Errno.ENXIO, () -> pair.qpA.recv(1, bad, 1), "key 0x" + Integer.toHexString(key));
            }
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEpermWhenRegionIsInAnotherDomain() {
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion foreign = pair.nicA.allocPd().regMr(pair.arena.allocate(64), Loopback.ALL_RIGHTS);
            final DataSegment[] from = sge(foreign, 0, 8);
            assertErrno(Errno.EPERM, () -> pair.qpA.send(1, from, 1, 0, 0));
            assertErrno(Errno.EPERM, () -> pair.qpA.recv(1, from, 1));
            assertErrno(Errno.EPERM, () -> pair.qpA.read(1, from, 1, pair.mrB.address(), pair.mrB.rKey(), 0));
            assertErrno(Errno.EPERM, () -> pair.qpA.fetchAdd(1, 1, from[0], pair.mrB.address(), pair.mrB.rKey(),
                0));
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithErangeWhenSegmentLeavesItsRegion() {
        try (Loopback pair = Loopback.open()) {
            final long length = pair.mrA.length();
            final int key = pair.mrA.lKey();
            final long start = pair.mrA.address();
            for (final DataSegment bad : new DataSegment[] {new DataSegment(start + length - 4, 8, key),
                new DataSegment(start - 1, 8, key), new DataSegment(start + length, 1, key),
                new DataSegment(start, -1, key)}) {
                assertErrno(Errno.ERANGE, () -> pair.qpA.send(1, new DataSegment[] {bad}, 1, 0, 0), bad.toString());
                assertErrno(Errno.ERANGE, () -> pair.qpA.recv(1, new DataSegment[] {bad}, 1), bad.toString());
            }
            pair.qpB.recv(3, sge(pair.mrB, 0, 8), 1);
            pair.qpA.send(2, new DataSegment[] {new DataSegment(start + length, 0, key)}, 1, WrFlags.SUPPRESSED,
                0); // an empty segment at the very end is inside
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEnobufsWhenMaxOrIsZero() {
        try (Loopback pair = Loopback.open(new Loopback.Options().maxOr(0))) {
            final DataSegment[] eight = sge(pair.mrA, 0, 8);
            assertErrno(Errno.ENOBUFS, () -> pair.qpA.read(1, eight, 1, pair.mrB.address(), pair.mrB.rKey(), 0));
            assertErrno(Errno.ENOBUFS, () -> pair.qpA.compExch(1, 0, 1, eight[0], pair.mrB.address(),
                pair.mrB.rKey(), 0));
            assertErrno(Errno.ENOBUFS, () -> pair.qpA.fetchAdd(1, 1, eight[0], pair.mrB.address(),
                pair.mrB.rKey(), 0));
            stillWorks(pair);
        }
    }

    @Test
    void shouldFailWithEoverflowWhenAtomicResultBufferIsShort() {
        try (Loopback pair = Loopback.open()) {
            final DataSegment four = new DataSegment().set(pair.mrA, 0, 4);
            assertErrno(Errno.EOVERFLOW, () -> pair.qpA.compExch(1, 0, 1, four, pair.mrB.address(),
                pair.mrB.rKey(), 0));
            assertErrno(Errno.EOVERFLOW, () -> pair.qpA.fetchAdd(1, 1, four, pair.mrB.address(), pair.mrB.rKey(),
                0));
            stillWorks(pair);
        }
    }

    /** A refused post queues nothing: the next good send is the only completion. */
    private static void stillWorks(final Loopback pair) {
        final MemorySegment from = pair.bufA.asSlice(0, 16);
        Tests.fill(from, 99);
        pair.qpB.recv(500, sge(pair.mrB, 4096, 16), 1);
        pair.qpA.send(600, sge(pair.mrA, 0, 16), 1, 0, 0);
        final WorkCompletion atA = Tests.pollOne(pair.cqA);
        assertEquals(600, atA.id(), "no refused post left a work request behind");
        assertEquals(WcStatus.SUCCESS, atA.status());
        final WorkCompletion atB = Tests.pollOne(pair.cqB);
        assertEquals(500, atB.id());
        Tests.assertSameBytes(from, pair.bufB.asSlice(4096, 16));
        Tests.assertNoCompletion(pair.cqA, 5);
    }

    private static DataSegment[] segments(final MemoryRegion mr, final int n, final int each) {
        final DataSegment[] segments = new DataSegment[n];
        for (int i = 0; i < n; i++) {
            segments[i] = new DataSegment().set(mr, (long) i * each, each);
        }
        return segments;
    }
}
