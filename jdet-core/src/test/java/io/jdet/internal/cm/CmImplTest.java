package io.jdet.internal.cm;

import io.jdet.ConnectionListener;
import io.jdet.ConnectionManager;
import io.jdet.ConnectionRequest;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.Nic;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QpState;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The connection manager of one NIC against a peer that speaks raw frames ({@link CmRawPeer}): every exchange
 * played to the end, and every way the peer can get it wrong (repeated, lost, late, foreign, unknown and malformed
 * frames, floods beyond the bounds), besides the argument errors of each call. Each test ends with the engine
 * healthy: whatever the peer sent was answered or dropped, never caught as a failure.
 */
@Timeout(60)
class CmImplTest extends CmVictimCase {
    private static final int SERVICE = 4711;
    private static final int RAW_QP = 555;
    private static final long LONG_MS = 10_000;

    @Override
    protected String fabricTag() {
        return "cm";
    }

    // ---------------------------------------------------------------- passive side

    @Test
    void shouldAbsorbThenRepeatTheAnswerWhenRequestIsRepeated() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(5, SERVICE, 77, 3, 2, bytes("hi"));
            final ConnectionRequest request = listener.take(LONG_MS);
            assertArrayEquals(bytes("hi"), request.privateData());
            assertEquals(77, request.remoteQpNumber());
            assertEquals(3, request.remoteMaxOr());
            assertEquals(2, request.remoteMaxIr());
            assertEquals(SERVICE, request.serviceId());
            assertEquals(raw.address(), request.remoteAddress());
            assertTrue(request.toString().contains(raw.address()), request.toString());

