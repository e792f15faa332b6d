package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Window rules from the man pages not covered by {@link MemoryWindowTest}: the order of det_bind's errors where
 * several apply (det.md 3.2: EPERM, then EINVAL, then ERANGE, then EACCES), a type 2 bind granting no right
 * (ibv_bind_mw: mw_access_flags "is either 0 or the bitwise OR ..."), and what det_query_mw reports.
 */
@Timeout(30)
class MemoryWindowRulesTest {
    private static final int RW = Access.REMOTE_READ | Access.REMOTE_WRITE;

    @Test
    void shouldReportBindErrorsInDetOrderWhenSeveralApply() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(1);
            final MemoryRegion mr = pair.mrB;
            final long at = mr.address();
            final MemoryRegion noBind = pair.pdB.regMr(pair.arena.allocate(64), Access.LOCAL_READ
                | Access.LOCAL_WRITE);
            // ERANGE comes before any EACCES, "no remote right" included
            assertErrno(Errno.ERANGE, () -> pair.qpB.bind(1, mw, mr, at - 1, 8, 0, 0), "outside, no right");
            // EINVAL (ZERO_BASED on type 1, an invalid parameter) comes before ERANGE and EACCES
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, mw, mr, at - 1, 8, RW | Access.ZERO_BASED, 0),
                "zero-based and outside");
            assertErrno(Errno.EINVAL, () -> pair.qpB.bind(1, mw, noBind, noBind.address(), 8,
                RW | Access.ZERO_BASED, 0), "zero-based and no MW_BIND");
            Tests.assertNoCompletion(pair.cqB, 5);
        }
    }

    @Test
    void shouldBindType2WindowThatGrantsNothingWhenAccessIsZero() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int key = (mw.rKey() & ~0xff) | ((mw.rKey() + 1) & 0xff);
            pair.qpB.bindType2(1, mw, key, pair.mrB, pair.mrB.address(), 256, 0, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            assertEquals(256, mw.query().length());
            assertEquals(0, mw.query().access());
            assertEquals(WcStatus.ACCESS_ERR, pair.writeAtoB(pair.mrB.address(), key, 8).status(),
                "a window bound with no right grants nothing");
        }
    }

    @Test
    void shouldReportZeroBasedInQueriedAccessWhenType2WindowIsZeroBased() {
        try (Loopback pair = Loopback.open()) {
            final MemoryWindow mw = pair.pdB.createMw(2);
            final int key = (mw.rKey() & ~0xff) | ((mw.rKey() + 1) & 0xff);
            pair.qpB.bindType2(1, mw, key, pair.mrB, pair.mrB.address() + 64, 256, RW | Access.ZERO_BASED, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            assertEquals(RW | Access.ZERO_BASED, mw.query().access(), "the rights the window was bound with");
        }
    }
}
