package io.jdet.internal.cm;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.internal.link.FabricLink;
import io.jdet.internal.verbs.NicImpl;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** What {@link CmWire#send} puts on the link: the protected flag exactly when a block follows, and its counters. */
class CmWireSendTest {
    private record Sent(int flags, int opcode, int msgId, long cookie, byte[] payload) {
    }

    @Test
    void aBlockIsFlaggedAndFollowsThePrivateDataAndEachSendIsCountedOnce() {
        final String fabric = Tests.uniqueFabric("cm-wire");
        try (Det det = Det.open()) {
            final NicImpl nic = (NicImpl) det.openNic(fabric, null);
            final FabricLink peer = new FabricLink(fabric.substring("loop:".length()),
                Configuration.LOOP_MTU_DEFAULT, 64);
            try {
                final long to = nic.link.resolve(peer.address());
                final CmWire wire = new CmWire(nic);
                final long framesSent;
                final long cmSent;
                nic.lock.lock();
                try {
                    framesSent = nic.counters.framesSent;
                    cmSent = nic.counters.cmSent;
                    wire.send(to, Frame.OP_CM_READY, 5, 21, 7, 0, 0, 0, new byte[0], 0, 0, new byte[] {1, 2, 3});
                    wire.send(to, Frame.OP_CM_REQUEST, 5, 22, 7, 0, 0, 0, new byte[] {9, 8}, 0, 77, null);
                    wire.send(to, Frame.OP_CM_ACCEPT, 5, 23, 7, 0, 0, 0, new byte[] {4}, 0, 0, new byte[] {5, 6});
                    wire.send(to, Frame.OP_CM_DISCONNECT_REPLY, 5, 24, 7, 0, 0, 0, new byte[0]);
                    assertEquals(framesSent + 4, nic.counters.framesSent);
                    assertEquals(cmSent + 4, nic.counters.cmSent);
                } finally {
                    nic.lock.unlock();
                }
                final List<Sent> got = new ArrayList<>();
                Tests.await("four frames", () -> {
                    peer.receive((f, length, from) -> got.add(new Sent(Frame.flags(f), Frame.opcode(f),
                        Frame.msgId(f), Frame.operand2(f),
                        f.asSlice(Frame.HEADER_LENGTH, length - Frame.HEADER_LENGTH).toArray(ValueLayout.JAVA_BYTE))),
                        16);
                    return got.size() >= 4;
                });
                assertEquals(Frame.FLAG_PROTECTED, got.get(0).flags() & Frame.FLAG_PROTECTED);
                assertArrayEquals(new byte[] {1, 2, 3}, got.get(0).payload(), "the block alone");
                assertEquals(0, got.get(1).flags() & Frame.FLAG_PROTECTED, "no block, no flag");
                assertArrayEquals(new byte[] {9, 8}, got.get(1).payload());
                assertEquals(77, got.get(1).cookie());
                assertEquals(Frame.FLAG_PROTECTED, got.get(2).flags() & Frame.FLAG_PROTECTED);
                assertArrayEquals(new byte[] {4, 5, 6}, got.get(2).payload(), "private data, then the block");
                assertEquals(0, got.get(3).flags() & Frame.FLAG_PROTECTED);
                assertEquals(0, got.get(3).payload().length);
                assertEquals(24, got.get(3).msgId());
                wire.close();
            } finally {
                peer.close();
            }
        }
    }
}
