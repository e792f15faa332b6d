package io.jdet;

import io.jdet.internal.verbs.NicImpl;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Consumer;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * On the in-process fabric a large payload travels as a reference to the sender's registered memory (issue 7, cost
 * per byte): the receiver reads it when it consumes the frame. Whatever gives the memory back to the application
 * first (deregistration, a flush) settles the frames still unread, so the receiver places the bytes as they were
 * when sent, never what the application wrote there afterwards. The receiver is held (its engine lock) so that its
 * frames wait in its ring while the sender gives the memory back. Both tests fail (bytes of 2 land) when the
 * fabric link does not settle.
 */
class LentPayloadSettleTest {
    private static final int LENGTH = 60_000;

    @Test
    void shouldPlaceTheBytesAsSentWhenTheSenderDeregistersBeforeTheReceiverReadsThem() {
        writeThenGiveBack(pair -> pair.mrA.close());
    }

    @Test
    void shouldPlaceTheBytesAsSentWhenTheSendersWorkIsFlushedBeforeTheReceiverReadsThem() {
        writeThenGiveBack(pair -> {
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            assertEquals(WcStatus.FLUSHED, Tests.pollOne(pair.cqA).status(), "the write, flushed");
        });
    }

    /** Posts a write, gives the source memory back while the receiver is held, overwrites it, lets the receiver go. */
    private static void writeThenGiveBack(final Consumer<Loopback> giveBack) {
        try (Loopback pair = Loopback.open(new Loopback.Options().bufferBytes(1 << 17))) {
            pair.bufA.asSlice(0, LENGTH).fill((byte) 1);
            pair.bufB.asSlice(0, LENGTH).fill((byte) 0);
            final NicImpl receiver = (NicImpl) pair.nicB;
            receiver.lock.lock();
            try {
                pair.qpA.write(1, sge(pair.mrA, 0, LENGTH), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
                giveBack.accept(pair);
                pair.bufA.asSlice(0, LENGTH).fill((byte) 2); // the application reuses its memory at once
            } finally {
                receiver.lock.unlock();
            }
            final MemorySegment landed = pair.bufB.asSlice(0, LENGTH);
            Tests.await("the write lands", () -> landed.get(ValueLayout.JAVA_BYTE, LENGTH - 1) != 0);
            for (long i = 0; i < LENGTH; i++) {
                assertEquals((byte) 1, landed.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " as it was when sent");
            }
        }
    }
}
