package io.jdet.internal.cm;

import io.jdet.ConnectionListener;
import io.jdet.ConnectionManager;
import io.jdet.ConnectionRequest;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.QpState;
import io.jdet.internal.verbs.NicImpl;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A connect, accept or disconnect whose thread is interrupted fails with EINTR and leaves nothing running behind
 * it (an audit: the exchange went on, so a connect that failed could still connect its queue pair, an accept that
 * failed left a live connection, both retransmitted for good and held a per-source slot, and a disconnect left the
 * local queue pair CONNECTED after the peer had gone). Most tests set the interrupt before the call, which takes the
 * same path as one arriving mid-wait; the first interrupts mid-wait.
 */
@Timeout(60)
class CmInterruptTest {
    private static final int SERVICE = 0xA11;

    /** Runs the calling code with the interrupt flag set, in a thread of its own; returns its DetException. */
    private static DetException interrupted(final Runnable call) throws Exception {
        final CompletableFuture<DetException> out = new CompletableFuture<>();
        final Thread t = Thread.ofPlatform().start(() -> {
            Thread.currentThread().interrupt();
            try {
                call.run();
                out.complete(null);
            } catch (final DetException e) {
                out.complete(e);
            } catch (final Throwable e) {
                out.completeExceptionally(e);
            }
        });
        t.join(10_000);
        return out.get(10, TimeUnit.SECONDS);
    }

    @Test
    void anInterruptedConnectStaysIdleAndIsNotAcceptedLater() throws Exception {
        try (Loopback p = Loopback.open(new Loopback.Options().connect(false));
             ConnectionListener listener = p.nicB.connectionManager().listen(SERVICE)) {
            final ConnectionManager cmA = p.nicA.connectionManager();
            final CompletableFuture<DetException> failed = new CompletableFuture<>();
            final Thread waiter = Thread.ofPlatform().start(() -> {
                try {
                    cmA.connect(p.nicB.address(), SERVICE, p.qpA, null, 10_000);
                    failed.complete(null);
                } catch (final DetException e) {
                    failed.complete(e);
                }
            });
            final ConnectionRequest request = listener.take(10_000); // the request arrived, validated
            Tests.await("the connecting thread waits", () -> waiter.getState() == Thread.State.TIMED_WAITING);
            waiter.interrupt(); // while connect waits for the answer
            final DetException e = failed.get(10, TimeUnit.SECONDS);
            assertEquals(Errno.EINTR, e == null ? null : e.errno(), "connect fails with EINTR");
            assertEquals(QpState.IDLE, p.qpA.query().state(), "failed connect: IDLE");

            // The listener's application now accepts the request the failed connect sent.
            DetException acceptFailure = null;
            try {
                request.accept(p.qpB, null, 2_000);
            } catch (final DetException x) {
                acceptFailure = x;
            }
            // ConnectionManager.connect: "on failure it stays IDLE"; accept: ECONNRESET if the requester no
            // longer waits for this connection.
            assertEquals(QpState.IDLE, p.qpA.query().state(),
                "a connect that failed with EINTR must leave its queue pair IDLE");
            assertEquals(Errno.ECONNRESET, acceptFailure == null ? null : acceptFailure.errno());
        }
    }

    @Test
    void anInterruptedConnectToASilentPeerIsNotRetransmittedForever() throws Exception {
        try (Loopback p = Loopback.open(new Loopback.Options().connect(false));
             CmRawPeer silent = new CmRawPeer(p.nicA.address())) {
            final NicImpl nic = (NicImpl) p.nicA;
            final DetException e = interrupted(
                () -> p.nicA.connectionManager().connect(silent.address(), SERVICE, p.qpA, null, 10_000));
            assertEquals(Errno.EINTR, e.errno());
            // Advance the CM timer by an hour, in steps: a forgotten exchange is no longer retransmitted.
            final long start = System.nanoTime();
            for (int k = 1; k <= 40; k++) {
                runTimerAt(nic, start + k * 90_000_000_000L);
            }
            final long before = nic.counters().get("cm.retransmitted");
            runTimerAt(nic, start + 41 * 90_000_000_000L);
            runTimerAt(nic, start + 42 * 90_000_000_000L);
            final long after = nic.counters().get("cm.retransmitted");
            assertEquals(before, after, "the interrupted connect's REQUEST is still retransmitted an hour later");
        }
    }

    @Test
    void anInterruptedDisconnectDoesNotLeaveTheLocalQueuePairConnected() throws Exception {
        try (Loopback p = Loopback.open(new Loopback.Options().connect(false))) {
            p.connectThroughCm(SERVICE);
            final DetException e = interrupted(() -> p.nicA.connectionManager().disconnect(p.qpA, 10_000));
            assertEquals(Errno.EINTR, e == null ? null : e.errno(), "disconnect fails with EINTR");
            Loopback.awaitState(p.qpB, QpState.IDLE); // the peer obeyed the disconnect and answered it
            Thread.sleep(500);
            assertEquals(QpState.IDLE, p.qpA.query().state(),
                "the peer disconnected and answered, yet the local queue pair stays CONNECTED");
        }
    }

