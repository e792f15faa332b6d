package io.jdet.internal.verbs;

import io.jdet.Configuration;
import io.jdet.QpState;
import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A protected frame longer than the NIC's MTU (a UDP datagram may hold up to 64 KiB whatever the interface's MTU)
 * is dropped and counted before anything opens it: it used to overrun the seal's scratch memory, throw out of the
 * engine and lose the rest of the receive batch. The connection is untouched.
 */
@Timeout(60)
class ProtectedFrameLengthTest {
    private static final int SERVICE = 0x5EC1;

    @Test
    void aProtectedFrameLongerThanTheMtuIsDroppedBeforeItIsOpened() {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(new Configuration().loopMtu(4096))
                 .connect(false));
             Arena arena = Arena.ofConfined()) {
            pair.nicA.connectionManager().security(Security.of(Security.Mode.AUTH));
            pair.nicB.connectionManager().security(Security.of(Security.Mode.AUTH));
            pair.connectThroughCm(SERVICE);
            final NicImpl victim = (NicImpl) pair.nicA;
            final QpImpl qp = (QpImpl) pair.qpA;
            final int payload = 6000; // above the 4096-byte MTU
            final MemorySegment frame = arena.allocate(Frame.HEADER_LENGTH + payload + Frame.PROTECTED_TRAILER_LENGTH);
            Frame.writeBase(frame, Frame.OP_SEND, Frame.FLAG_PROTECTED | Frame.FLAG_LAST, payload, qp.number,
                qp.remoteQpNum, 0, 0, 0, 0);
            final long before = victim.counters().get("rx.bad_header");
            victim.lock.lock();
            try {
                victim.onFrame(frame, (int) frame.byteSize(), qp.remotePeer);
            } finally {
                victim.lock.unlock();
            }
            assertEquals(before + 1, victim.counters().get("rx.bad_header"), victim.counters().toString());
            assertEquals(0L, victim.counters().get("engine.errors"));
            assertEquals(QpState.CONNECTED, pair.qpA.query().state());
            pair.qpB.recv(1, Loopback.sge(pair.mrB, 0, 64), 1);
            pair.qpA.send(2, Loopback.sge(pair.mrA, 0, 64), 1, 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            Tests.expectSuccess(pair.cqB, 1);
        }
    }
}
