package io.jdet.systest;

import io.jdet.ConnectionListener;
import io.jdet.ConnectionRejectedException;
import io.jdet.ConnectionRequest;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.QpState;
import io.jdet.WcStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The connection manager between two UDP NICs of one JVM, with and without injected faults. */
@Timeout(60)
class ConnectionManagerTest {
    private static final int SERVICE = 4242;

    @Test
    void shouldConnectExchangePrivateDataAndDisconnectGracefully() throws Exception {
        try (Det det = Det.open()) {
            handshakeTwice(det, det, "udp:127.0.0.1");
        }
    }

    @Test
    void shouldWorkOnTheInProcessFabricToo() throws Exception {
        try (Det det = Det.open()) {
            handshakeTwice(det, det, "loop:cm-test");
        }
    }

    @Test
    void shouldWorkOnTheSharedMemoryLinkToo() throws Exception {
        try (Det det = Det.open()) {
            handshakeTwice(det, det, "shm:cm-test-" + ProcessHandle.current().pid());
        }
    }

    @Test
    void shouldConnectAndDisconnectUnderFaults() throws Exception {
        try (Det a = Det.open(FaultyUdpInProcessTest.faulty(11).ackTimeoutMs(2000));
             Det b = Det.open(FaultyUdpInProcessTest.faulty(12).ackTimeoutMs(2000))) {
            for (int i = 0; i < 5; i++) {
                handshakeTwice(a, b, "udp:127.0.0.1");
            }
        }
    }

