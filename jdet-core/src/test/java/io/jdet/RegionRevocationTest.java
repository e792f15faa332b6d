package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code mr.modify} revokes the region's old keys and domain at once, for work already posted too (issue 8, item
 * 6): a receive posted before the region moved to another protection domain, or got new keys, completes with an
 * error and no byte of the peer's send lands in it.
 */
class RegionRevocationTest {
    private static final int LENGTH = 256;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldFailPostedReceiveWithoutPlacingAByteWhenItsRegionIsModified(final boolean otherDomain) {
        try (Loopback pair = Loopback.open()) {
            pair.bufB.asSlice(0, LENGTH).fill((byte) 0x11);
            pair.bufA.asSlice(0, LENGTH).fill((byte) 0x77);
            pair.qpB.recv(1, sge(pair.mrB, 0, LENGTH), 1);
            final ProtectionDomain other = otherDomain ? pair.nicB.allocPd() : null;
            try {
                pair.mrB.modify(other, -1); // other == null: same domain, new keys
                pair.qpA.send(2, sge(pair.mrA, 0, LENGTH), 1, 0, 0);
                final WorkCompletion received = Tests.pollOne(pair.cqB);
                assertEquals(1, received.id());
                assertEquals(WcStatus.LOCAL_PROTECTION_ERR, received.status(), received.toString());
                assertEquals(WcStatus.REMOTE_OP_ERR, Tests.pollOne(pair.cqA).status());
                final MemorySegment landed = pair.bufB.asSlice(0, LENGTH);
                for (long i = 0; i < LENGTH; i++) {
                    assertEquals((byte) 0x11, landed.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i),
                        "byte " + i + " of the peer's send landed in a revoked receive");
                }
            } finally {
                if (other != null) {
                    pair.mrB.modify(pair.pdB, -1); // back, so that the fixture closes cleanly
                    other.close();
                }
            }
        }
    }

    @Test
    void shouldStillReceiveIntoReceivePostedAfterTheModify() {
        try (Loopback pair = Loopback.open()) {
            pair.mrB.modify(null, -1);
            pair.bufA.asSlice(0, LENGTH).fill((byte) 0x77);
            pair.qpB.recv(1, sge(pair.mrB, 0, LENGTH), 1);
            pair.qpA.send(2, sge(pair.mrA, 0, LENGTH), 1, 0, 0);
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
            assertEquals((byte) 0x77, pair.bufB.get(java.lang.foreign.ValueLayout.JAVA_BYTE, LENGTH - 1));
        }
    }
}
