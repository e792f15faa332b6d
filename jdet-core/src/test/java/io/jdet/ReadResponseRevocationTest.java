package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A key revoked while a read response is still unacknowledged reads nothing more: the resend (or the first sending
 * of a later frame) checks the key again, and the read fails with a NAK instead of carrying what the memory holds
 * after the revocation (ibverbs.md 2.1 and 2.6: a window's key dies at once; {@code MemoryRegion.modify}: the old
 * keys stop working at once). The peer never acknowledges, so the victim resends.
 */
@Timeout(60)
class ReadResponseRevocationTest {
    private static final long BEFORE = 0x1111L;
    private static final long SECRET = 0x5EC12E7_5EC12E7L;

    @Test
    void shouldStopReadingWhenTheRegionLosesItsRemoteRights() {
        try (HostileSetup s = new HostileSetup()) {
            readThenRevoke(s, s.lo.mrA.rKey(), () -> s.lo.mrA.modify(null, Access.LOCAL_READ | Access.LOCAL_WRITE));
        }
    }

    @Test
    void shouldStopReadingWhenTheRegionIsReKeyed() {
        try (HostileSetup s = new HostileSetup()) {
            readThenRevoke(s, s.lo.mrA.rKey(), () -> s.lo.mrA.modify(null,
                Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ | Access.MW_BIND));
        }
    }

    @Test
    void shouldStopReadingWhenTheWindowIsDestroyed() {
        try (HostileSetup s = new HostileSetup()) {
            final MemoryWindow mw = s.lo.pdA.createMw(1);
            final int key = s.qp().bind(1, mw, s.lo.mrA, s.lo.bufA.address(), 64, Access.REMOTE_READ, 0);
            Tests.expectSuccess(s.lo.cqA, 1);
            readThenRevoke(s, key, mw::close);
        }
    }

    @Test
    void shouldStopReadingWhenTheWindowIsUnbound() {
        try (HostileSetup s = new HostileSetup()) {
            final MemoryWindow mw = s.lo.pdA.createMw(1);
            final int key = s.qp().bind(1, mw, s.lo.mrA, s.lo.bufA.address(), 64, Access.REMOTE_READ, 0);
            Tests.expectSuccess(s.lo.cqA, 1);
            readThenRevoke(s, key, () -> {
                s.qp().bind(2, mw, null, 0, 0, 0, 0);
                Tests.expectSuccess(s.lo.cqA, 1);
            });
        }
    }

    @Test
    void shouldStopReadingWhenTheType2WindowIsInvalidated() {
        try (HostileSetup s = new HostileSetup()) {
            final MemoryWindow mw = s.lo.pdA.createMw(2);
            final int key = (mw.rKey() & ~0xff) | ((mw.rKey() + 1) & 0xff);
            s.qp().bindType2(1, mw, key, s.lo.mrA, s.lo.bufA.address(), 64, Access.REMOTE_READ, 0);
            Tests.expectSuccess(s.lo.cqA, 1);
            readThenRevoke(s, key, () -> {
                s.qp().localInvalidate(2, key, 0);
                Tests.expectSuccess(s.lo.cqA, 1);
            });
        }
    }

    /**
     * The peer reads 8 bytes under {@code key} and does not acknowledge the response; the victim revokes the key,
     * then writes a secret where the read pointed. The victim's next frames for that read are resends that left
     * before the revocation, then a NAK; none carries the secret.
     */
    private static void readThenRevoke(final HostileSetup s, final int key, final Runnable revoke) {
        s.lo.bufA.set(ValueLayout.JAVA_LONG, 0, BEFORE);
        s.peer.request(Frame.OP_READ).address(s.lo.bufA.address()).key(key).length(8).send();
        final HostilePeer.Received first = s.peer.expect(Frame.OP_READ_RESP);
        assertEquals(BEFORE, payloadOf(first));
        revoke.run();
        s.lo.bufA.set(ValueLayout.JAVA_LONG, 0, SECRET);
        while (true) {
            // A resend that left before the revocation carries the value before it; nothing may carry the secret.
            final HostilePeer.Received next = s.peer.expect("the response resent, or a NAK",
                r -> r.opcode() == Frame.OP_READ_RESP || r.opcode() == Frame.OP_NAK);
            if (next.opcode() == Frame.OP_NAK) {
                break;
            }
            assertEquals(BEFORE, payloadOf(next), "a response read memory through a revoked key");
        }
        Loopback.awaitState(s.qp(), QpState.ERROR);
    }

    private static long payloadOf(final HostilePeer.Received r) {
        return r.frame().get(ValueLayout.JAVA_LONG_UNALIGNED, Frame.HEADER_LENGTH);
    }
}
