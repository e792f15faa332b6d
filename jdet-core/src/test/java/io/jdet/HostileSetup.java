package io.jdet;

import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A victim (NIC A of a {@link Loopback}: its queue pair, completion queue, event queue and buffer) connected to a
 * {@link HostilePeer}, with the assertions the hostile-peer tests share.
 */
final class HostileSetup implements AutoCloseable {
    final Loopback lo;
    final HostilePeer peer;

    HostileSetup() {
        this(new Configuration());
    }

    HostileSetup(final Configuration configuration) {
        this(configuration, true);
    }

    /**
     * @param configuration the victim's
     * @param connect       whether to connect the victim's queue pair to the peer ({@code QpModify.connect}), or
     *                      leave it IDLE for the connection manager
     */
    HostileSetup(final Configuration configuration, final boolean connect) {
        this(new Loopback.Options().configuration(configuration).connect(false), connect);
    }

    /**
     * A victim with other queue pair limits than the default, connected to the peer.
     *
     * @param options the victim's (its {@code connect} must be false: the victim connects to the peer instead)
     */
    HostileSetup(final Loopback.Options options) {
        this(options, true);
    }

    private HostileSetup(final Loopback.Options options, final boolean connect) {
        lo = Loopback.open(options);
        peer = HostilePeer.on(lo.nicA);
        if (connect) {
            peer.connect(lo.qpA);
        } else {
            peer.aimAt(lo.qpA.number());
        }
    }

    QueuePair qp() {
        return lo.qpA;
    }

    long counter(final String name) {
        return lo.nicA.counters().get(name);
    }

    /**
     * Waits for the victim's queue pair to fail with an event, and checks that the event decodes.
     *
     * @param code   the event expected
     * @param remote whether it is marked as caused by the peer
     */
    void awaitQpEvent(final EventCode code, final boolean remote) {
        Loopback.awaitState(lo.qpA, QpState.ERROR);
        final List<EventRecord> events = Tests.awaitEvent(lo.eventsA, e -> e.handle() == lo.qpA);
        final EventRecord e = events.get(events.size() - 1);
        assertDoesNotThrow(e::toString, "an event the application cannot print");
        assertEquals(code, assertDoesNotThrow(e::code), e.toString());
        assertEquals(remote, e.remote(), e.toString());
    }

    /**
     * The connection failed on a protocol error: ERROR with a local event, counted, the peer told with a
     * DISCONNECT carrying the event, and nothing thrown inside the engine.
     *
     * @param code the event
     */
    void awaitProtocolError(final EventCode code) {
        awaitQpEvent(code, false);
        assertEquals(1, counter("rx.protocol_error"), () -> lo.nicA.counters().toString());
        final HostilePeer.Received d = peer.expect(io.jdet.internal.wire.Frame.OP_DISCONNECT);
        assertEquals(code.code(), d.key(), d.toString());
        assertNoEngineErrors();
    }

    /**
     * The victim refused the peer's request {@code seq} with a NAK naming the status and event, then failed.
     *
     * @param seq    the peer's request
     * @param status the status
     * @param event  the event
     */
    void awaitNak(final int seq, final WcStatus status, final EventCode event) {
        final HostilePeer.Received nak = peer.expect(io.jdet.internal.wire.Frame.OP_NAK);
        assertEquals(seq, nak.seq(), nak.toString());
        assertEquals(status.code(), nak.key(), nak.toString());
        assertEquals(event.code(), nak.length(), nak.toString());
        awaitQpEvent(event, false);
        assertNoEngineErrors();
    }

    /**
     * Posts an 8-byte send from A's buffer.
     *
     * @param id    the work request id
     * @param flags {@link WrFlags}
     * @return its sequence number as the peer saw it
     */
    int postSend(final long id, final int flags) {
        lo.qpA.send(id, Loopback.sge(lo.mrA, 0, 8), 1, flags, 0);
        return expectRequest(io.jdet.internal.wire.Frame.OP_SEND).seq();
    }

    /** The last request {@link #expectRequest} returned, once there is one. */
    private boolean requestSeen;
    private int lastRequestSeq;

    /**
     * Waits for the next new request frame of an opcode: one after the last this method returned, so that a resend
     * of an earlier request (its 2 ms retransmission timer firing on a slow machine) is not taken for it.
     *
     * @param opcode the request's opcode
     * @return the frame
     */
    HostilePeer.Received expectRequest(final int opcode) {
        final HostilePeer.Received r = peer.expect("a new request of opcode " + opcode, f -> f.opcode() == opcode
            && (!requestSeen || io.jdet.internal.wire.Frame.after(f.seq(), lastRequestSeq)));
        requestSeen = true;
        lastRequestSeq = r.seq();
        return r;
    }

    /**
     * Posts a read of {@code length} bytes into A's buffer.
     *
     * @return the request as the peer saw it
     */
    HostilePeer.Received postRead(final long id, final int length) {
        lo.qpA.read(id, Loopback.sge(lo.mrA, 0, length), 1, 0x1000, 0x77, 0);
        return expectRequest(io.jdet.internal.wire.Frame.OP_READ);
    }

    /**
     * Polls the victim's next completion and checks its request and status.
     *
     * @return the completion
     */
    WorkCompletion expectCompletion(final long id, final WcStatus status) {
        final WorkCompletion wc = Tests.pollOne(lo.cqA);
        assertEquals(id, wc.id(), wc.toString());
        assertEquals(status, wc.status(), wc.toString());
        return wc;
    }

    void assertNoEngineErrors() {
        assertEquals(0, counter("engine.errors"), () -> lo.nicA.counters().toString());
    }

    void assertConnected() {
        assertEquals(QpState.CONNECTED, lo.qpA.query().state());
        assertFalse(lo.eventsA.pending() > 0, () -> "unexpected event: " + Tests.drainEvents(lo.eventsA));
        assertNoEngineErrors();
    }

    @Override
    public void close() {
        try {
            peer.close();
        } finally {
            lo.close();
        }
    }
}