    private static void handshakeTwice(final Det serverDet, final Det clientDet, final String nicName)
        throws Exception {
        try (Endpoint server = new Endpoint(serverDet, nicName, 1 << 16, 16);
             Endpoint client = new Endpoint(clientDet, nicName, 1 << 16, 16);
             ConnectionListener listener = server.nic.connectionManager().listen(SERVICE)) {
            for (int round = 0; round < 2; round++) {
                final byte[] hello = ("hello " + round).getBytes(StandardCharsets.UTF_8);
                final CompletableFuture<byte[]> connected = CompletableFuture.supplyAsync(
                    () -> client.nic.connectionManager().connect(server.nic.address(), SERVICE, client.qp, hello,
                        20_000));
                final ConnectionRequest request = listener.take(20_000);
                assertArrayEquals(hello, request.privateData());
                assertEquals(client.qp.number(), request.remoteQpNumber());
                assertEquals(client.nic.address(), request.remoteAddress());
                assertEquals(16, request.remoteMaxIr());
                // The server may post at once: the race DET had (a first frame reaching an unconnected queue
                // pair) is closed because accept returns only when the client is connected.
                client.qp.recv(1, client.at(0, 64), 1);
                request.accept(server.qp, new byte[] {7, (byte) round}, 20_000);
                server.buffer.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, 0xC0FFEE + round);
                server.qp.send(2, server.at(0, 4), 1, 0, 0);
                assertArrayEquals(new byte[] {7, (byte) round}, connected.get(20, TimeUnit.SECONDS));
                assertEquals(QpState.CONNECTED, client.qp.query().state());
                assertEquals(server.qp.number(), client.qp.query().remoteQpNum());
                final var got = client.received(1, 20_000).get(0);
                assertEquals(WcStatus.SUCCESS, got.status());
                assertEquals(0xC0FFEE + round, client.buffer.get(java.lang.foreign.ValueLayout.JAVA_INT, 0));
                assertEquals(WcStatus.SUCCESS, server.sent(1, 20_000).get(0).status());

                client.nic.connectionManager().disconnect(client.qp, 20_000);
                assertEquals(QpState.IDLE, client.qp.query().state());
                server.awaitState(QpState.IDLE, 20_000); // the peer's disconnect reaches it
            }
        }
    }

    @Test
    void shouldRefuseWhenRejectedOrNobodyListens() throws Exception {
        try (Det det = Det.open(); Endpoint server = new Endpoint(det, "udp:127.0.0.1", 4096, 4);
             Endpoint client = new Endpoint(det, "udp:127.0.0.1", 4096, 4)) {
            final var cm = client.nic.connectionManager();
            final ConnectionRejectedException none = assertThrows(ConnectionRejectedException.class,
                () -> cm.connect(server.nic.address(), SERVICE, client.qp, null, 10_000));
            assertEquals(Errno.ECONNREFUSED, none.errno());
            assertEquals(ConnectionRejectedException.Reason.NO_LISTENER, none.reason());
            assertArrayEquals(new byte[0], none.privateData());
            assertEquals(QpState.IDLE, client.qp.query().state());
            try (ConnectionListener listener = server.nic.connectionManager().listen(SERVICE)) {
                assertEquals(Errno.EEXIST, assertThrows(DetException.class,
                    () -> server.nic.connectionManager().listen(SERVICE)).errno());
                final CompletableFuture<ConnectionRejectedException> refused = CompletableFuture.supplyAsync(
                    () -> assertThrows(ConnectionRejectedException.class,
                        () -> cm.connect(server.nic.address(), SERVICE, client.qp, null, 10_000)));
                final ConnectionRequest request = listener.take(10_000);
                final byte[] why = "full: try udp:127.0.0.1:7001".getBytes(StandardCharsets.UTF_8);
                request.reject(why);
                final ConnectionRejectedException rejected = refused.get(10, TimeUnit.SECONDS);
                assertEquals(Errno.ECONNREFUSED, rejected.errno());
                assertEquals(ConnectionRejectedException.Reason.REJECTED, rejected.reason());
                assertArrayEquals(why, rejected.privateData(), "the rejection's private data reaches the client");
                assertEquals(Errno.EINVAL, assertThrows(DetException.class,
                    () -> request.accept(server.qp, null, 1000)).errno());
                assertEquals(Errno.ETIMEDOUT, assertThrows(DetException.class, () -> listener.take(10)).errno());
                listener.close();
                assertEquals("listener closed", assertThrows(IllegalStateException.class,
                    () -> listener.take(0)).getMessage());
            }
            assertEquals(QpState.IDLE, server.qp.query().state());
        }
    }

    @Test
    void shouldTimeOutWhenNothingAnswers() {
        try (Det det = Det.open(); Endpoint client = new Endpoint(det, "udp:127.0.0.1", 4096, 4)) {
            final String silent;
            try (Det other = Det.open()) {
                silent = other.openNic("udp:127.0.0.1", null).address(); // closed again: nobody answers there
            }
            final var cm = client.nic.connectionManager();
            assertEquals(Errno.ETIMEDOUT, assertThrows(DetException.class,
                () -> cm.connect(silent, SERVICE, client.qp, null, 300)).errno());
            assertEquals(Errno.ENODEV, assertThrows(DetException.class,
                () -> cm.connect("loop:x/1", SERVICE, client.qp, null, 300)).errno());
            assertEquals(Errno.EINVAL, assertThrows(DetException.class,
                () -> cm.connect(silent, SERVICE, client.qp, new byte[300], 300)).errno());
            assertEquals(Errno.ENOTCONN, assertThrows(DetException.class,
                () -> cm.disconnect(client.qp, 300)).errno());
            assertEquals(QpState.IDLE, client.qp.query().state());
        }
    }

    @Test
    void shouldRunTheWorkloadOverAConnectionManagerHandshake() throws Exception {
        try (Det det = Det.open(VerbsWorkload.configuration());
             Endpoint server = new Endpoint(det, "udp:127.0.0.1", VerbsWorkload.BUFFER_BYTES, 64);
             Endpoint client = new Endpoint(det, "udp:127.0.0.1", VerbsWorkload.BUFFER_BYTES, 64);
             ConnectionListener listener = server.nic.connectionManager().listen(SERVICE)) {
            final CompletableFuture<Void> serverSide = CompletableFuture.runAsync(() -> VerbsWorkload.server(server,
                () -> listener.take(20_000).accept(server.qp, Handshake.describe(server), 20_000)));
            final long[] remote = Handshake.parse(client.nic.connectionManager().connect(server.nic.address(), SERVICE,
                client.qp, null, 20_000));
            VerbsWorkload.client(client, remote[0], (int) remote[1]);
            serverSide.get(60, TimeUnit.SECONDS);
        }
    }
}
