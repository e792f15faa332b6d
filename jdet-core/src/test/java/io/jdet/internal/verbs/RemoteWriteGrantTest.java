package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.MemoryRegion;
import io.jdet.QpCreate;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * {@link MwImpl#grantRemoteWrite}, the window a collective's rendezvous opens on its destination: remote write on
 * exactly the granted range, through the granted queue pair alone, until revoked; no {@code MW_BIND} or remote right
 * needed on the region, and the region stays free to go.
 */
@Timeout(30)
class RemoteWriteGrantTest {
    /** B's region for the grants: local rights only, as a collective's destination has. */
    private static final int LOCAL = Access.LOCAL_READ | Access.LOCAL_WRITE;

    /** A region of B with local rights only, a window of B's domain, and the key of a grant on part of it. */
    private record Granted(MemoryRegion local, MwImpl window, int key) {
    }

    /** Registers B's region, opens the window and grants {@code length} bytes from {@code offset} to B's queue pair. */
    private static Granted granted(final Loopback pair, final long offset, final long length) {
        final MemoryRegion local = pair.pdB.regMr(pair.arena.allocate(4096, 64), LOCAL);
        final MwImpl window = (MwImpl) pair.pdB.createMw(2);
        return new Granted(local, window, grant(pair, window, local, offset, length));
    }

    @Test
    void aGrantOpensTheRangeToWritesThroughItsQueuePairAlone() {
        try (Loopback pair = Loopback.open()) {
            final Granted g = granted(pair, 1024, 512);
            final MemoryRegion local = g.local();
            final int key = g.key();
            Tests.fill(pair.bufA.asSlice(0, 512), 3);
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(local.address() + 1024, key, 512).status());
            Tests.assertSameBytes(pair.bufA.asSlice(0, 512), local.segment().asSlice(1024, 512));

            final QueuePair a2 = pair.pdA.createQp(QpCreate.of(pair.cqA, 8, 1));
            final QueuePair b2 = pair.pdB.createQp(QpCreate.of(pair.cqB, 8, 1));
            Loopback.connect(a2, pair.nicB, b2);
            Loopback.connect(b2, pair.nicA, a2);
            a2.write(2, sge(pair.mrA, 0, 8), 1, local.address() + 1024, key, 0, 0);
            final WorkCompletion other = Tests.pollOne(pair.cqA);
            assertSame(a2, other.queuePair());
            assertEquals(WcStatus.PROTECTION_ERR, other.status(), "another queue pair of the domain");
        }
    }

    @Test
    void aGrantIsWriteOnlyAndBoundedByItsRange() {
        try (Loopback pair = Loopback.open()) {
            final Granted g = granted(pair, 1024, 512);
            assertEquals(WcStatus.BOUNDS_ERR, pair.writeAtoB(g.local().address() + 1024 + 256, g.key(), 512).status(),
                "a write past the granted range");
        }
        try (Loopback pair = Loopback.open()) {
            final Granted g = granted(pair, 1024, 512);
            pair.qpA.read(3, sge(pair.mrA, 0, 8), 1, g.local().address() + 1024, g.key(), 0);
            assertEquals(WcStatus.ACCESS_ERR, Tests.pollOne(pair.cqA).status(), "a read through a write grant");
        }
    }

    @Test
    void aRevokedGrantRefusesItsKeyAndTheNextGrantIsAFreshOne() {
        try (Loopback pair = Loopback.open()) {
            final Granted g = granted(pair, 0, 64);
            final MemoryRegion local = g.local();
            final MwImpl window = g.window();
            final int first = g.key();
            revoke(pair, window);
            final int second = grant(pair, window, local, 0, 64);
            assertNotEquals(first, second);
            assertEquals(WcStatus.SUCCESS, pair.writeAtoB(local.address(), second, 64).status());
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(local.address(), first, 64).status(),
                "the key of a revoked grant");
        }
    }

    /** The region does not count a grant as a bound window: it deregisters (no EBUSY), and the key then fails. */
    @Test
    void theRegionStaysFreeToGoAndItsGrantFailsThen() {
        try (Loopback pair = Loopback.open()) {
            final Granted g = granted(pair, 0, 64);
            g.local().close();
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(g.local().address(), g.key(), 64).status());
            g.window().close(); // a grant in force when the window closes ends with it, leaving no count behind
        }
    }

    /** Re-keying the region (modify: new rights, perhaps another domain) ends the grant as deregistering does. */
    @Test
    void aReKeyedRegionsGrantFails() {
        try (Loopback pair = Loopback.open()) {
            final MemoryRegion local = pair.pdB.regMr(pair.arena.allocate(4096, 64), LOCAL);
            final MwImpl window = (MwImpl) pair.pdB.createMw(2);
            final int key = grant(pair, window, local, 0, 64);
            local.modify(null, Access.LOCAL_READ);
            assertEquals(WcStatus.PROTECTION_ERR, pair.writeAtoB(local.address(), key, 64).status());
            assertEquals(0, local.segment().get(java.lang.foreign.ValueLayout.JAVA_LONG, 0), "bytes written");
        }
    }

    private static int grant(final Loopback pair, final MwImpl window, final MemoryRegion mr, final long offset,
                             final long length) {
        final NicImpl nic = (NicImpl) pair.nicB;
        nic.lock.lock();
        try {
            return window.grantRemoteWrite((QpImpl) pair.qpB, (MrImpl) mr, mr.address() + offset, length);
        } finally {
            nic.lock.unlock();
        }
    }

    private static void revoke(final Loopback pair, final MwImpl window) {
        final NicImpl nic = (NicImpl) pair.nicB;
        nic.lock.lock();
        try {
            window.revokeGrant();
        } finally {
            nic.lock.unlock();
        }
    }
}
