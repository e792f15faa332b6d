package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The connection manager against a hostile peer: a request or an acceptance whose max_or or max_ir is out of
 * range (a negative max_ir used to lower the local max_or below 0, so that no read ever started and everything
 * behind it hung), or that names queue pair 0, is refused; a valid one connects, with max_or lowered to the peer's
 * max_ir.
 */
@Timeout(60)
class HostileHandshakeTest {
    private static final int SERVICE = 7;

    private static long pack(final int low, final int high) {
        return (low & 0xFFFF_FFFFL) | (long) high << 32;
    }

    private static int high(final long packed) {
        return (int) (packed >>> 32);
    }

    /** The peer asks the victim's NIC for a connection; returns the victim's answer. */
    private static HostilePeer.Received request(final HostileSetup s, final int srcQp, final int maxOr,
                                                final int maxIr) {
        s.peer.control(Frame.OP_CM_REQUEST).dst(0).src(srcQp).msgId(0x5151).key(SERVICE).address(pack(100, 200))
            .operands(pack(maxOr, maxIr), 0).send();
        // No state before the address is validated: the answer is a cookie, which the request must repeat.
        final long cookie = s.peer.expect(Frame.OP_CM_COOKIE).operand2();
        s.peer.control(Frame.OP_CM_REQUEST).dst(0).src(srcQp).msgId(0x5151).key(SERVICE).address(pack(100, 200))
            .operands(pack(maxOr, maxIr), cookie).send();
        return s.peer.expect("a connection manager answer",
            r -> r.opcode() == Frame.OP_CM_ACCEPT || r.opcode() == Frame.OP_CM_REJECT);
    }

    private static HostileSetup idleVictim() {
        return new HostileSetup(new Configuration(), false);
    }

    private static void expectMalformedRequestRefused(final int srcQp, final int maxOr, final int maxIr) {
        try (HostileSetup s = idleVictim(); ConnectionListener listener = s.lo.nicA.connectionManager()
            .listen(SERVICE)) {
            final HostilePeer.Received answer = request(s, srcQp, maxOr, maxIr);
            assertEquals(Frame.OP_CM_REJECT, answer.opcode(), answer.toString());
            assertEquals(3, answer.length(), "reject reason: malformed");
            assertEquals(1, s.counter("cm.malformed"));
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldRejectRequestWithNegativeMaxIr() {
        expectMalformedRequestRefused(HostilePeer.QP_NUMBER, 4, -1);
    }

    @Test
    void shouldRejectRequestWithMaxOrAboveLimit() {
        expectMalformedRequestRefused(HostilePeer.QP_NUMBER, 1 << 20, 4);
    }

    @Test
    void shouldRejectRequestFromQueuePairZero() {
        expectMalformedRequestRefused(0, 4, 4);
    }

    @Test
    void shouldOfferValidRequestToListener() {
        try (HostileSetup s = idleVictim(); ConnectionListener listener = s.lo.nicA.connectionManager()
            .listen(SERVICE)) {
            s.peer.control(Frame.OP_CM_REQUEST).dst(0).msgId(0x5151).key(SERVICE).address(pack(100, 200))
                .operands(pack(4, 2), 0).payload(new byte[] {9}).send();
            final long cookie = s.peer.expect(Frame.OP_CM_COOKIE).operand2();
            s.peer.control(Frame.OP_CM_REQUEST).dst(0).msgId(0x5151).key(SERVICE).address(pack(100, 200))
                .operands(pack(4, 2), cookie).payload(new byte[] {9}).send();
            final ConnectionRequest r = listener.take(Tests.TIMEOUT.toMillis());
            assertEquals(2, r.remoteMaxIr());
            assertArrayEquals(new byte[] {9}, r.privateData());
            assertEquals(0, s.counter("cm.malformed"));
        }
    }

    /** The victim connects to the peer in the background; the peer answers its request with an acceptance. */
    private static CompletableFuture<byte[]> acceptWith(final HostileSetup s, final int maxIr, final int srcQp) {
        final CompletableFuture<byte[]> connect = CompletableFuture.supplyAsync(() -> s.lo.nicA.connectionManager()
            .connect(s.peer.address(), SERVICE, s.qp(), null, Tests.TIMEOUT.toMillis()));
        final HostilePeer.Received request = s.peer.expect(Frame.OP_CM_REQUEST);
        s.peer.control(Frame.OP_CM_ACCEPT).dst(0).src(srcQp).msgId(request.msgId()).key(SERVICE)
            .address(pack(1000, 2000)).operands(pack(4, maxIr), 0).payload(new byte[] {7}).send();
        s.peer.startStreams(1000, 2000, (int) request.address(), high(request.address()));
        return connect;
    }

    private static void expectConnectRefused(final int maxIr, final int srcQp) throws InterruptedException {
        try (HostileSetup s = idleVictim()) {
            final CompletableFuture<byte[]> connect = acceptWith(s, maxIr, srcQp);
            final ExecutionException e = assertThrows(ExecutionException.class,
                () -> connect.get(Tests.TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(Errno.ECONNREFUSED, assertInstanceOf(DetException.class, e.getCause()).errno());
            assertEquals(QpState.IDLE, s.qp().query().state());
            assertEquals(1, s.counter("cm.malformed"));
            s.assertNoEngineErrors();
        }
    }

    @Test
    void shouldRefuseAcceptanceWithNegativeMaxIr() throws InterruptedException {
        expectConnectRefused(-1, HostilePeer.QP_NUMBER);
    }

    @Test
    void shouldRefuseAcceptanceWithMaxIrAboveLimit() throws InterruptedException {
        expectConnectRefused(Integer.MAX_VALUE, HostilePeer.QP_NUMBER);
    }

    @Test
    void shouldRefuseAcceptanceFromQueuePairZero() throws InterruptedException {
        expectConnectRefused(4, 0);
    }

    @Test
    void shouldConnectAndReadWhenAcceptanceIsValid() throws Exception {
        try (HostileSetup s = idleVictim()) {
            final CompletableFuture<byte[]> connect = acceptWith(s, 2, HostilePeer.QP_NUMBER);
            assertArrayEquals(new byte[] {7}, connect.get(Tests.TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            s.peer.expect(Frame.OP_CM_READY);
            assertEquals(2, s.qp().query().maxOr(), "max_or lowered to the peer's max_ir");
            s.qp().read(1, Loopback.sge(s.lo.mrA, 0, 4), 1, 0x1000, 0x77, 0);
            final HostilePeer.Received read = s.peer.expect(Frame.OP_READ);
            s.peer.response(Frame.OP_READ_RESP).flags(Frame.FLAG_LAST).msgId(read.msgId()).length(4)
                .payload(new byte[] {1, 2, 3, 4}).send();
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(s.lo.cqA).status());
            s.assertConnected();
        }
    }
}
