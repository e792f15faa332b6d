package io.jdet.systest;

import io.jdet.Det;
import io.jdet.ConnectionListener;
import io.jdet.QpModify;
import io.jdet.Security;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The UDP data path allocates nothing in steady state: after a warm-up, thousands of send/receive round trips and
 * RDMA writes over UDP loopback leave both busy-polling threads' allocation counters where they were (the
 * quietest of {@link #WINDOWS} windows counts: {@link AllocationWindows}). Protected connections (AUTH and
 * ENCRYPT, made by the connection manager) are held to the same rule: sealing and opening every frame allocates
 * nothing either.
 */
@Timeout(120)
class UdpAllocationTest {
    private static final int WARMUP = 20_000;
    private static final int MEASURED = 5_000;
    private static final int WINDOWS = 3;

    @ParameterizedTest
    @EnumSource(Security.Mode.class)
    void shouldNotAllocateWhilePostingPollingSendingAndReceiving(final Security.Mode mode) throws Exception {
        try (Det det = Det.open(); Endpoint a = new Endpoint(det, "udp:127.0.0.1", 1 << 20, 64);
             Endpoint b = new Endpoint(det, "udp:127.0.0.1", 1 << 20, 64)) {
            // Both receive queues filled before either side sends: the echoing thread may start late on a busy
            // machine, and a send that finds no receive waits out RNR retries and fails the connection.
            for (int r = 0; r < 32; r++) {
                a.qp.recv(r, a.at(65_536, 100), 1);
                b.qp.recv(r, b.at(65_536, 100), 1);
            }
            if (mode == Security.Mode.NONE) {
                a.qp.modify(new QpModify().connect(b.nic.address(), b.qp.number(), b.qp.query().localPsn()));
                b.qp.modify(new QpModify().connect(a.nic.address(), a.qp.number(), a.qp.query().localPsn()));
            } else {
                a.nic.connectionManager().security(Security.of(mode));
                b.nic.connectionManager().security(Security.of(mode));
                try (ConnectionListener listener = b.nic.connectionManager().listen(0xA110C)) {
                    final CompletableFuture<Void> accepted = CompletableFuture.runAsync(
                        () -> listener.take(10_000).accept(b.qp, null, 10_000));
                    a.nic.connectionManager().connect(b.nic.address(), 0xA110C, a.qp, null, 10_000);
                    accepted.get(20, TimeUnit.SECONDS);
                }
            }
            final CompletableFuture<Long> echo = CompletableFuture.supplyAsync(() -> {
                final long[] allocated = new long[1];
                rounds(b, a, false, allocated);
                return allocated[0];
            });
            final long[] allocated = new long[1];
            rounds(a, b, true, allocated);
            assertEquals(0, allocated[0], "bytes allocated by the initiating thread in its quietest " + MEASURED
            + " rounds of " + WINDOWS);
            assertEquals(0, echo.get(60, TimeUnit.SECONDS), "bytes allocated by the echoing thread");
            for (final Endpoint e : new Endpoint[] {a, b}) {
                assertEquals(0, e.nic.counters().get("rx.seal.bad_tag"), "frames whose tag failed");
                assertEquals(mode, e.nic.connectionManager().security().mode(), "the connection's protection");
            }
        }
    }

    /** Ping-pong: each round an RDMA write and a send one way, a send back. */
    private static void rounds(final Endpoint e, final Endpoint peer, final boolean initiator,
                               final long[] allocated) {
        final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
            new WorkCompletion()};
        final AllocationWindows windows = new AllocationWindows(WARMUP, MEASURED, WINDOWS);
        for (int i = 0; i < windows.rounds(); i++) {
            windows.beforeRound(i);
            if (initiator) {
                e.qp.write(i, e.at(0, 3000), 1, peer.region.address() + 8192, peer.region.rKey(), 0, 0);
                e.qp.send(i, e.at(0, 100), 1, 0, 0);
                await(e, wc, true);
            } else {
                await(e, wc, true);
                e.qp.send(i, e.at(0, 100), 1, 0, 0);
            }
            e.qp.recv(i, e.at(65_536, 100), 1);
            while (e.sendCq.poll(wc) > 0) {
                if (wc[0].status() != WcStatus.SUCCESS) {
                    throw new AssertionError(wc[0].toString());
                }
            }
        }
        allocated[0] = windows.quietest();
    }

    private static void await(final Endpoint e, final WorkCompletion[] wc, final boolean receive) {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while ((receive ? e.recvCq : e.sendCq).poll(wc, 1) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion within 10 s");
            }
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            throw new AssertionError(wc[0].toString());
        }
    }
}
