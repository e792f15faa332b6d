package io.jdet.internal.cm;

import io.jdet.internal.link.FabricLink;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import io.jdet.testing.Tests;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A connection manager peer that speaks raw frames on an in-process fabric: it sends whatever a test builds (right
 * or wrong) to one NIC, and keeps what it receives, so that a test can play the other side of every exchange and
 * misbehave at will. Not thread safe; one test thread drives it.
 */
final class CmRawPeer implements AutoCloseable {
    /** A frame received from the NIC under test. */
    record Received(int opcode, int dstQp, int srcQp, int msgId, int key, long address, long operand1, int length,
                    byte[] payload) {
    }

    private final FabricLink link;
    private final long nic;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment header = arena.allocate(Frame.HEADER_LENGTH, 8);
    private final ByteBuffer headerView = header.asByteBuffer();
    private final MemorySegment data = arena.allocate(4096, 8);
    private final ByteBuffer dataView = data.asByteBuffer();
    private final FrameGather gather = new FrameGather(1);
    private final FrameCrc crc = new FrameCrc();
    private final List<Received> inbox = new ArrayList<>();
    /** Whether {@link #send} first takes what arrived, so that no answer is lost to a full ring. */
    private boolean keepRoom = true;
    /** The listener's cookies, by connection id: a request repeats the one it got (address validation). */
    private final java.util.Map<Integer, Long> cookies = new java.util.HashMap<>();

    /**
     * Attaches to the fabric of a NIC.
     *
     * @param nicAddress the NIC's address, {@code loop:<fabric>/<n>}
     */
    CmRawPeer(final String nicAddress) {
        this(nicAddress, 1024);
    }

    /**
     * Attaches to the fabric of a NIC with an inbound ring of a given size.
     *
     * @param nicAddress the NIC's address, {@code loop:<fabric>/<n>}
     * @param ringFrames the ring size, a power of two
     */
    CmRawPeer(final String nicAddress, final int ringFrames) {
        final String fabric = nicAddress.substring("loop:".length(), nicAddress.lastIndexOf('/'));
        link = new FabricLink(fabric, io.jdet.Configuration.LOOP_MTU_DEFAULT, ringFrames);
        nic = link.resolve(nicAddress);
        if (nic < 0) {
            throw new IllegalArgumentException("no NIC at " + nicAddress);
        }
    }

    /** Stops taking frames before each send: the ring fills up and the NIC finds no room for its answers. */
    void stopTaking() {
        keepRoom = false;
    }

    /** @return this peer's address, as the NIC under test names it */
    String address() {
        return link.address();
    }

    /**
     * Sends a connection manager frame to the NIC, with a right CRC; waits while its ring is full.
     *
     * @param opcode  the opcode
     * @param dstQp   the destination queue pair (0 for a well-formed frame)
     * @param srcQp   the source queue pair
     * @param id      the connection or disconnect id
     * @param key     the service id, or the queue pair a disconnect names
     * @param isns    request ISN low, response ISN high
     * @param limits  max_or low, max_ir high
     * @param reason  the reject reason
     * @param payload the private data
     */
    void send(final int opcode, final int dstQp, final int srcQp, final int id, final int key, final long isns,
              final long limits, final int reason, final byte[] payload) {
        if (opcode == Frame.OP_CM_REQUEST && !cookies.containsKey(id)) {
            // A first request gets a cookie instead of an answer: repeat it with the cookie, as a real requester.
            sendFrame(opcode, dstQp, srcQp, id, key, isns, limits, reason, payload, 0);
            await(Frame.OP_CM_COOKIE, id);
        }
        sendFrame(opcode, dstQp, srcQp, id, key, isns, limits, reason, payload,
            opcode == Frame.OP_CM_REQUEST ? cookies.get(id) : 0);
    }

    /** Sends a request without the cookie dance: {@code cookie} as given (0: none). */
    void sendFrame(final int opcode, final int dstQp, final int srcQp, final int id, final int key, final long isns,
                   final long limits, final int reason, final byte[] payload, final long cookie) {
        sendFrame(opcode, 0, dstQp, srcQp, id, key, isns, limits, reason, payload, cookie);
    }

