package io.jdet.internal.cm;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.QpState;
import io.jdet.Security;
import io.jdet.internal.wire.Frame;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A protected connect against a raw acceptor that runs the real key agreement ({@link CmHandshake}) and so can
 * play an ACCEPT exactly as a listener would, or one an on-path attacker altered. PROTOCOL.md 14.1: on a failed
 * check the requester "still sends a CM_READY whose MAC cannot verify, so that the acceptor's {@code accept} fails
 * with EACCES at once".
 */
@Timeout(60)
class CmProtectedAcceptTest extends CmVictimCase {
    private static final int SERVICE = 4712;
    private static final int RAW_QP = 556;
    private static final long LONG_MS = 10_000;
    private static final int ACC_REQ_ISN = 0x1234_5678;
    private static final int ACC_RSP_ISN = 0x0ABC_DEF0;
    private static final long ACC_LIMITS = CmWire.pack(4, 4);

    @Override
    protected String fabricTag() {
        return "cmsec";
    }

    @BeforeEach
    void protect() {
        cm.security(Security.of(Security.Mode.AUTH));
    }

    /** The acceptor's half: takes the request's block, derives, and returns the ACCEPT's block and MAC. */
    private static byte[] acceptBlock(final CmHandshake acceptor, final CmRawPeer.Received request) {
        assertEquals(CmHandshake.BLOCK_LENGTH, request.payload().length, "no private data: the block alone");
        assertEquals(null, acceptor.takePeer(request.payload()));
        assertEquals(null, acceptor.derive(false, CmHandshake.fields(SERVICE, request.msgId(), request.srcQp(),
            RAW_QP, CmWire.low(request.address()), CmWire.high(request.address()), ACC_REQ_ISN, ACC_RSP_ISN, 0L,
            request.operand1(), ACC_LIMITS, new byte[0], new byte[0])));
        final byte[] block = acceptor.block();
        final byte[] mac = acceptor.serverMac();
        final byte[] out = Arrays.copyOf(block, block.length + mac.length);
        System.arraycopy(mac, 0, out, block.length, mac.length);
        return out;
    }

    private void sendAccept(final int id, final byte[] block) {
        raw.sendFrame(Frame.OP_CM_ACCEPT, Frame.FLAG_PROTECTED, 0, RAW_QP, id, SERVICE,
            CmWire.pack(ACC_REQ_ISN, ACC_RSP_ISN), ACC_LIMITS, 0, block, 0);
    }

    @Test
    void anUnalteredAcceptConnectsAndTheReadyProvesTheKeys() throws Exception {
        final CompletableFuture<byte[]> connected = CompletableFuture.supplyAsync(
            () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS));
        final CmRawPeer.Received request = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST);
        final CmHandshake acceptor = new CmHandshake(Security.of(Security.Mode.AUTH));
        sendAccept(request.msgId(), acceptBlock(acceptor, request));
        connected.get(LONG_MS, TimeUnit.MILLISECONDS);
        assertEquals(QpState.CONNECTED, qp.query().state());
        final CmRawPeer.Received ready = raw.await(Frame.OP_CM_READY, request.msgId());
        assertTrue(acceptor.peerMacValid(false, ready.payload()), "the harness's transcript is the requester's");
    }

    /**
     * An on-path attacker flips one bit of the acceptor's confirmation MAC, nothing else: the requester's connect
     * fails (EACCES), so its READY must not verify either, or the acceptor's {@code accept} succeeds and it holds a
     * connection (CONNECTED, keyed) whose other end was never connected: half open, which the spec rules out.
     */
    @Test
    void anAcceptWithAnAlteredMacGetsAReadyThatCannotVerify() throws Exception {
        final CompletableFuture<byte[]> connected = CompletableFuture.supplyAsync(
            () -> cm.connect(raw.address(), SERVICE, qp, null, LONG_MS));
        final CmRawPeer.Received request = raw.await("a request", r -> r.opcode() == Frame.OP_CM_REQUEST);
        final CmHandshake acceptor = new CmHandshake(Security.of(Security.Mode.AUTH));
        final byte[] block = acceptBlock(acceptor, request);
        block[block.length - 1] ^= 1; // the MAC's last bit, on the way
        sendAccept(request.msgId(), block);
        final ExecutionException e = assertThrows(ExecutionException.class,
            () -> connected.get(LONG_MS, TimeUnit.MILLISECONDS));
        assertEquals(Errno.EACCES, assertInstanceOf(DetException.class, e.getCause()).errno());
        assertEquals(QpState.IDLE, qp.query().state());
        final CmRawPeer.Received ready = raw.await(Frame.OP_CM_READY, request.msgId());
        assertFalse(acceptor.peerMacValid(false, ready.payload()),
            "the requester gave up, yet its READY proves the keys: the acceptor would be left connected alone");
    }
}
