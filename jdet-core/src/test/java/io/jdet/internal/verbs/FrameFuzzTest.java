package io.jdet.internal.verbs;

import io.jdet.QpState;
import io.jdet.internal.protocol.Isn;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzzes the frame decoder: frames of every opcode, aimed at a connected queue pair from its true peer (so they pass
 * the address checks and reach the protocol), with random fields, random bytes flipped and random lengths, fed
 * straight into {@link NicImpl#onFrame} as a link delivers them. A fixed seed and a bounded count keep it fast and
 * reproducible ({@code -Djdet.fuzz.count=N -Djdet.fuzz.seed=S} run it longer); nothing may escape the engine, no
 * engine error may be counted, and no byte of memory the peer was never given a key to may change.
 */
class FrameFuzzTest {
    private static final int COUNT = Integer.getInteger("jdet.fuzz.count", 50_000);
    private static final long SEED = Long.getLong("jdet.fuzz.seed", 0x5EC_8L);
    private static final int[] OPCODES = {Frame.OP_SEND, Frame.OP_WRITE, Frame.OP_READ, Frame.OP_COMP_EXCH,
        Frame.OP_FETCH_ADD, Frame.OP_ACK, Frame.OP_DISCONNECT, Frame.OP_READ_RESP, Frame.OP_ATOMIC_RESP, Frame.OP_NAK,
        Frame.OP_CM_REQUEST, Frame.OP_CM_ACCEPT, Frame.OP_CM_REJECT, Frame.OP_CM_READY, Frame.OP_CM_DISCONNECT,
        Frame.OP_CM_DISCONNECT_REPLY, Frame.OP_CM_COOKIE, 5, 99};

    @Test
    void shouldSurviveFuzzedFramesFromTheConnectedPeerWithoutTouchingUnkeyedMemory() {
        try (Loopback pair = Loopback.open(); Arena arena = Arena.ofConfined()) {
            final NicImpl nic = (NicImpl) pair.nicA;
            final QpImpl qp = (QpImpl) pair.qpA;
            final MemorySegment secret = arena.allocate(4096, 8);
            secret.fill((byte) 0x3C);
            final MemorySegment frame = arena.allocate(Frame.HEADER_LENGTH + 512, 8);
            final SplittableRandom random = new SplittableRandom(SEED);
            final int reqBase = Isn.low(qp.remotePsn);
            final int rspBase = Isn.high(qp.remotePsn);
            for (int i = 0; i < COUNT && qp.state == QpState.CONNECTED || i < COUNT && reconnect(pair, qp); i++) {
                final int payload = random.nextInt(4) == 0 ? random.nextInt(513) : random.nextInt(65);
                frame.asSlice(0, Frame.HEADER_LENGTH + payload).fill((byte) random.nextInt(256));
                final int opcode = OPCODES[random.nextInt(OPCODES.length)];
                final int near = random.nextInt(8);
                Frame.writeBase(frame, opcode, random.nextBoolean() ? Frame.FLAG_LAST : random.nextInt(1 << 16),
                    payload, Frame.isConnectionManager(opcode) ? 0 : qp.number, qp.remoteQpNum,
                    (opcode >= Frame.OP_READ_RESP ? rspBase : reqBase) + near, Isn.low(qp.localPsn) - 1,
                    Isn.high(qp.localPsn) - 1, random.nextInt(4) == 0 ? random.nextInt() : near);
                Frame.writeExtension(frame, random.nextLong(), random.nextLong(), random.nextLong(),
                    random.nextInt(3) == 0 ? pair.mrA.rKey() : random.nextInt(), random.nextInt(600),
                    random.nextInt(600), random.nextInt());
                for (int flips = random.nextInt(3); flips > 0; flips--) {
                    final long at = random.nextInt(Frame.HEADER_LENGTH + payload);
                    frame.set(ValueLayout.JAVA_BYTE, at, (byte) random.nextInt(256));
                }
                final int length = random.nextInt(16) == 0 ? random.nextInt(Frame.HEADER_LENGTH + payload + 1)
                    : Frame.HEADER_LENGTH + payload;
                nic.lock.lock();
                try {
                    nic.onFrame(frame, length, qp.remotePeer);
                } finally {
                    nic.lock.unlock();
                }
            }
            assertEquals(0L, pair.nicA.counters().get("engine.errors"), () -> pair.nicA.counters().toString());
            for (long i = 0; i < secret.byteSize(); i++) {
                assertEquals((byte) 0x3C, secret.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of unkeyed memory");
            }
        }
    }

    /** The fuzz failed the connection (as a hostile peer may): connect it again to go on. */
    private static boolean reconnect(final Loopback pair, final QpImpl qp) {
        qp.modify(new io.jdet.QpModify().state(QpState.IDLE));
        Loopback.connect(pair.qpA, pair.nicB, pair.qpB);
        return true;
    }
}