    @Test
    void anInterruptedAcceptOfAVanishedRequesterIsForgottenAndFreesItsSourceSlot() throws Exception {
        final io.jdet.Configuration conf = new io.jdet.Configuration().cmPendingPerSource(1);
        try (Loopback p = Loopback.open(new Loopback.Options().connect(false).configuration(conf));
             CmRawPeer raw = new CmRawPeer(p.nicB.address());
             ConnectionListener listener = p.nicB.connectionManager().listen(SERVICE)) {
            final NicImpl nic = (NicImpl) p.nicB;
            raw.request(7, SERVICE, 1234, 4, 4, new byte[0]);
            final ConnectionRequest request = listener.take(10_000);
            final DetException e = interrupted(() -> request.accept(p.qpB, null, 500));
            assertEquals(Errno.EINTR, e == null ? null : e.errno(), "accept fails with EINTR");
            // The requester never answers (its host went away). An accept that timed out would be forgotten after
            // its linger; run the timer an hour ahead.
            final long start = System.nanoTime();
            for (int k = 1; k <= 40; k++) {
                runTimerAt(nic, start + k * 90_000_000_000L);
            }
            final int acceptsBefore = raw.count(Frame.OP_CM_ACCEPT, 7);
            runTimerAt(nic, start + 41 * 90_000_000_000L);
            runTimerAt(nic, start + 42 * 90_000_000_000L);
            Thread.sleep(100);
            assertEquals(acceptsBefore, raw.count(Frame.OP_CM_ACCEPT, 7), "the ACCEPT is resent an hour later");
            // A new request from the same source, 1 allowed pending per source.
            raw.request(8, SERVICE, 1235, 4, 4, new byte[0]);
            Thread.sleep(200);
            assertEquals(0, raw.count(Frame.OP_CM_REJECT, 8),
                "an hour after an interrupted accept its source is still refused (per-source slot leaked)");
        }
    }

    @Test
    void anInterruptedAcceptDoesNotLeaveAConnectionTheRequesterUses() throws Exception {
        try (Loopback p = Loopback.open(new Loopback.Options().connect(false));
             ConnectionListener listener = p.nicB.connectionManager().listen(SERVICE)) {
            final CompletableFuture<byte[]> connect = CompletableFuture.supplyAsync(
                () -> p.nicA.connectionManager().connect(p.nicB.address(), SERVICE, p.qpA, null, 10_000),
                r -> Thread.ofPlatform().start(r));
            final ConnectionRequest request = listener.take(10_000);
            final DetException e = interrupted(() -> request.accept(p.qpB, null, 10_000));
            assertEquals(Errno.EINTR, e == null ? null : e.errno(), "accept fails with EINTR");
            try {
                connect.get(10, TimeUnit.SECONDS); // whichever way the requester's connect ends
            } catch (final java.util.concurrent.ExecutionException refused) {
                // its connect may fail, once the acceptor's queue pair failed
            }
            Thread.sleep(300);
            // accept failed; its other failures (ETIMEDOUT, ECONNRESET, EACCES) leave the queue pair in ERROR so
            // the requester does not keep a connection the acceptor's application believes refused
            assertEquals(QpState.ERROR, p.qpB.query().state(), "accept threw EINTR but its queue pair is live");
        }
    }

    @Test
    void anInterruptedDisconnectToASilentPeerIsNotRetransmittedForever() throws Exception {
        try (Loopback p = Loopback.open(new Loopback.Options().connect(false));
             CmRawPeer silent = new CmRawPeer(p.nicA.address())) {
            final NicImpl nic = (NicImpl) p.nicA;
            p.qpA.modify(new io.jdet.QpModify().connect(silent.address(), 555, CmWire.pack(1, 1))
                .localPsn(CmWire.pack(1, 1)));
            final DetException e = interrupted(() -> p.nicA.connectionManager().disconnect(p.qpA, 10_000));
            assertEquals(Errno.EINTR, e.errno());
            final long start = System.nanoTime();
            for (int k = 1; k <= 40; k++) {
                runTimerAt(nic, start + k * 90_000_000_000L);
            }
            final int before = silent.count(Frame.OP_CM_DISCONNECT);
            runTimerAt(nic, start + 41 * 90_000_000_000L);
            runTimerAt(nic, start + 42 * 90_000_000_000L);
            Thread.sleep(100);
            assertEquals(before, silent.count(Frame.OP_CM_DISCONNECT),
                "the interrupted disconnect is still retransmitted an hour later");
        }
    }

    private static void runTimerAt(final NicImpl nic, final long now) {
        nic.lock.lock();
        try {
            nic.cm.onTimer(now);
        } finally {
            nic.lock.unlock();
        }
    }
}
