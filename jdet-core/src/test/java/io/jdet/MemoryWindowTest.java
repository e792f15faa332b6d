package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Memory windows of both types ({@code det_bind}, {@code ibv_bind_mw}, {@code IBV_WR_BIND_MW}, local and remote
 * invalidation): B binds windows over its region, A uses them.
 */
@Timeout(30)
class MemoryWindowTest {
    private static final int RW = Access.REMOTE_READ | Access.REMOTE_WRITE;

    @Test
    void shouldGrantAccessThroughFreshKeyWhenType1WindowIsBound() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            assertEquals(1, mw.type());
            final int unbound = mw.rKey();
            assertEquals(0, mw.query().length(), "a new window is unbound");
            final long start = pair.mrB.address() + 4096;
            final int key = pair.qpB.bind(11, mw, pair.mrB, start, 512, RW, 0);
            assertNotEquals(unbound, key);
            assertNotEquals(pair.mrB.rKey(), key);
            assertEquals(key, mw.rKey());
            final WorkCompletion bound = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.SUCCESS, bound.status());
            assertEquals(WcType.BIND, bound.type());
            assertEquals(11, bound.id());
            assertEquals(0, bound.length(), "a bind completes with length 0");
            final MwAttributes a = mw.query();
            assertEquals(start, a.address());
            assertEquals(512, a.length());
            assertEquals(RW, a.access());
            assertEquals(key, a.rKey());
            assertSame(pair.pdB, a.pd());

            Tests.fill(pair.bufA.asSlice(0, 512), 1);
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(start, key, 512).status());
            Tests.assertSameBytes(pair.bufA.asSlice(0, 512), pair.bufB.asSlice(4096, 512));
            Tests.fill(pair.bufB.asSlice(4096 + 256, 256), 2);
            pair.qpA.read(3, sge(pair.mrA, 1024, 256), 1, start + 256, key, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            Tests.assertSameBytes(pair.bufB.asSlice(4096 + 256, 256), pair.bufA.asSlice(1024, 256));
        }
    }

    @Test
    void shouldRefuseStaleKeyWhenType1WindowIsRebound() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final long start = pair.mrB.address();
            final int first = pair.qpB.bind(1, mw, pair.mrB, start, 256, RW, 0);
            final int second = pair.qpB.bind(2, mw, pair.mrB, start, 256, RW, 0);
            assertNotEquals(first, second, "every bind gives a fresh key");
            Tests.expectSuccess(pair.cqB, 2);
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(start, second, 8).status());
            final WorkCompletion stale = pair.writeAtoB(start, first, 8);
            assertEquals(WcStatus.PROTECTION_ERR, stale.status());
            pair.awaitBothInError();
        }
    }

    @Test
    void shouldRefuseKeyWhenType1WindowIsUnbound() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final int key = pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address(), 64, RW, 0);
            final int unboundKey = pair.qpB.bind(2, mw, null, 0, 0, 0, 0);
            assertNotEquals(key, unboundKey);
            Tests.expectSuccess(pair.cqB, 2);
            assertEquals(0, mw.query().length());
            pair.mrB.close(); // no window is bound to it any more
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(pair.mrB.address(), key, 8).status());
        }
    }

    @Test
    void shouldRefuseUnboundKeyWhenWindowWasNeverBound() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(pair.mrB.address(), mw.rKey(), 8).status());
        }
    }

    @Test
    void shouldFailWithBoundsErrWhenWriteIsInsideRegionButOutsideWindow() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final long start = pair.mrB.address() + 1024;
            final int key = pair.qpB.bind(1, mw, pair.mrB, start, 256, RW, 0);
            Tests.expectSuccess(pair.cqB, 1);
            pair.bufB.set(ValueLayout.JAVA_LONG, 1024 + 256, 0);
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, -1);
            assertEquals(WcStatus.BOUNDS_ERR, pair.writeAtoB(start + 252, key, 8).status());
            assertEquals(0, pair.bufB.get(ValueLayout.JAVA_LONG, 1024 + 256), "nothing written past the window");
            pair.awaitBothInError();
        }
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final long start = pair.mrB.address() + 1024;
            final int key = pair.qpB.bind(1, mw, pair.mrB, start, 256, RW, 0);
            Tests.expectSuccess(pair.cqB, 1);
            assertEquals(WcStatus.BOUNDS_ERR, pair.writeAtoB(start - 8, key, 8).status());
        }
    }

    @Test
    void shouldFailWithAccessErrWhenWindowLacksTheRight() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final int key = pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address(), 256, Access.REMOTE_READ, 0);
            Tests.expectSuccess(pair.cqB, 1);
            assertEquals(WcStatus.ACCESS_ERR, pair.writeAtoB(pair.mrB.address(), key, 8).status());
        }
    }

    @Test
    void shouldRefuseDeregAndModifyWithEbusyWhileWindowIsBound() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address(), 64, RW, 0);
            Tests.expectSuccess(pair.cqB, 1);
            assertErrno(Errno.EBUSY, pair.mrB::close);
            assertErrno(Errno.EBUSY, () -> pair.mrB.modify(null, -1));
            pair.qpB.bind(2, mw, null, 0, 0, 0, 0);
            Tests.expectSuccess(pair.cqB, 1);
            pair.mrB.modify(null, -1);
            pair.mrB.close();
        }
    }

    @Test
    void shouldKillKeyAndReleaseRegionWhenBoundWindowIsDestroyed() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final int key = pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address(), 64, RW, 0);
            Tests.expectSuccess(pair.cqB, 1);
            mw.close();
            mw.close(); // twice does nothing
            assertThrows(IllegalStateException.class, mw::query);
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(pair.mrB.address(), key, 8).status());
            pair.mrB.close(); // the window no longer holds it
        }
    }

    @Test
    void shouldFailWithErrnoWhenType1BindIsInvalid() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final MemoryRegion mr = pair.mrB;
            final long at = mr.address();
            final int before = mw.rKey();
            final ProtectionDomain other = pair.nicB.allocPd();
            final MemoryWindow foreignWindow = other.createMw(1);
            final MemoryRegion foreignRegion = other.regMr(pair.arena.allocate(64), Loopback.ALL_RIGHTS);
            assertErrno(Errno.EPERM, () -> pair.qpB.bind(1, foreignWindow, mr, at, 8, RW, 0), "window's domain");
            assertErrno(Errno.EPERM, () -> pair.qpB.bind(1, mw, foreignRegion, foreignRegion.address(), 8, RW, 0),
                "region's domain");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, pair.pdB.createMw(2), mr, at, 8, RW, 0), "type 2");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, mw, mr, at, (1L << 31) + 1, RW, 0), "too long");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, mw, mr, at, 8, RW | 0x40, 0), "unknown bits");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, mw, mr, at, 8, RW | Access.LOCAL_WRITE, 0),
                "a local right");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, mw, mr, at, 8, RW | Access.ZERO_BASED, 0),
                "zero-based type 1");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, mw, mr, at, 8, RW, 0x80), "unknown flags");
            assertErrno(Errno.ERANGE, () -> pair.qpB.bind(1, mw, mr, at + mr.length() - 4, 8, RW, 0), "past end");
            assertErrno(Errno.ERANGE, () -> pair.qpB.bind(1, mw, mr, at - 1, 8, RW, 0), "before start");
            assertErrno(Errno.EACCES, () -> pair.qpB.bind(1, mw, mr, at, 8, 0, 0), "no remote right");
            final MemoryRegion noBind = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_READ
                | Access.LOCAL_WRITE);
            assertErrno(Errno.EACCES, () -> pair.qpB.bind(1, mw, noBind, noBind.address(), 8, RW, 0), "no MW_BIND");
            final MemoryRegion readOnly = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_READ
                | Access.MW_BIND);
            assertErrno(Errno.EACCES, () -> pair.qpB.bind(1, mw, readOnly, readOnly.address(), 8,
                Access.REMOTE_WRITE, 0), "REMOTE_WRITE without LOCAL_WRITE");
            assertErrno(Errno.EACCES, () -> pair.qpB.bind(1, mw, readOnly, readOnly.address(), 8,
                Access.REMOTE_ATOMIC, 0), "REMOTE_ATOMIC without LOCAL_WRITE");
            final MemoryRegion writeOnly = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_WRITE
                | Access.MW_BIND);
            assertErrno(Errno.EACCES, () -> pair.qpB.bind(1, mw, writeOnly, writeOnly.address(), 8,
                Access.REMOTE_READ, 0), "REMOTE_READ without LOCAL_READ");
            assertEquals(before, mw.rKey(), "a refused bind leaves the key alone");
            Tests.assertNoCompletion(pair.cqB, 5);
            // a window may grant REMOTE_WRITE over a region that has only LOCAL_WRITE and MW_BIND
            final int key = pair.qpB.bind(2, mw, writeOnly, writeOnly.address(), 8, Access.REMOTE_WRITE, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, 99);
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(writeOnly.address(), key, 8).status());
            assertEquals(99, writeOnly.segment().get(ValueLayout.JAVA_LONG, 0));
        }
    }

    @Test
    void shouldCheckQueueBeforeChangingAnythingWhenBinding() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final int before = mw.rKey();
            assertErrno(Errno.ENOTCONN, () -> pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address(), 8, RW, 0));
            assertEquals(before, mw.rKey());
            assertEquals(0, mw.query().length());
        }
    }

    @Test
    void shouldFailWithErrnoWhenType2BindIsInvalid() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final MemoryRegion mr = pair.mrB;
            final long at = mr.address();
            final int key = next(mw.rKey());
            final MemoryWindow type1 = pair.pdB.createMw(1);
            final MemoryWindow another = pair.pdB.createMw(2);
            assertErrno(Errno.EINVAL, () -> pair.qpB.bindType2(1, type1, next(type1.rKey()), mr, at, 8, RW, 0),
                "type 1");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bindType2(1, mw, key, mr, at, 0, RW, 0), "length 0");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bindType2(1, mw, next(another.rKey()), mr, at, 8, RW, 0),
                "another window's key");
            assertErrno(Errno.ERANGE, () -> pair.qpB.bindType2(1, mw, key, mr, at + 8, mr.length(), RW, 0));
            final MemoryWindow foreign = pair.nicB.allocPd().createMw(2);
            assertErrno(Errno.EPERM, () -> pair.qpB.bindType2(1, foreign, next(foreign.rKey()), mr, at, 8, RW, 0));
            Tests.assertNoCompletion(pair.cqB, 5);
        }
    }

    @Test
    void shouldAddressFromWindowStartWhenType2WindowIsZeroBased() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int key = next(mw.rKey());
            pair.qpB.bindType2(1, mw, key, pair.mrB, pair.mrB.address() + 2048, 256, RW | Access.ZERO_BASED, 0);
            final WorkCompletion bound = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.SUCCESS, bound.status());
            assertEquals(WcType.BIND, bound.type());
            assertEquals(key, mw.rKey());
            Tests.fill(pair.bufA.asSlice(0, 64), 3);
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(16, key, 64).status());
            Tests.assertSameBytes(pair.bufA.asSlice(0, 64), pair.bufB.asSlice(2048 + 16, 64));
            pair.qpA.read(2, sge(pair.mrA, 512, 256), 1, 0, key, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            Tests.assertSameBytes(pair.bufB.asSlice(2048, 256), pair.bufA.asSlice(512, 256));
            assertEquals(WcStatus.BOUNDS_ERR, pair.writeAtoB(252, key, 8).status(), "past the window's end");
        }
    }

    @Test
    void shouldRefuseKeyWhenType2WindowIsInvalidatedLocally() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int key = next(mw.rKey());
            pair.qpB.bindType2(1, mw, key, pair.mrB, pair.mrB.address(), 256, RW, 0);
            pair.qpB.localInvalidate(2, key, 0);
            final WorkCompletion invalidated = Tests.expectSuccess(pair.cqB, 2).get(1);
            assertEquals(WcStatus.SUCCESS, invalidated.status());
            assertEquals(WcType.LOCAL_INVALIDATE, invalidated.type());
            assertEquals(0, mw.query().length());
            pair.mrB.modify(null, -1); // no window is bound to it any more
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(pair.mrB.address(), key, 8).status());
        }
    }

    @Test
    void shouldBindAgainWithNewTagWhenType2WindowWasInvalidated() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int first = next(mw.rKey());
            pair.qpB.bindType2(1, mw, first, pair.mrB, pair.mrB.address(), 256, RW, 0);
            pair.qpB.localInvalidate(2, first, 0);
            final int second = next(first);
            pair.qpB.bindType2(3, mw, second, pair.mrB, pair.mrB.address(), 256, RW, 0);
            for (final WorkCompletion wc : pair.pollB(3)) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(pair.mrB.address(), second, 8).status());
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(pair.mrB.address(), first, 8).status());
        }
    }

    @Test
    void shouldInvalidateKeyAtPeerWhenSentWithInvalidate() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int key = next(mw.rKey());
            pair.qpB.bindType2(1, mw, key, pair.mrB, pair.mrB.address(), 256, RW, 0);
            Tests.expectSuccess(pair.cqB, 1);
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(pair.mrB.address(), key, 8).status());
            Tests.fill(pair.bufA.asSlice(0, 32), 4);
            pair.qpB.recv(2, sge(pair.mrB, 1024, 32), 1);
            pair.qpA.sendInvalidate(3, sge(pair.mrA, 0, 32), 1, WrFlags.SOLICITED, key);
            final WorkCompletion atA = Tests.pollOne(pair.cqA);
            assertEquals(WcStatus.SUCCESS, atA.status());
            assertEquals(WcType.SEND, atA.type());
            final WorkCompletion atB = Tests.pollOne(pair.cqB);
            assertEquals(WcStatus.SUCCESS, atB.status());
            assertEquals(WcType.RECV, atB.type());
            assertEquals(32, atB.length());
            assertEquals(WcFlags.INVALIDATED, atB.flags() & WcFlags.INVALIDATED);
            assertEquals(0, atB.flags() & WcFlags.IMMEDIATE);
            assertEquals(key, atB.invalidatedRKey());
            Tests.assertSameBytes(pair.bufA.asSlice(0, 32), pair.bufB.asSlice(1024, 32));
            assertEquals(0, mw.query().length(), "the window is unbound");
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(pair.mrB.address(), key, 8).status());
        }
    }

    @Test
    void shouldRefuseType2WindowWhenUsedThroughAnotherQueuePair() {
        try (Loopback pair = Loopback.open()) {
            final QueuePair[] second = secondConnection(pair);
            final QueuePair a2 = second[0];
            final int key = boundType2OnB(pair).rKey();
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(pair.mrB.address(), key, 8).status());
            a2.write(2, sge(pair.mrA, 0, 8), 1, pair.mrB.address(), key, 0, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertSame(a2, wc.queuePair());
            assertEquals(WcStatus.PROTECTION_ERR, wc.status());
        }
    }

    /**
     * A type 2 window is reached only through the queue pair it is bound to (above); its remote invalidation too: a
     * peer connected through another queue pair of the same domain must not unbind it (another client's window).
     */
    @Test
    void shouldRefuseRemoteInvalidationOfAType2WindowThroughAnotherQueuePair() {
        try (Loopback pair = Loopback.open()) {
            final QueuePair[] second = secondConnection(pair);
            final QueuePair a2 = second[0];
            final QueuePair b2 = second[1];
            final MemoryWindow mw = boundType2OnB(pair);
            final int key = mw.rKey();
            b2.recv(2, sge(pair.mrB, 1024, 32), 1);
            a2.sendInvalidate(3, sge(pair.mrA, 0, 32), 1, 0, key);
            final WorkCompletion atA = Tests.pollOne(pair.cqA);
            assertSame(a2, atA.queuePair());
            assertEquals(WcStatus.INVALID_REQUEST, atA.status(), "the peer could not invalidate the key");
            final WorkCompletion atB = Tests.pollOne(pair.cqB);
            assertSame(b2, atB.queuePair());
            assertEquals(WcStatus.INVALID_REQUEST, atB.status());
            assertEquals(256, mw.query().length(), "the window stays bound");
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(pair.mrB.address(), key, 8).status(),
                "and reachable through its own queue pair");
        }
    }

    @Test
    void shouldRefuseType1WindowWhenInvalidatedLocally() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final int key = pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address(), 64, RW, 0);
            pair.qpB.localInvalidate(2, key, 0);
            final WorkCompletion wc = pair.pollB(2).get(1);
            assertEquals(WcStatus.LOCAL_OP_ERR, wc.status(), "type 1 windows are not invalidated by LOCAL_INV");
        }
    }

    /** A second connection between the same NICs and domains: its queue pairs at A and at B. */
    private static QueuePair[] secondConnection(final Loopback pair) {
        final QueuePair a2 = pair.pdA.createQp(QpCreate.of(pair.cqA, 8, 1));
        final QueuePair b2 = pair.pdB.createQp(QpCreate.of(pair.cqB, 8, 1));
        Loopback.connect(a2, pair.nicB, b2);
        Loopback.connect(b2, pair.nicA, a2);
        return new QueuePair[] {a2, b2};
    }

    /** A type 2 window at B bound through B's first queue pair to 256 bytes of B's region, read and write. */
    private static MemoryWindow boundType2OnB(final Loopback pair) {
        final MemoryWindow mw = pair.pdB.createMw(2);
        pair.qpB.bindType2(1, mw, next(mw.rKey()), pair.mrB, pair.mrB.address(), 256, RW, 0);
        Tests.expectSuccess(pair.cqB, 1);
        return mw;
    }

    private static int next(final int key) {
        return (key & ~0xff) | ((key + 1) & 0xff);
    }
    /** Holds B's send queue behind a send A has no receive for, until A posts one: what comes after waits. */
    private static void holdBsSendQueue(final Loopback pair) {
        pair.qpB.send(1, sge(pair.mrB, 0, 16), 1, 0, 0);
        Tests.await("A refused B's send (no receive)", () -> pair.nicB.counters().get("rnr.naks.received") > 0);
    }

    @Test
    void aBindThatRunsAfterItsRegionWasMovedOrChangedFailsAndGrantsNothing() {
        // Posted while the region was bindable, run after it moved to another domain without MW_BIND or remote
        // rights: the bind must be checked again as it runs, or the window opens a region the peer may not touch.
        final Configuration slowRetries = new Configuration().rnrDelayUs(500_000).rnrRetryCount(7);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(slowRetries))) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final MemoryRegion region = pair.pdB.regMr(pair.arena.allocate(4096, 64), Loopback.ALL_RIGHTS);
            holdBsSendQueue(pair);
            final int before = mw.rKey();
            final int key = pair.qpB.bind(2, mw, region, region.address(), 256, RW, 0);
            assertEquals(key, mw.rKey(), "the key the post returned, until the bind's outcome");
            region.modify(pair.nicB.allocPd(), Access.LOCAL_READ | Access.LOCAL_WRITE);
            pair.qpA.recv(9, sge(pair.mrA, 4096, 64), 1);
            final java.util.List<WorkCompletion> b = Tests.pollUntil(pair.cqB, 2);
            assertEquals(2, b.get(1).id());
            assertEquals(WcStatus.BIND_ERR, b.get(1).status(), b.get(1).toString()); // and the queue pair fails
            assertEquals(0, mw.query().length(), "the window is not bound");
            assertEquals(before, mw.rKey(), "the key in force again, not the failed bind's");
            region.close(); // no window holds it
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, 0x1234L);
            final QueuePair a2 = pair.pdA.createQp(QpCreate.of(pair.cqA, 8, 1));
            final QueuePair b2 = pair.pdB.createQp(QpCreate.of(pair.cqB, 8, 1));
            Loopback.connect(a2, pair.nicB, b2);
            Loopback.connect(b2, pair.nicA, a2);
            a2.write(5, sge(pair.mrA, 0, 8), 1, region.address(), key, 0, 0);
            WorkCompletion wc;
            do {
                wc = Tests.pollOne(pair.cqA); // A's receive (flushed or not) may come first
            } while (wc.id() != 5);
            assertNotEquals(WcStatus.SUCCESS, wc.status(), "a write through the failed bind's key: " + wc);
        }
    }

    @Test
    void aBindThatRanButCompletesFlushedLeavesItsKeyDead() {
        // A bind takes effect as it is admitted (so the requests behind it may use its key), but here it completes
        // FLUSHED behind a send that never finished: the application takes the bind as failed, so its key must
        // grant nothing (ibv_bind_mw: do not hand out a key before its successful completion).
        final Configuration slowRetries = new Configuration().rnrDelayUs(500_000).rnrRetryCount(7);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(slowRetries))) {
            final QueuePair a2 = pair.pdA.createQp(QpCreate.of(pair.cqA, 8, 1));
            final QueuePair b2 = pair.pdB.createQp(QpCreate.of(pair.cqB, 8, 1));
            Loopback.connect(a2, pair.nicB, b2);
            Loopback.connect(b2, pair.nicA, a2);
            final MemoryWindow mw = pair.pdB.createMw(1);
            holdBsSendQueue(pair);
            final int key = pair.qpB.bind(2, mw, pair.mrB, pair.mrB.address() + 1024, 256, RW, 0);
            Tests.await("the bind ran", () -> mw.query().length() == 256);
            pair.qpB.modify(new QpModify().state(QpState.ERROR));
            for (final WorkCompletion wc : Tests.pollUntil(pair.cqB, 2)) {
                assertEquals(WcStatus.FLUSHED, wc.status(), wc.toString());
            }
            assertEquals(0, mw.query().length(), "taken back");
            pair.bufB.set(ValueLayout.JAVA_LONG, 1024, 0);
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, 0x77L);
            a2.write(5, sge(pair.mrA, 0, 8), 1, pair.mrB.address() + 1024, key, 0, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertNotEquals(WcStatus.SUCCESS, wc.status(), "a write through the flushed bind's key: " + wc);
            assertEquals(0, pair.bufB.get(ValueLayout.JAVA_LONG, 1024));
        }
    }
}
