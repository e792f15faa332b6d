package io.jdet.internal.cm;

import io.jdet.ConnectionListener;
import io.jdet.ConnectionRequest;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The connection manager when what an exchange belongs to ends under it, from an audit of it under concurrency:
 * the NIC closing with requests queued or taken, an accept that ended without a confirmation, a disconnect whose
 * connection ended (and whose queue pair was connected again) while it waited. Each failed before its fix.
 */
@Timeout(60)
class CmConcurrencyTest extends CmVictimCase {
    private static final int SERVICE = 4712;
    private static final long LONG_MS = 10_000;

    @Override
    protected String fabricTag() {
        return "cmconc";
    }

    @Test
    void closingAListenerAfterItsNicClosedWithRequestsQueuedDoesNotThrow() {
        final ConnectionListener listener = cm.listen(SERVICE);
        raw.request(7, SERVICE, 1, 4, 4, new byte[0]);
        Tests.await("the request is queued", () -> {
            nic.lock.lock();
            try {
                return !((CmListener) listener).queue.isEmpty();
            } finally {
                nic.lock.unlock();
            }
        });
        det.close(); // say a shutdown hook, before the listener's own try-with-resources ends
        assertDoesNotThrow(listener::close, "stops listening; nothing left to answer on a closed NIC");
    }

    @Test
    void rejectingARequestAfterItsNicClosedIsAnIllegalStateLeavingItUnanswered() {
        final ConnectionListener listener = cm.listen(SERVICE);
        raw.request(8, SERVICE, 1, 4, 4, new byte[0]);
        final ConnectionRequest request = listener.take(LONG_MS);
        det.close();
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> request.reject(null));
        assertEquals("NIC closed", e.getMessage(), "the closed NIC, as every other call says it");
    }

    @Test
    void anAcceptThatTimedOutDoesNotHandItsPrivateDataToTheRequesterAsARejection() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(9, SERVICE, 1, 4, 4, new byte[0]);
            final ConnectionRequest request = listener.take(LONG_MS);
            final byte[] secret = "rkey=0x1234 addr=0xdead".getBytes(StandardCharsets.US_ASCII);
            final DetException e = assertThrows(DetException.class, () -> request.accept(qp, secret, 50));
            assertEquals(Errno.ETIMEDOUT, e.errno());
            raw.await(Frame.OP_CM_ACCEPT, 9); // every ACCEPT was lost on the way, say
            // The requester is still waiting and repeats its request.
            raw.request(9, SERVICE, 1, 4, 4, new byte[0]);
            final CmRawPeer.Received answer = raw.await("an answer to the repeat",
                r -> r.msgId() == 9 && r.opcode() == Frame.OP_CM_REJECT);
            assertEquals(0, answer.payload().length,
                "the acceptor's private data was for a connection, not a rejection the application never made");
        }
    }

    @Test
    void aDisconnectWhoseConnectionEndedDoesNotEndTheNextConnectionOfItsQueuePair() throws Exception {
        final int rawQp = 555;
        qp.modify(new QpModify().connect(raw.address(), rawQp, CmWire.pack(1, 1)).localPsn(CmWire.pack(1, 1)));
        final CompletableFuture<Void> disconnecting = CompletableFuture.runAsync(() -> cm.disconnect(qp, 1_000));
        raw.await("the disconnect", r -> r.opcode() == Frame.OP_CM_DISCONNECT);
        final io.jdet.internal.verbs.QpImpl impl = (io.jdet.internal.verbs.QpImpl) qp;
        // The peer ends the connection, and another thread of the application, told so by the DISCONNECT event,
        // connects the queue pair again, before the disconnecting thread gets the engine lock back (it is held here
        // throughout, so that the order is the same on every run).
        nic.lock.lock();
        try {
            impl.disconnect(EventCode.DISCONNECT.code(), true, false); // what the peer's CM_DISCONNECT does
            assertEquals(QpState.IDLE, qp.query().state());
            qp.modify(new QpModify().connect(raw.address(), rawQp + 1, CmWire.pack(1, 1))
                .localPsn(CmWire.pack(1, 1)));
            nic.cm.onTimer(System.nanoTime() + 10_000_000_000L); // the disconnect's retransmission is due
        } finally {
            nic.lock.unlock();
        }
        try {
            disconnecting.get(LONG_MS, TimeUnit.MILLISECONDS);
        } catch (final ExecutionException e) {
            // reported below by the state: the disconnect may fail, but not take the new connection with it
        }
        assertEquals(QpState.CONNECTED, qp.query().state(),
            "the disconnect asked for the connection that has ended, not for the one made since");
        assertEquals(rawQp + 1, qp.query().remoteQpNum());
        // Only a DISCONNECT that targets the new connection's queue pair (the frame's key) counts: the disconnect
        // resends its own every few milliseconds (minRtoUs) until the lock above is taken, so on a loaded machine
        // some for the old connection (rawQp) may already wait here, as they may on any network.
        assertEquals(0, raw.count(r -> r.opcode() == Frame.OP_CM_DISCONNECT && r.key() == rawQp + 1),
            "no CM_DISCONNECT for the new connection: to a peer that reconnected the same queue pairs it would be "
                + "exact, and end it there");
    }
}
