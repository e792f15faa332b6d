package io.jdet.internal.cm;

import io.jdet.ConnectionListener;
import io.jdet.ConnectionManager;
import io.jdet.ConnectionRejectedException;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.QpCreate;
import io.jdet.QpState;
import io.jdet.QueuePair;
import io.jdet.internal.protocol.PeerValues;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The connection manager's edges that {@code CmImplTest} leaves open: each reject reason as the error
 * {@code connect} raises, the exact bounds of a well-formed request and acceptance, and the counters each ignored
 * or refused frame moves (by exactly one).
 */
@Timeout(60)
class CmImplEdgesTest extends CmVictimCase {
    private static final int SERVICE = 4712;
    private static final int RAW_QP = 556;
    private static final long LONG_MS = 10_000;

    private final Set<Integer> seen = new HashSet<>();

    @Override
    protected String fabricTag() {
        return "cm-edges";
    }

    private long counter(final String name) {
        return nic.counters().get(name);
    }

    private void awaitCounter(final String name, final long value) {
        Tests.await(name + " reaches " + value, () -> counter(name) >= value);
    }

    /** Starts a connect in another thread and returns the id of its (first new) request. */
    private int connecting(final CompletableFuture<?>[] out) {
        out[0] = CompletableFuture.supplyAsync(
            () -> assertThrows(DetException.class, () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS)));
        final int id = raw.await("a new request", r -> r.opcode() == Frame.OP_CM_REQUEST && !seen.contains(r.msgId()))
            .msgId();
        seen.add(id);
        return id;
    }

    private DetException refusedWith(final int reason, final byte[] data) {
        final CompletableFuture<?>[] f = new CompletableFuture<?>[1];
        final int id = connecting(f);
        raw.send(Frame.OP_CM_REJECT, 0, 0, id, SERVICE, 0, 0, reason, data);
        final DetException e = (DetException) f[0].join();
        assertEquals(QpState.IDLE, qp.query().state());
        return e;
    }

    @Test
    void eachRejectReasonIsItsOwnError() {
        final DetException nobody = refusedWith(CmImpl.NO_LISTENER, new byte[0]);
        assertEquals(ConnectionRejectedException.Reason.NO_LISTENER,
            assertInstanceOf(ConnectionRejectedException.class, nobody).reason());
        final DetException byPeer = refusedWith(CmImpl.REJECTED_BY_PEER, bytes("busy"));
        assertEquals(ConnectionRejectedException.Reason.REJECTED,
            assertInstanceOf(ConnectionRejectedException.class, byPeer).reason());
        assertArrayEquals(bytes("busy"), ((ConnectionRejectedException) byPeer).privateData());
        final DetException mismatch = refusedWith(CmImpl.SECURITY_MISMATCH, new byte[0]);
        assertEquals(Errno.ECONNREFUSED, mismatch.errno());
        assertTrue(mismatch.getMessage().contains("refused the protection NONE"), mismatch.getMessage());
        assertEquals(Errno.EACCES, refusedWith(CmImpl.UNTRUSTED, new byte[0]).errno());
        final DetException malformed = refusedWith(CmImpl.MALFORMED, new byte[0]);
        assertEquals(Errno.ECONNREFUSED, malformed.errno());
        assertTrue(malformed.getMessage().contains("malformed"), malformed.getMessage());
        final DetException other = refusedWith(77, bytes("x"));
        assertEquals(ConnectionRejectedException.Reason.REJECTED,
            assertInstanceOf(ConnectionRejectedException.class, other).reason(), "an unknown reason: rejected");
    }

    private DetException acceptedWith(final int srcQp, final int maxOr, final int maxIr, final int dataBytes) {
        final CompletableFuture<?>[] f = new CompletableFuture<?>[1];
        final int id = connecting(f);
        final long malformed = counter("cm.malformed");
        raw.send(Frame.OP_CM_ACCEPT, 0, srcQp, id, SERVICE, CmWire.pack(1, 1), CmWire.pack(maxOr, maxIr), 0,
            new byte[dataBytes]);
        final DetException e = (DetException) f[0].join();
        assertEquals(Errno.ECONNREFUSED, e.errno());
        assertTrue(e.getMessage().contains("malformed"), e.getMessage());
        assertEquals(malformed + 1, counter("cm.malformed"));
        assertEquals(QpState.IDLE, qp.query().state(), "a malformed acceptance connects nothing");
        assertEquals(0, raw.count(Frame.OP_CM_READY, id), "and confirms nothing");
        return e;
    }

    @Test
    void anAcceptanceOutOfRangeIsRefusedAsMalformed() {
        acceptedWith(0, 4, 4, 0);
        acceptedWith(RAW_QP, -1, 4, 0);
        acceptedWith(RAW_QP, 4, -1, 0);
        acceptedWith(RAW_QP, PeerValues.MAX_RD_ATOMIC + 1, 4, 0);
        acceptedWith(RAW_QP, 4, PeerValues.MAX_RD_ATOMIC + 1, 0);
        acceptedWith(RAW_QP, 4, 4, ConnectionManager.MAX_PRIVATE_DATA + 1);
    }

    @Test
    void anAcceptanceAtItsBoundsConnects() throws Exception {
        final CompletableFuture<byte[]> connected = CompletableFuture.supplyAsync(
            () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS));
        final int id = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST).msgId();
        final byte[] data = new byte[ConnectionManager.MAX_PRIVATE_DATA];
        data[0] = 5;
        data[data.length - 1] = 6;
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, CmWire.pack(1, 1),
            CmWire.pack(PeerValues.MAX_RD_ATOMIC, 0), 0, data);
        assertArrayEquals(data, connected.get());
        assertEquals(QpState.CONNECTED, qp.query().state());
        assertEquals(0, qp.query().maxOr(), "lowered to the acceptor's max_ir of 0");
        raw.await(Frame.OP_CM_READY, id);
    }

    private int requestAnswer(final int id, final int srcQp, final int maxOr, final int maxIr, final int dataBytes) {
        raw.request(id, SERVICE, srcQp, maxOr, maxIr, new byte[dataBytes]);
        return raw.await("an answer to " + id, r -> r.msgId() == id && (r.opcode() == Frame.OP_CM_REJECT))
            .length();
    }

    @Test
    void aRequestIsWellFormedExactlyWithinItsBounds() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            final long malformed = counter("cm.malformed");
            assertEquals(CmImpl.MALFORMED, requestAnswer(31, 0, 4, 4, 0), "queue pair 0");
            assertEquals(CmImpl.MALFORMED, requestAnswer(32, 1, -1, 4, 0));
            assertEquals(CmImpl.MALFORMED, requestAnswer(33, 1, 4, -1, 0));
            assertEquals(CmImpl.MALFORMED, requestAnswer(34, 1, PeerValues.MAX_RD_ATOMIC + 1, 4, 0));
            assertEquals(CmImpl.MALFORMED, requestAnswer(35, 1, 4, PeerValues.MAX_RD_ATOMIC + 1, 0));
            assertEquals(CmImpl.MALFORMED, requestAnswer(36, 1, 4, 4, ConnectionManager.MAX_PRIVATE_DATA + 1));
            assertEquals(malformed + 6, counter("cm.malformed"));
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0), "none reached the listener");

            raw.request(37, SERVICE, 1, PeerValues.MAX_RD_ATOMIC, 0, new byte[ConnectionManager.MAX_PRIVATE_DATA]);
            final io.jdet.ConnectionRequest r = listener.take(LONG_MS);
            assertEquals(PeerValues.MAX_RD_ATOMIC, r.remoteMaxOr());
            assertEquals(0, r.remoteMaxIr());
            assertEquals(ConnectionManager.MAX_PRIVATE_DATA, r.privateData().length);
            raw.request(38, SERVICE, 1, 0, PeerValues.MAX_RD_ATOMIC, new byte[0]);
            assertEquals(PeerValues.MAX_RD_ATOMIC, listener.take(LONG_MS).remoteMaxIr());
            assertEquals(malformed + 6, counter("cm.malformed"), "the bounds themselves are well formed");
        }
    }

    @Test
    void everyStrayAnswerIsCountedOnceAndChangesNothing() {
        final long received = counter("cm.received");
        final long ignored = counter("cm.ignored");
        raw.send(Frame.OP_CM_READY, 0, RAW_QP, 900, SERVICE, 0, 0, 0, new byte[0]);
        raw.send(Frame.OP_CM_COOKIE, 0, RAW_QP, 901, SERVICE, 0, 0, 0, new byte[0]);
        raw.send(Frame.OP_CM_DISCONNECT_REPLY, 0, RAW_QP, 902, 0, 0, 0, 0, new byte[0]);
        raw.send(Frame.OP_CM_REJECT, 0, RAW_QP, 903, SERVICE, 0, 0, CmImpl.ABANDONED, new byte[0]);
        raw.send(Frame.OP_CM_REJECT, 0, RAW_QP, 904, SERVICE, 0, 0, CmImpl.REJECTED_BY_PEER, new byte[0]);
        awaitCounter("cm.received", received + 5);
        assertEquals(received + 5, counter("cm.received"));
        assertEquals(ignored + 5, counter("cm.ignored"));

        // a READY for a request still pending (not accepted) is no confirmation
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(905, SERVICE, 1, 4, 4, new byte[0]);
            final io.jdet.ConnectionRequest pending = listener.take(LONG_MS);
            raw.send(Frame.OP_CM_READY, 0, 1, 905, SERVICE, 0, 0, 0, new byte[0]);
            raw.send(Frame.OP_CM_REJECT, 0, 1, 905, SERVICE, 0, 0, CmImpl.ABANDONED, new byte[0]);
            awaitCounter("cm.ignored", ignored + 7);
            pending.reject(null);
            assertEquals(CmImpl.REJECTED_BY_PEER, raw.await(Frame.OP_CM_REJECT, 905).length());
        }
    }

    @Test
    void aRepeatedRequestGetsItsAnswerAgainOnlySoOften() throws InterruptedException {
        // The REJECT (200 bytes of private data) is larger than the REQUEST: repeated for every replay of a captured
        // request, this NIC would amplify toward the requester's address. At most MAX_REPEATS, one per interval.
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(910, SERVICE, 1, 4, 4, new byte[0]);
            listener.take(LONG_MS).reject(new byte[200]);
            raw.await(Frame.OP_CM_REJECT, 910);
            final long received = counter("cm.received");
            final int replays = 3 * CmRequest.MAX_REPEATS;
            for (int i = 0; i < replays; i++) {
                raw.request(910, SERVICE, 1, 4, 4, new byte[0]);
                Thread.sleep(2); // longer than the least interval between two repeats
            }
            awaitCounter("cm.received", received + replays);
            final int answers = raw.count(Frame.OP_CM_REJECT, 910);
            assertTrue(answers >= 1 && answers <= CmRequest.MAX_REPEATS, answers + " answers to " + replays);
        }
    }

    @Test
    void disconnectsForNoConnectionAreAnsweredWithinTheReplyBudget() {
        // A CM_DISCONNECT for a queue pair not connected to its sender is answered (its first answer may have been
        // lost), but only from the budget of replies to unknown traffic: spoofed ones are reflected as a trickle.
        final int burst = Math.max(1, new io.jdet.Configuration().unknownRepliesPerSecond() / 10);
        final long received = counter("cm.received");
        final int sent = 4 * burst;
        for (int i = 0; i < sent; i++) {
            raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 920 + i, 0x7777_0000 + i, 0, 0, 0, new byte[0]);
        }
        awaitCounter("cm.received", received + sent);
        int replies = 0;
        for (int i = 0; i < sent; i++) {
            replies += raw.count(Frame.OP_CM_DISCONNECT_REPLY, 920 + i);
        }
        assertTrue(replies >= 1 && replies <= burst + 1, replies + " replies to " + sent);
        assertTrue(counter("tx.replies_limited") >= sent - burst - 1);
    }

    @Test
    void aCookieOfZeroIsNoCookie() {
        final CompletableFuture<?>[] f = new CompletableFuture<?>[1];
        final int id = connecting(f);
        final long ignored = counter("cm.ignored");
        raw.sendFrame(Frame.OP_CM_COOKIE, 0, 0, id, SERVICE, 0, 0, 0, new byte[0], 0);
        awaitCounter("cm.ignored", ignored + 1);
        raw.send(Frame.OP_CM_REJECT, 0, 0, id, SERVICE, 0, 0, CmImpl.NO_LISTENER, new byte[0]);
        f[0].join();
        final long after = counter("cm.ignored");
        raw.sendFrame(Frame.OP_CM_COOKIE, 0, 0, id, SERVICE, 0, 0, 0, new byte[0], 42);
        awaitCounter("cm.ignored", after + 1);
        assertEquals(after + 1, counter("cm.ignored"), "a cookie for a finished exchange is ignored too");
    }

    @Test
    void privateDataOfExactlyTheMostIsSentAndAnswered() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(41, SERVICE, 1, 4, 4, new byte[0]);
            final byte[] most = new byte[ConnectionManager.MAX_PRIVATE_DATA];
            most[most.length - 1] = 9;
            listener.take(LONG_MS).reject(most);
            assertArrayEquals(most, raw.await(Frame.OP_CM_REJECT, 41).payload());
        }
    }

    @Test
    void anAcceptThatTimedOutIsForgottenOnceItHasLingered() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(42, SERVICE, 1, 4, 4, new byte[0]);
            final io.jdet.ConnectionRequest request = listener.take(LONG_MS);
            assertErrno(Errno.ETIMEDOUT, () -> request.accept(qp, null, 20));
            raw.await(Frame.OP_CM_ACCEPT, 42);
            nic.lock.lock();
            try {
                nic.cm.onTimer(System.nanoTime() + CmRetry.LINGER_NS + 1);
            } finally {
                nic.lock.unlock();
            }
            raw.request(42, SERVICE, 1, 4, 4, new byte[0]);
            assertEquals(42, ((CmRequest) listener.take(LONG_MS)).id, "forgotten: taken as a new request");
        }
    }

    @Test
    void aClosedNicOrQueuePairIsAnIllegalState() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(43, SERVICE, 1, 4, 4, new byte[0]);
            final io.jdet.ConnectionRequest request = listener.take(LONG_MS);
            final QueuePair closed = pd.createQp(QpCreate.of(cq, 2, 1));
            closed.close();
            assertThrows(IllegalStateException.class, () -> cm.disconnect(closed, 10), "a destroyed queue pair");
            qp.close();
            pd.close();
            cq.close();
            nic.close();
            assertThrows(IllegalStateException.class, () -> request.accept(qp, null, 10), "a closed NIC");
        }
    }

    @Test
    void anInterruptedConnectKeepsTheThreadsInterruptStatus() throws Exception {
        final CompletableFuture<Boolean> flagged = new CompletableFuture<>();
        final Thread waiter = Thread.ofPlatform().start(() -> {
            final DetException e = assertThrows(DetException.class,
                () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS));
            assertEquals(Errno.EINTR, e.errno());
            flagged.complete(Thread.currentThread().isInterrupted());
        });
        raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST);
        Tests.await("the connecting thread waits", () -> waiter.getState() == Thread.State.TIMED_WAITING);
        waiter.interrupt();
        assertTrue(flagged.get(LONG_MS, java.util.concurrent.TimeUnit.MILLISECONDS), "the interrupt is not lost");
        waiter.join(LONG_MS);
    }

    private static byte[] bytes(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