    /** Sends a frame with header flags, say {@code FLAG_PROTECTED} for one of a protected handshake. */
    void sendFrame(final int opcode, final int flags, final int dstQp, final int srcQp, final int id, final int key,
                   final long isns, final long limits, final int reason, final byte[] payload, final long cookie) {
        // A CM_DISCONNECT carries the next request the sender would send; the raw peer sends none, and a queue pair
        // connected to it starts its streams at 1.
        final int seq = opcode == Frame.OP_CM_DISCONNECT ? 1 : 0;
        Frame.writeBase(header, opcode, flags, payload.length, dstQp, srcQp, seq, 0, 0, id);
        Frame.writeExtension(header, isns, limits, cookie, key, reason, 0, 0);
        gather.clear();
        if (payload.length > 0) {
            MemorySegment.copy(payload, 0, data, ValueLayout.JAVA_BYTE, 0, payload.length);
            gather.add(data, dataView, 0, payload.length);
        }
        crc.seal(header, headerView, Frame.HEADER_LENGTH, gather);
        if (keepRoom) {
            drain(); // keep room for the answers, so that none is lost to a full ring
        }
        final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
        while (!link.send(nic, header, Frame.HEADER_LENGTH, gather)) {
            if (System.nanoTime() - deadline > 0) {
                fail("the NIC's ring stayed full for " + Tests.TIMEOUT);
            }
            Thread.yield();
        }
    }

    /** A well-formed connection request. */
    void request(final int id, final int service, final int srcQp, final int maxOr, final int maxIr,
                 final byte[] privateData) {
        send(Frame.OP_CM_REQUEST, 0, srcQp, id, service, CmWire.pack(11, 22), CmWire.pack(maxOr, maxIr), 0,
            privateData);
    }

    /**
     * Waits for a frame that matches, taking it from the inbox; frames that do not match stay there.
     *
     * @param what  the frame expected, for the failure message
     * @param match the test
     * @return the frame
     */
    Received await(final String what, final Predicate<Received> match) {
        final long deadline = System.nanoTime() + Tests.TIMEOUT.toNanos();
        while (true) {
            drain();
            for (final Iterator<Received> i = inbox.iterator(); i.hasNext();) {
                final Received r = i.next();
                if (match.test(r)) {
                    i.remove();
                    return r;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                fail("no " + what + " within " + Tests.TIMEOUT + "; received " + inbox);
            }
            Thread.yield();
        }
    }

    /**
     * Waits for a frame of an opcode and id.
     *
     * @return the frame
     */
    Received await(final int opcode, final int id) {
        return await("opcode " + opcode + " id " + id, r -> r.opcode() == opcode && r.msgId() == id);
    }

    /** @return how many frames of an opcode and id were received and not taken yet */
    int count(final int opcode, final int id) {
        drain();
        int n = 0;
        for (final Received r : inbox) {
            if (r.opcode() == opcode && r.msgId() == id) {
                n++;
            }
        }
        return n;
    }

    /** @return how many frames of an opcode were received and not taken yet */
    int count(final int opcode) {
        drain();
        int n = 0;
        for (final Received r : inbox) {
            if (r.opcode() == opcode) {
                n++;
            }
        }
        return n;
    }

    /** @return how many frames that match were received and not taken yet */
    int count(final Predicate<Received> match) {
        drain();
        int n = 0;
        for (final Received r : inbox) {
            if (match.test(r)) {
                n++;
            }
        }
        return n;
    }

    private void drain() {
        link.receive((f, length, peer) -> {
            if (Frame.opcode(f) == Frame.OP_CM_COOKIE) {
                cookies.put(Frame.msgId(f), Frame.operand2(f));
            }
            inbox.add(new Received(Frame.opcode(f), Frame.dstQp(f), Frame.srcQp(f),
            Frame.msgId(f), Frame.key(f), Frame.address(f), Frame.operand1(f), Frame.length(f),
            f.asSlice(Frame.HEADER_LENGTH, length - Frame.HEADER_LENGTH).toArray(ValueLayout.JAVA_BYTE)));
        }, 256);
    }

    @Override
    public void close() {
        link.close();
        arena.close();
    }
}