            raw.request(5, SERVICE, 77, 3, 2, bytes("hi")); // repeated while pending: absorbed
            awaitCounter("cm.received", 2);
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0), "the repeat is not a new request");
            assertEquals(0, raw.count(Frame.OP_CM_REJECT, 5) + raw.count(Frame.OP_CM_ACCEPT, 5),
                "nothing answered yet");

            request.reject(bytes("no"));
            final CmRawPeer.Received reject = raw.await(Frame.OP_CM_REJECT, 5);
            assertEquals(CmImpl.REJECTED_BY_PEER, reject.length());
            assertEquals(SERVICE, reject.key());
            assertArrayEquals(bytes("no"), reject.payload());

            raw.request(5, SERVICE, 77, 3, 2, bytes("hi")); // the rejection was lost: it is repeated
            final CmRawPeer.Received again = raw.await(Frame.OP_CM_REJECT, 5);
            assertArrayEquals(bytes("no"), again.payload());
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0));

            assertErrno(Errno.EINVAL, () -> request.accept(qp, null, LONG_MS), "answered already");
            assertErrno(Errno.EINVAL, () -> request.reject(null), "answered already");
            assertEquals(QpState.IDLE, qp.query().state());
        }
    }

    @Test
    void shouldConnectBeforeAcceptingAndReturnWhenRequesterConfirms() throws Exception {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(9, SERVICE, 1234, 8, 2, bytes("req"));
            final ConnectionRequest request = listener.take(LONG_MS);
            final CompletableFuture<Void> accepted = CompletableFuture.runAsync(
                () -> request.accept(qp, bytes("ok"), LONG_MS));
            final CmRawPeer.Received accept = raw.await(Frame.OP_CM_ACCEPT, 9);
            assertEquals(qp.number(), accept.srcQp());
            assertArrayEquals(bytes("ok"), accept.payload());
            assertEquals(2, CmWire.low(accept.operand1()), "max_or lowered to the requester's max_ir");
            assertEquals(4, CmWire.high(accept.operand1()), "this side's max_ir");
            // Connected before the acceptance left: the requester's first frame finds a connected queue pair.
            assertEquals(QpState.CONNECTED, qp.query().state());
            assertEquals(1234, qp.query().remoteQpNum());
            assertEquals(raw.address(), qp.query().remoteAddress());
            assertEquals(2, qp.query().maxOr());

            raw.request(9, SERVICE, 1234, 8, 2, bytes("req")); // the acceptance was lost: it is repeated
            final CmRawPeer.Received repeated = raw.await(Frame.OP_CM_ACCEPT, 9);
            assertEquals(accept.address(), repeated.address(), "the same initial sequence numbers");
            runTimerAt(System.nanoTime() + CmRetry.MAX_INTERVAL_NS * 4);
            // Unconfirmed, the acceptance is resent on the timer as well: a requester that connected but whose
            // READYs (a few) were all lost answers it with READY again, so the accept does not fail while the
            // connect succeeded.
            final CmRawPeer.Received resent = raw.await(Frame.OP_CM_ACCEPT, 9);
            assertEquals(accept.address(), resent.address(), "the same acceptance");
            assertTrue(!accepted.isDone(), "accept returns only when the requester confirmed");

            raw.send(Frame.OP_CM_READY, 0, 1234, 9, SERVICE, 0, 0, 0, new byte[0]);
            accepted.get(LONG_MS, TimeUnit.MILLISECONDS);
            final long ignored = counter("cm.ignored");
            raw.send(Frame.OP_CM_READY, 0, 1234, 9, SERVICE, 0, 0, 0, new byte[0]); // confirmed already
            raw.send(Frame.OP_CM_READY, 0, 1234, 10, SERVICE, 0, 0, 0, new byte[0]); // unknown id
            awaitCounter("cm.ignored", ignored + 2);
            assertEquals(QpState.CONNECTED, qp.query().state());
        }
    }

    @Test
    void shouldForgetAConfirmedRequestOnlyOnceItHasLingered() throws Exception {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(11, SERVICE, 1234, 4, 4, new byte[0]);
            final ConnectionRequest request = listener.take(LONG_MS);
            final CompletableFuture<Void> accepted = CompletableFuture.runAsync(
                () -> request.accept(qp, null, LONG_MS));
            raw.await(Frame.OP_CM_ACCEPT, 11);
            raw.send(Frame.OP_CM_READY, 0, 1234, 11, SERVICE, 0, 0, 0, new byte[0]);
            accepted.get(LONG_MS, TimeUnit.MILLISECONDS);

            runTimerAt(System.nanoTime() + CmRetry.LINGER_NS / 2);
            raw.request(11, SERVICE, 1234, 4, 4, new byte[0]); // a late duplicate: answered as before, not queued
            raw.await(Frame.OP_CM_ACCEPT, 11);
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0), "still remembered: not a new request");

            runTimerAt(System.nanoTime() + CmRetry.LINGER_NS + 1);
            raw.request(11, SERVICE, 1234, 4, 4, new byte[0]);
            assertEquals(11, ((CmRequest) listener.take(LONG_MS)).id, "forgotten: taken as a new request");
        }
    }

    @Test
    void shouldConfirmARepeatedAcceptanceItselfOnceTheReadyResendsAreSpent() throws Exception {
        final CompletableFuture<byte[]> connected = CompletableFuture.supplyAsync(
            () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS));
        final int id = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST).msgId();
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, CmWire.pack(100, 200), CmWire.pack(4, 4), 0,
            new byte[0]);
        connected.get(LONG_MS, TimeUnit.MILLISECONDS);
        // The requester repeats its READY on its own a few times (the listener does not repeat its ACCEPT); run the
        // timer far enough ahead that every one of those is spent, so that only an ACCEPT can bring another.
        final long now = System.nanoTime();
        for (int k = 1; k <= 8; k++) {
            runTimerAt(now + k * CmRetry.MAX_INTERVAL_NS * 2);
        }
        Tests.await("the READY and its 3 repeats", () -> raw.count(Frame.OP_CM_READY, id) == 4);
        runTimerAt(now + 20 * CmRetry.MAX_INTERVAL_NS);
        final long ignored = counter("cm.ignored");
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, CmWire.pack(100, 200), CmWire.pack(4, 4), 0,
            new byte[0]); // the confirmation was lost: confirmed again, at once
        Tests.await("a fifth READY", () -> raw.count(Frame.OP_CM_READY, id) == 5);
        assertEquals(ignored, counter("cm.ignored"), "a repeated ACCEPT of a live exchange is no stray frame");
        assertEquals(QpState.CONNECTED, qp.query().state());
    }

    @Test
    void shouldFailQueuePairWhenRequesterNeverConfirms() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(3, SERVICE, 1234, 4, 4, new byte[0]);
            final ConnectionRequest request = listener.take(LONG_MS);
            assertErrno(Errno.ETIMEDOUT, () -> request.accept(qp, null, 50));
            assertEquals(QpState.ERROR, qp.query().state());
            final long ignored = counter("cm.ignored");
            raw.send(Frame.OP_CM_READY, 0, 1234, 3, SERVICE, 0, 0, 0, new byte[0]); // too late
            awaitCounter("cm.ignored", ignored + 1);
            assertEquals(QpState.ERROR, qp.query().state());
            raw.request(3, SERVICE, 1234, 4, 4, new byte[0]); // a repeat now learns it was refused
            assertEquals(CmImpl.REJECTED_BY_PEER, raw.await(Frame.OP_CM_REJECT, 3).length());
        }
    }

    @Test
    void shouldFailAcceptAtOnceWithEconnresetWhenRequesterAbandonedTheExchange() throws Exception {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(21, SERVICE, 1234, 4, 4, new byte[0]);
            final ConnectionRequest request = listener.take(LONG_MS);
            final CompletableFuture<DetException> failed = CompletableFuture.supplyAsync(
                () -> assertThrows(DetException.class, () -> request.accept(qp, null, LONG_MS)));
            raw.await(Frame.OP_CM_ACCEPT, 21);
            final long ignored = counter("cm.ignored");
            try (CmRawPeer stranger = new CmRawPeer(nic.address())) {
                stranger.send(Frame.OP_CM_REJECT, 0, 0, 21, SERVICE, 0, 0, CmImpl.ABANDONED, new byte[0]);
                awaitCounter("cm.ignored", ignored + 1);
            }
            raw.send(Frame.OP_CM_REJECT, 0, 0, 22, SERVICE, 0, 0, CmImpl.ABANDONED, new byte[0]); // another id
            awaitCounter("cm.ignored", ignored + 2);
            assertTrue(!failed.isDone(), "only the requester's word for this exchange abandons it");

            raw.send(Frame.OP_CM_REJECT, 0, 0, 21, SERVICE, 0, 0, CmImpl.ABANDONED, new byte[0]);
            final DetException e = failed.get(LONG_MS, TimeUnit.MILLISECONDS);
            assertEquals(Errno.ECONNRESET, e.errno(), e.getMessage());
            assertEquals(QpState.ERROR, qp.query().state());
        }
    }

    @Test
    void shouldIgnoreAbandonmentOfAnEstablishedExchange() throws Exception {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(23, SERVICE, 1234, 4, 4, new byte[0]);
            final ConnectionRequest request = listener.take(LONG_MS);
            final CompletableFuture<Void> accepted = CompletableFuture.runAsync(
                () -> request.accept(qp, null, LONG_MS));
            raw.await(Frame.OP_CM_ACCEPT, 23);
            raw.send(Frame.OP_CM_READY, 0, 1234, 23, SERVICE, 0, 0, 0, new byte[0]);
            accepted.get(LONG_MS, TimeUnit.MILLISECONDS);
            final long ignored = counter("cm.ignored");
            raw.send(Frame.OP_CM_REJECT, 0, 0, 23, SERVICE, 0, 0, CmImpl.ABANDONED, new byte[0]); // late or forged
            awaitCounter("cm.ignored", ignored + 1);
            assertEquals(QpState.CONNECTED, qp.query().state());
        }
    }

    @Test
    void shouldFailAcceptWithEconnresetWhenTheConnectOfAnotherNicTimedOutBeforeTheAcceptance() {
        final Nic requester = det.openNic(fabric, null); // closed with the device
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            final QueuePair requesterQp = requester.allocPd().createQp(QpCreate.of(requester.createCq(4, null), 4, 1));
            // The connect gives up while the request waits in the backlog, as a member of a group does when its
            // first request was refused and a retransmission of it reaches the listener after all.
            assertErrno(Errno.ETIMEDOUT, () -> requester.connectionManager().connect(nic.address(), SERVICE,
                requesterQp, null, 30));
            final ConnectionRequest late = listener.take(LONG_MS);
            assertErrno(Errno.ECONNRESET, () -> late.accept(qp, null, LONG_MS));
            assertEquals(QpState.ERROR, qp.query().state());
            assertEquals(QpState.IDLE, requesterQp.query().state());
        }
    }

    @Test
    void shouldRejectAsNobodyListensWhenServiceIsUnknownOrListenerCloses() {
        raw.request(1, SERVICE, 1, 4, 4, new byte[0]);
        assertEquals(CmImpl.NO_LISTENER, raw.await(Frame.OP_CM_REJECT, 1).length());
        final ConnectionListener listener = cm.listen(SERVICE);
        raw.request(2, SERVICE, 1, 4, 4, new byte[0]);
        raw.request(3, SERVICE, 1, 4, 4, new byte[0]);
        awaitCounter("cm.received", 3);
        listener.close();
        assertEquals(CmImpl.NO_LISTENER, raw.await(Frame.OP_CM_REJECT, 2).length());
        assertEquals(CmImpl.NO_LISTENER, raw.await(Frame.OP_CM_REJECT, 3).length());
        listener.close(); // twice does nothing
        assertThrows(IllegalStateException.class, () -> listener.take(0), "closed, as every closed object");
        assertEquals(SERVICE, listener.serviceId());
        assertTrue(listener.toString().contains(String.valueOf(SERVICE)));
        try (ConnectionListener again = cm.listen(SERVICE)) { // the service id is free again
            raw.request(4, SERVICE, 1, 4, 4, new byte[0]);
            again.take(LONG_MS).reject(null);
            assertEquals(CmImpl.REJECTED_BY_PEER, raw.await(Frame.OP_CM_REJECT, 4).length());
        }
    }

    @Test
    void shouldWakeWaiterWithIllegalStateWhenTheNicClosesUnderIt() throws Exception {
        final ConnectionListener listener = cm.listen(SERVICE);
        final CompletableFuture<ConnectionRequest> taking = CompletableFuture.supplyAsync(
            () -> listener.take(LONG_MS));
        Tests.await("a thread waits in take", () -> nic.device.blockedWaiters.get() > 0);
        det.close();
        final ExecutionException e = assertThrows(ExecutionException.class,
            () -> taking.get(LONG_MS / 2, TimeUnit.MILLISECONDS), "not woken: it would wait out its timeout");
        assertInstanceOf(IllegalStateException.class, e.getCause(), "the NIC closed under the waiter");
    }

    @Test
    void shouldWakeWaiterWithIllegalStateWhenListenerClosesUnderIt() throws Exception {
        final ConnectionListener listener = cm.listen(SERVICE);
        final CompletableFuture<ConnectionRequest> taking = CompletableFuture.supplyAsync(
            () -> listener.take(LONG_MS));
        Tests.await("a thread waits in take", () -> nic.device.blockedWaiters.get() > 0);
        listener.close();
        final ExecutionException e = assertThrows(ExecutionException.class,
            () -> taking.get(LONG_MS, TimeUnit.MILLISECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause(), "the listener closed under the waiter");
    }

    @Test
    void shouldRefuseBeyondTheSourceLimitAsIfNobodyListenedAndAdmitAgainOnceForgotten() {
        final int limit = new io.jdet.Configuration().cmPendingPerSource();
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            for (int i = 0; i <= limit; i++) {
                raw.request(1000 + i, SERVICE, 1, 4, 4, new byte[0]);
            }
            final int last = 1000 + limit;
            assertEquals(CmImpl.NO_LISTENER, raw.await(Frame.OP_CM_REJECT, last).length(),
                "one source may have only so many requests waiting");
            assertEquals(1, counter("cm.source_limited"));
            for (int i = 0; i < limit; i++) {
                final ConnectionRequest r = listener.take(0);
                assertEquals(1000 + i, ((CmRequest) r).id, "queued in order");
                r.reject(null);
            }
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0));
            runTimerAt(System.nanoTime() + CmRetry.LINGER_NS + 1); // the refusals have lingered long enough
            raw.request(2, SERVICE, 1, 4, 4, new byte[0]);
            assertEquals(2, ((CmRequest) listener.take(LONG_MS)).id, "room again once forgotten");
        }
    }

    @Test
    void shouldKeepNoStateForRequestsThatAreRefusedOrNotValidated() {
        final long cookies = counter("cm.cookies");
        for (int i = 0; i < 200; i++) {
            raw.sendFrame(Frame.OP_CM_REQUEST, 0, 1, 20_000 + i, SERVICE, 0, CmWire.pack(4, 4), 0, new byte[0], 0);
        }
        awaitCounter("cm.cookies", cookies + 200); // each answered with a cookie, nothing remembered
        raw.sendFrame(Frame.OP_CM_REQUEST, 0, 1, 20_000, SERVICE, 0, CmWire.pack(4, 4), 0, new byte[0], 12345);
        awaitCounter("cm.bad_cookie", 1); // a forged cookie buys nothing but another cookie
        for (int i = 0; i < 100; i++) {
            raw.request(10_000 + i, SERVICE + 1, 1, 4, 4, new byte[0]); // validated, nobody listens: refused
            assertEquals(CmImpl.NO_LISTENER, raw.await(Frame.OP_CM_REJECT, 10_000 + i).length());
        }
        raw.request(10_000, SERVICE + 1, 1, 4, 4, new byte[0]); // not remembered: judged anew, refused anew
        assertEquals(CmImpl.NO_LISTENER, raw.await(Frame.OP_CM_REJECT, 10_000).length());
        try (ConnectionListener listener = cm.listen(SERVICE + 1)) {
            raw.request(10_000, SERVICE + 1, 1, 4, 4, new byte[0]);
            assertEquals(10_000, ((CmRequest) listener.take(LONG_MS)).id, "nothing of the refusal was kept");
        }
    }

    @Test
    void shouldTakeRepeatAsNewRequestWhenTheAnswerHasLingeredOut() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            raw.request(6, SERVICE, 1, 4, 4, new byte[0]);
            listener.take(LONG_MS).reject(null);
            raw.await(Frame.OP_CM_REJECT, 6);
            runTimerAt(System.nanoTime() + CmRetry.LINGER_NS / 2);
            raw.request(6, SERVICE, 1, 4, 4, new byte[0]);
            raw.await(Frame.OP_CM_REJECT, 6);
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0), "still remembered half way through");
            runTimerAt(System.nanoTime() + CmRetry.LINGER_NS + 1);
            raw.request(6, SERVICE, 1, 4, 4, new byte[0]);
            assertEquals(6, ((CmRequest) listener.take(LONG_MS)).id, "forgotten: a new request");
        }
    }

    @Test
    void shouldRejectOversizedPrivateDataAndDropMisaddressedFramesWhenPeerSendsMalformedOnes() {
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            final byte[] big = new byte[ConnectionManager.MAX_PRIVATE_DATA + 44];
            java.util.Arrays.fill(big, (byte) 7);
            raw.request(8, SERVICE, 1, 4, 4, big);
            assertEquals(CmImpl.MALFORMED, raw.await(Frame.OP_CM_REJECT, 8).length(), "more than 256 bytes: malformed");
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0), "a malformed request reaches no listener");

            final long badHeader = counter("rx.bad_header");
            raw.sendFrame(Frame.OP_CM_REQUEST, 42, 1, 9, SERVICE, 0, 0, 0, new byte[0], 0); // not to queue pair 0
            awaitCounter("rx.bad_header", badHeader + 1);
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0), "a misaddressed request is no request");
        }
    }

    // ---------------------------------------------------------------- active side

    @Test
    void shouldConnectWhenPeerAcceptsAndConfirmEveryRepeatedAcceptance() throws Exception {
        final CompletableFuture<byte[]> connected = CompletableFuture.supplyAsync(
            () -> cm.connect(raw.address(), SERVICE, qp, bytes("req"), LONG_MS));
        final CmRawPeer.Received request = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST);
        final int id = request.msgId();
        assertEquals(SERVICE, request.key());
        assertEquals(qp.number(), request.srcQp());
        assertEquals(0, request.dstQp());
        assertArrayEquals(bytes("req"), request.payload());
        assertEquals(4, CmWire.low(request.operand1()), "max_or");
        assertEquals(4, CmWire.high(request.operand1()), "max_ir");
        raw.await(Frame.OP_CM_REQUEST, id); // retransmitted while unanswered
        assertTrue(counter("cm.retransmitted") > 0);

        final long ignored = counter("cm.ignored");
        try (CmRawPeer stranger = new CmRawPeer(nic.address())) {
            stranger.send(Frame.OP_CM_ACCEPT, 0, 99, id, SERVICE, 0, 0, 0, new byte[0]);
            stranger.send(Frame.OP_CM_REJECT, 0, 99, id, SERVICE, 0, 0, CmImpl.REJECTED_BY_PEER, new byte[0]);
            awaitCounter("cm.ignored", ignored + 2);
        }
        assertTrue(!connected.isDone(), "a stranger's answer is not the peer's");
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id + 1, SERVICE, 0, 0, 0, new byte[0]); // an id never sent
        raw.send(Frame.OP_CM_REJECT, 0, RAW_QP, id + 1, SERVICE, 0, 0, CmImpl.NO_LISTENER, new byte[0]);
        awaitCounter("cm.ignored", ignored + 4);

        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, CmWire.pack(100, 200), CmWire.pack(9, 1), 0,
            bytes("acc"));
        assertArrayEquals(bytes("acc"), connected.get(LONG_MS, TimeUnit.MILLISECONDS));
        assertEquals(QpState.CONNECTED, qp.query().state());
        assertEquals(RAW_QP, qp.query().remoteQpNum());
        assertEquals(1, qp.query().maxOr(), "max_or lowered to the acceptor's max_ir");
        raw.await(Frame.OP_CM_READY, id);

        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, CmWire.pack(100, 200), CmWire.pack(9, 1), 0,
            bytes("acc")); // the confirmation was lost: confirmed again
        assertEquals(qp.number(), raw.await(Frame.OP_CM_READY, id).srcQp());
        raw.send(Frame.OP_CM_REJECT, 0, RAW_QP, id, SERVICE, 0, 0, CmImpl.REJECTED_BY_PEER, new byte[0]);
        awaitCounter("cm.ignored", ignored + 5);
        assertEquals(QpState.CONNECTED, qp.query().state(), "a late rejection changes nothing");

        runTimerAt(System.nanoTime() + CmRetry.LINGER_NS + 1); // the exchange is forgotten
        final int readies = raw.count(Frame.OP_CM_READY, id); // the requester's own READY repeats, if any came
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, 0, 0, 0, new byte[0]);
        awaitCounter("cm.ignored", ignored + 6);
        assertEquals(readies, raw.count(Frame.OP_CM_READY, id));
    }

    @Test
    void shouldRefuseWithEconnrefusedWhenPeerRejectsOrNobodyListens() {
        final java.util.Set<Integer> earlier = new java.util.HashSet<>();
        for (final int reason : new int[] {CmImpl.REJECTED_BY_PEER, CmImpl.NO_LISTENER}) {
            final long ignored = counter("cm.ignored");
            final CompletableFuture<DetException> refused = CompletableFuture.supplyAsync(
                () -> assertThrows(DetException.class, () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS)));
            final int id = raw.await("a new request", r -> r.opcode() == Frame.OP_CM_REQUEST
                && !earlier.contains(r.msgId())).msgId();
            earlier.add(id);
            raw.send(Frame.OP_CM_REJECT, 0, 0, id, SERVICE, 0, 0, reason, bytes("why"));
            final DetException e = refused.join();
            assertEquals(Errno.ECONNREFUSED, e.errno());
            assertTrue(e.getMessage().contains(reason == CmImpl.NO_LISTENER ? "nobody listens" : "rejected"),
                e.getMessage());
            assertEquals(QpState.IDLE, qp.query().state());
            raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, 0, 0, 0, new byte[0]); // forgotten at once
            awaitCounter("cm.ignored", ignored + 1);
            assertEquals(QpState.IDLE, qp.query().state());
        }
    }

    @Test
    void shouldFailConnectWithEinvalWhenQueuePairLeavesIdleBeforeTheAcceptance() {
        final CompletableFuture<DetException> failed = CompletableFuture.supplyAsync(
            () -> assertThrows(DetException.class, () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS)));
        final int id = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST).msgId();
        qp.modify(new QpModify().state(QpState.ERROR));
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, 0, 0, 0, new byte[0]);
        assertEquals(Errno.EINVAL, failed.join().errno());
        assertEquals(QpState.ERROR, qp.query().state(), "not connected by the late acceptance");
        assertEquals(0, raw.count(Frame.OP_CM_READY, id), "nothing confirmed");
    }

    @Test
    void shouldNotConnectWhenAnAcceptanceFollowsTheRejection() {
        final CompletableFuture<DetException> refused = CompletableFuture.supplyAsync(
            () -> assertThrows(DetException.class, () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS)));
        final int id = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST).msgId();
        final long ignored = counter("cm.ignored");
        // Back to back: the engine takes both before the connecting thread runs again.
        raw.send(Frame.OP_CM_REJECT, 0, RAW_QP, id, SERVICE, 0, 0, CmImpl.REJECTED_BY_PEER, new byte[0]);
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, 0, 0, 0, new byte[0]);
        assertEquals(Errno.ECONNREFUSED, refused.join().errno());
        awaitCounter("cm.ignored", ignored + 1);
        assertEquals(QpState.IDLE, qp.query().state(), "a refused connection stays refused");
        assertEquals(0, raw.count(Frame.OP_CM_READY, id));
    }

    @Test
    void shouldFailConnectWithEinvalWhenQueuePairIsDestroyedWhileConnecting() {
        final CompletableFuture<DetException> failed = CompletableFuture.supplyAsync(
            () -> assertThrows(DetException.class, () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS)));
        final int id = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST).msgId();
        qp.close();
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, 0, 0, 0, new byte[0]);
        assertEquals(Errno.EINVAL, failed.join().errno());
        assertEquals(0, raw.count(Frame.OP_CM_READY, id), "nothing confirmed");
    }

    @Test
    void shouldTimeOutConnectAndForgetItWhenNobodyAnswers() {
        assertErrno(Errno.ETIMEDOUT, () -> cm.connect(raw.address(), SERVICE, qp, null, 30));
        final int id = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST).msgId();
        final long ignored = counter("cm.ignored");
        raw.send(Frame.OP_CM_ACCEPT, 0, RAW_QP, id, SERVICE, 0, 0, 0, new byte[0]);
        awaitCounter("cm.ignored", ignored + 1);
        assertEquals(QpState.IDLE, qp.query().state());
        assertEquals(CmImpl.ABANDONED, raw.await(Frame.OP_CM_REJECT, id).length(),
            "the acceptor learns at once that nobody waits for its acceptance");
    }

    @Test
    void shouldFailWithEintrWhenConnectingThreadIsInterrupted() throws Exception {
        // A thread of its own: the interrupt status it is left with must not leak into a shared pool.
        final CompletableFuture<DetException> interrupted = new CompletableFuture<>();
        final Thread waiter = Thread.ofPlatform().start(() -> interrupted.complete(assertThrows(DetException.class,
            () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS))));
        raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST);
        Tests.await("the connecting thread waits", () -> waiter.getState() == Thread.State.TIMED_WAITING);
        waiter.interrupt();
        assertEquals(Errno.EINTR, interrupted.get(LONG_MS, TimeUnit.MILLISECONDS).errno());
        waiter.join(LONG_MS);
    }

    // ---------------------------------------------------------------- disconnect

    @Test
    void shouldDisconnectOnlyWhenTheConnectedPeerAsksAndAnswerEveryAsking() {
        connectToRaw();
        final long foreign = counter("rx.foreign_source");
        try (CmRawPeer stranger = new CmRawPeer(nic.address())) {
            stranger.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 7, qp.number(), 0, 0, 0, new byte[0]);
            awaitCounter("rx.foreign_source", foreign + 1);
            assertEquals(0, stranger.count(Frame.OP_CM_DISCONNECT_REPLY, 7), "a stranger gets no answer");
        }
        raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP + 1, 7, qp.number(), 0, 0, 0, new byte[0]); // wrong queue pair
        awaitCounter("rx.foreign_source", foreign + 2);
        assertEquals(QpState.CONNECTED, qp.query().state());

        raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 7, qp.number(), 0, 0, 0, new byte[0]);
        final CmRawPeer.Received reply = raw.await(Frame.OP_CM_DISCONNECT_REPLY, 7);
        assertEquals(qp.number(), reply.srcQp());
        assertEquals(RAW_QP, reply.key());
        assertEquals(QpState.IDLE, qp.query().state());
        raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 7, qp.number(), 0, 0, 0, new byte[0]); // the reply was lost
        raw.await(Frame.OP_CM_DISCONNECT_REPLY, 7);
        raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 8, 0x7F_FFFF, 0, 0, 0, new byte[0]); // no such queue pair
        raw.await(Frame.OP_CM_DISCONNECT_REPLY, 8);
        assertEquals(QpState.IDLE, qp.query().state());
    }

    @Test
    void shouldNotDisconnectWhenTheQueuePairNumberIsStale() {
        connectToRaw();
        final int stale = qp.number() ^ 0x0100_0000; // the same table index, another generation
        raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 9, stale, 0, 0, 0, new byte[0]);
        raw.await(Frame.OP_CM_DISCONNECT_REPLY, 9); // answered as for a queue pair that is gone
        assertEquals(QpState.CONNECTED, qp.query().state(), "the live queue pair is not the stale one");
    }

    @Test
    void shouldReturnWhenBothEndsDisconnectAtOnce() throws Exception {
        connectToRaw();
        final CompletableFuture<Void> done = CompletableFuture.runAsync(() -> cm.disconnect(qp, LONG_MS));
        final CmRawPeer.Received ask = raw.await("a disconnect", r -> r.opcode() == Frame.OP_CM_DISCONNECT);
        raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 21, qp.number(), 0, 0, 0, new byte[0]); // crossing requests
        done.get(LONG_MS, TimeUnit.MILLISECONDS);
        assertEquals(QpState.IDLE, qp.query().state());
        raw.await(Frame.OP_CM_DISCONNECT_REPLY, 21);
        final long ignored = counter("cm.ignored");
        raw.send(Frame.OP_CM_DISCONNECT_REPLY, 0, RAW_QP, ask.msgId(), qp.number(), 0, 0, 0, new byte[0]);
        awaitCounter("cm.ignored", ignored + 1); // the request was dropped once the peer closed first
    }

    /**
     * A peer that takes nothing fills its ring; answers are then refused, counted and lost, and every other one
     * arrives once the peer takes frames again. How many fit depends on how the requests were drained: the first
     * answer of an engine pass goes alone (refused once the ring is full), and answers after it in the same pass are
     * staged and share slots.
     */
    @Test
    void shouldCountLinkBusyAndLoseTheAnswerWhenPeerRingIsFull() {
        try (CmRawPeer full = new CmRawPeer(nic.address(), 8)) {
            full.stopTaking();
            final int requests = 3000; // each is answered with a cookie; 8 slots and one staging hold far fewer
            for (int i = 0; i < requests; i++) {
                full.sendFrame(Frame.OP_CM_REQUEST, 0, 1, 300 + i, SERVICE, 0, CmWire.pack(4, 4), 0, new byte[0], 0);
            }
            awaitCounter("cm.received", requests);
            final long busy = counter("link.busy");
            assertTrue(busy > 0 && busy <= requests - 8, "at least the ring's 8 slots of answers fit, then answers "
                + "found no room: " + nic.counters());
            Tests.await("every answer not refused arrives", () -> full.count(Frame.OP_CM_COOKIE) >= requests - busy);
            assertEquals(requests - busy, full.count(Frame.OP_CM_COOKIE), "none twice: " + nic.counters());
        }
    }

    @Test
    void shouldDisconnectWhenPeerAnswersAndIgnoreOtherAnswers() throws Exception {
        connectToRaw();
        final CompletableFuture<Void> done = CompletableFuture.runAsync(() -> cm.disconnect(qp, LONG_MS));
        final CmRawPeer.Received ask = raw.await("a disconnect", r -> r.opcode() == Frame.OP_CM_DISCONNECT);
        assertEquals(RAW_QP, ask.key());
        assertEquals(qp.number(), ask.srcQp());
        raw.await(Frame.OP_CM_DISCONNECT, ask.msgId()); // retransmitted while unanswered
        final long ignored = counter("cm.ignored");
        try (CmRawPeer stranger = new CmRawPeer(nic.address())) {
            stranger.send(Frame.OP_CM_DISCONNECT_REPLY, 0, RAW_QP, ask.msgId(), qp.number(), 0, 0, 0, new byte[0]);
            awaitCounter("cm.ignored", ignored + 1);
        }
        raw.send(Frame.OP_CM_DISCONNECT_REPLY, 0, RAW_QP, ask.msgId() + 1, qp.number(), 0, 0, 0, new byte[0]);
        awaitCounter("cm.ignored", ignored + 2);
        assertTrue(!done.isDone());
        raw.send(Frame.OP_CM_DISCONNECT_REPLY, 0, RAW_QP, ask.msgId(), qp.number(), 0, 0, 0, new byte[0]);
        done.get(LONG_MS, TimeUnit.MILLISECONDS);
        assertEquals(QpState.IDLE, qp.query().state());
        raw.send(Frame.OP_CM_DISCONNECT_REPLY, 0, RAW_QP, ask.msgId(), qp.number(), 0, 0, 0, new byte[0]);
        awaitCounter("cm.ignored", ignored + 3); // forgotten once answered
    }

    @Test
    void shouldDisconnectLocallyWithEtimedoutWhenPeerNeverAnswers() {
        connectToRaw();
        assertErrno(Errno.ETIMEDOUT, () -> cm.disconnect(qp, 50));
        assertEquals(QpState.IDLE, qp.query().state(), "nothing was outstanding: IDLE, not ERROR");
        raw.await("a disconnect", r -> r.opcode() == Frame.OP_CM_DISCONNECT);
    }

    @Test
    void shouldFlushWithEtimedoutWhenOutstandingWorkDoesNotFinish() {
        connectToRaw();
        try (var arena = java.lang.foreign.Arena.ofShared()) {
            final var mr = pd.regMr(arena.allocate(64), io.jdet.Access.LOCAL_READ);
            qp.send(1, new io.jdet.DataSegment[] {new io.jdet.DataSegment().set(mr, 0, 8)}, 1, 0, 0);
            assertErrno(Errno.ETIMEDOUT, () -> cm.disconnect(qp, 50)); // the peer never acknowledges the send
            assertEquals(QpState.ERROR, qp.query().state(), "flushed work makes it an error");
            assertEquals(WcStatus.FLUSHED, Tests.pollOne(cq).status());
            assertEquals(0, raw.count(Frame.OP_CM_DISCONNECT), "the peer was not asked");
            mr.close();
        }
    }

    @Test
    void shouldReturnQuietlyWhenPeerDisconnectsWhileOutstandingWorkDrains() throws Exception {
        connectToRaw();
        try (var arena = java.lang.foreign.Arena.ofShared()) {
            final var mr = pd.regMr(arena.allocate(64), io.jdet.Access.LOCAL_READ);
            qp.send(1, new io.jdet.DataSegment[] {new io.jdet.DataSegment().set(mr, 0, 8)}, 1, 0, 0);
            final CompletableFuture<Void> done = CompletableFuture.runAsync(() -> cm.disconnect(qp, LONG_MS));
            Tests.await("the disconnecting thread waits", () -> nic.device.blockedWaiters.get() > 0);
            raw.send(Frame.OP_CM_DISCONNECT, 0, RAW_QP, 12, qp.number(), 0, 0, 0, new byte[0]);
            done.get(LONG_MS, TimeUnit.MILLISECONDS); // the peer closed it first: nothing left to close
            raw.await(Frame.OP_CM_DISCONNECT_REPLY, 12);
            assertEquals(QpState.ERROR, qp.query().state(), "the send was flushed");
            assertEquals(WcStatus.FLUSHED, Tests.pollOne(cq).status());
            assertEquals(0, raw.count(Frame.OP_CM_DISCONNECT), "nobody asked the peer, who had closed already");
            mr.close();
        }
    }

    // ---------------------------------------------------------------- argument errors

    @Test
    void shouldFailWithDocumentedErrorsWhenArgumentsAreWrong() throws Exception {
        final String peer = raw.address();
        assertErrno(Errno.EINVAL, () -> cm.connect(peer, SERVICE, qp, null, -1), "negative timeout");
        assertErrno(Errno.EINVAL, () -> cm.connect(peer, SERVICE, qp, new byte[ConnectionManager.MAX_PRIVATE_DATA
            + 1], 10), "private data too long");
        assertErrno(Errno.ENODEV, () -> cm.connect("loop:elsewhere/1", SERVICE, qp, null, 10), "another fabric");
        try (Det other = Det.open()) {
            final Nic otherNic = other.openNic(Tests.uniqueFabric("cm-other"), null);
            final QueuePair foreign = otherNic.allocPd().createQp(QpCreate.of(otherNic.createCq(4, null), 2, 1));
            assertErrno(Errno.EINVAL, () -> cm.connect(peer, SERVICE, foreign, null, 10), "another NIC's QP");
            assertErrno(Errno.EINVAL, () -> cm.disconnect(foreign, 10), "another NIC's QP");
        }
        assertErrno(Errno.EINVAL, () -> cm.connect(peer, SERVICE, null, null, 10), "no queue pair");
        assertErrno(Errno.ENOTCONN, () -> cm.disconnect(qp, 10), "IDLE");
        assertErrno(Errno.EINVAL, () -> cm.disconnect(qp, -1), "negative timeout");
        try (ConnectionListener listener = cm.listen(SERVICE)) {
            assertErrno(Errno.EEXIST, () -> cm.listen(SERVICE));
            assertErrno(Errno.EINVAL, () -> listener.take(-1));
            assertErrno(Errno.ETIMEDOUT, () -> listener.take(0));
            raw.request(1, SERVICE, 1, 4, 4, new byte[0]);
            final ConnectionRequest request = listener.take(LONG_MS);
            assertErrno(Errno.EINVAL, () -> request.accept(qp, null, -1), "negative timeout");
            assertErrno(Errno.EINVAL, () -> request.accept(qp, new byte[ConnectionManager.MAX_PRIVATE_DATA + 1],
                10), "private data too long");
            assertErrno(Errno.EINVAL, () -> request.reject(new byte[ConnectionManager.MAX_PRIVATE_DATA + 1]));
            final QueuePair busy = pd.createQp(QpCreate.of(cq, 2, 1));
            busy.modify(new QpModify().state(QpState.ERROR));
            assertErrno(Errno.EINVAL, () -> request.accept(busy, null, 10), "a queue pair in ERROR");
            busy.close();
            assertThrows(IllegalStateException.class, () -> request.accept(busy, null, 10), "a destroyed queue pair");
            connectToRaw();
            assertErrno(Errno.EINVAL, () -> request.accept(qp, null, 10), "a connected queue pair");
            assertErrno(Errno.EINVAL, () -> cm.connect(peer, SERVICE, qp, null, 10), "a connected queue pair");
            request.reject(null); // still pending after every refused answer
            raw.await(Frame.OP_CM_REJECT, 1);
        }
        assertErrno(Errno.ETIMEDOUT, () -> cm.disconnect(qp, 0), "no time to wait for the answer");
        final Nic closed = det.openNic(Tests.uniqueFabric("cm-closed"), null);
        final ConnectionManager closedCm = closed.connectionManager();
        closed.close();
        assertThrows(IllegalStateException.class, () -> closedCm.listen(SERVICE));
        assertThrows(IllegalStateException.class, () -> closedCm.connect(peer, SERVICE, qp, null, 10));
    }

    // ---------------------------------------------------------------- helpers

    /** Connects the queue pair to the raw peer's queue pair {@link #RAW_QP} directly, without a handshake. */
    private void connectToRaw() {
        qp.modify(new QpModify().connect(raw.address(), RAW_QP, CmWire.pack(1, 1)).localPsn(CmWire.pack(1, 1)));
    }

    /** Runs the connection manager's timer at a given time, as the progress thread would. */
    private void runTimerAt(final long now) {
        nic.lock.lock();
        try {
            nic.cm.onTimer(now);
        } finally {
            nic.lock.unlock();
        }
    }

    private long counter(final String name) {
        return nic.counters().get(name);
    }

    private void awaitCounter(final String name, final long atLeast) {
        Tests.await(name + " reaches " + atLeast, () -> counter(name) >= atLeast);
    }

    private static byte[] bytes(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
