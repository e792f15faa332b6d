package io.jdet.internal.verbs;

import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.internal.protocol.Isn;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The requester completes a read only when its response bytes all arrived: response frames must follow each other
 * without a gap, and the last one must end the read. A responder that answers short (as one whose frame count
 * overflowed did) makes the read fail, never succeed. B is held, so the only response A sees is the one forged here.
 */
@Timeout(30)
class ReadResponseCheckTest {
    private static final int LENGTH = 4096;
    private static final int PIECE = 100;

    @Test
    void shouldFailReadWhenLastResponseEndsShort() {
        assertEquals(WcStatus.BAD_RESPONSE, readAnsweredBy(0, Frame.FLAG_LAST));
    }

    @Test
    void shouldFailReadWhenResponseLeavesAGap() {
        assertEquals(WcStatus.BAD_RESPONSE, readAnsweredBy(PIECE, 0));
    }

    @Test
    void shouldCompleteReadWhenForgedResponseIsWhole() {
        // The control: the same forged response, whole, completes the read.
        assertEquals(WcStatus.SUCCESS, readAnsweredBy(0, Frame.FLAG_LAST, LENGTH));
    }

    private static WcStatus readAnsweredBy(final int offset, final int flags) {
        return readAnsweredBy(offset, flags, PIECE);
    }

    private static WcStatus readAnsweredBy(final int offset, final int flags, final int payload) {
        try (Loopback pair = Loopback.open(); Arena arena = Arena.ofConfined()) {
            final NicImpl nicA = (NicImpl) pair.nicA;
            final NicImpl nicB = (NicImpl) pair.nicB;
            final QpImpl qpA = (QpImpl) pair.qpA;
            final MemorySegment frame = arena.allocate(Frame.HEADER_LENGTH + payload, 8);
            nicB.lock.lock(); // B never answers
            try {
                pair.qpA.read(1, sge(pair.mrA, 0, LENGTH), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
                nicA.lock.lock();
                try {
                    Frame.writeBase(frame, Frame.OP_READ_RESP, flags, payload, qpA.number, qpA.remoteQpNum,
                        qpA.requester.rspExpected, Isn.low(qpA.localPsn) - 1, Isn.high(qpA.localPsn) - 1, 0);
                    Frame.writeExtension(frame, 0, 0, 0, 0, LENGTH, offset, 0);
                    nicA.onFrame(frame, Frame.HEADER_LENGTH + payload, qpA.remotePeer);
                } finally {
                    nicA.lock.unlock();
                }
                final WorkCompletion wc = Tests.pollOne(pair.cqA);
                assertEquals(0L, pair.nicA.counters().get("engine.errors"));
                return wc.status();
            } finally {
                nicB.lock.unlock();
            }
        }
    }
}
