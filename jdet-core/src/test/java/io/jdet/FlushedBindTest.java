package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * {@code QueuePair.bind}: a bind that completes FLUSHED or with an error leaves the window unbound, so that
 * neither its key nor the one before grants access, and {@code MemoryWindow.rKey} goes back to the key in force;
 * also when the bind never ran (flushed while the send queue was held behind a receiver not ready) and when a
 * rebind fails as it runs. B binds a window on its region; A writes through the window's old key on a second queue
 * pair, which must fail.
 */
@Timeout(60)
class FlushedBindTest {
    private static final int RW = Access.REMOTE_READ | Access.REMOTE_WRITE;
    private static final long AT = 1024;

    @Test
    void shouldEndTheOldBindingWhenAnUnbindIsFlushedBeforeItRan() {
        try (Held h = new Held()) {
            h.pair.qpB.bind(3, h.mw, null, 0, 0, 0, 0);
            h.flushB(2);
            assertEquals(h.oldKey, h.mw.rKey(), "the key in force after a flushed bind");
            h.assertOldKeyRefused();
        }
    }

    @Test
    void shouldEndTheOldBindingWhenARebindIsFlushedBeforeItRan() {
        try (Held h = new Held()) {
            h.pair.qpB.bind(3, h.mw, h.pair.mrB, h.pair.mrB.address(), 512, RW, 0);
            h.flushB(2);
            assertEquals(h.oldKey, h.mw.rKey(), "the key in force after a flushed bind");
            assertEquals(0, h.mw.query().length(), "unbound: the new key grants nothing either");
            h.assertOldKeyRefused();
        }
    }

    @Test
    void shouldEndTheOldBindingWhenARebindFailsAsItRuns() {
        try (Held h = new Held()) {
            final MemoryRegion other = h.pair.pdB.regMr(h.pair.arena.allocate(4096, 64), Loopback.ALL_RIGHTS);
            h.pair.qpB.bind(3, h.mw, other, other.address(), 512, RW, 0);
            other.close(); // deregistered before the bind runs: it fails with BIND_ERR
            h.pair.qpA.recv(9, sge(h.pair.mrA, 0, 16), 1); // the held send goes, then the bind runs
            final List<WorkCompletion> wcs = Tests.pollUntil(h.pair.cqB, 2);
            // The bind runs as soon as the send ahead of it is sent again, and its failure fails the queue pair:
            // the send completes FLUSHED unless its acknowledgement came first.
            assertEquals(2, wcs.get(0).id(), wcs.get(0).toString());
            assertEquals(3, wcs.get(1).id(), wcs.get(1).toString());
            assertEquals(WcStatus.BIND_ERR, wcs.get(1).status(), wcs.get(1).toString());
            assertEquals(h.oldKey, h.mw.rKey(), "the key in force after a failed bind");
            h.assertOldKeyRefused();
        }
    }

    /**
     * A pair whose B has a window bound to its region (the old key, which A's write through a second queue pair
     * can use), and whose B send queue is held: B sent to A, which has no receive posted, and retries slowly.
     */
    private static final class Held implements AutoCloseable {
        final Loopback pair;
        final QueuePair a2;
        final MemoryWindow mw;
        final int oldKey;

        Held() {
            pair = Loopback.open(new Loopback.Options().configuration(new Configuration().rnrDelayUs(200_000)
                .rnrRetryCount(100))); // held for up to 20 s: long enough for any test's flush on a slow machine
            a2 = pair.pdA.createQp(QpCreate.of(pair.cqA, 8, 1));
            final QueuePair b2 = pair.pdB.createQp(QpCreate.of(pair.cqB, 8, 1));
            Loopback.connect(a2, pair.nicB, b2);
            Loopback.connect(b2, pair.nicA, a2);
            mw = pair.pdB.createMw(1);
            oldKey = pair.qpB.bind(1, mw, pair.mrB, pair.mrB.address(), 4096, RW, 0);
            Tests.expectSuccess(pair.cqB, 1);
            write(oldKey, 0x55, WcStatus.SUCCESS); // the old key grants access to begin with
            pair.qpB.send(2, sge(pair.mrB, 0, 16), 1, 0, 0);
            Tests.await("a receiver-not-ready NAK", () -> pair.nicB.counters().get("rnr.naks.received") > 0);
        }

        /** Fails B's queue pair: its held send and what follows complete FLUSHED. */
        void flushB(final int expected) {
            pair.qpB.modify(new QpModify().state(QpState.ERROR));
            for (final WorkCompletion wc : Tests.pollUntil(pair.cqB, expected)) {
                assertEquals(WcStatus.FLUSHED, wc.status(), wc.toString());
            }
        }

        /** A's write through the old key fails, and writes nothing (a2 is in ERROR after it). */
        void assertOldKeyRefused() {
            pair.bufB.set(ValueLayout.JAVA_LONG, AT, 0);
            write(oldKey, 0x77, null);
            assertEquals(0, pair.bufB.get(ValueLayout.JAVA_LONG, AT), "written through a key that was let go");
        }

        /** A's write of one long through {@code key} at B's {@code AT}; its status, if given, checked. */
        private void write(final int key, final long value, final WcStatus expected) {
            pair.bufA.set(ValueLayout.JAVA_LONG, 0, value);
            a2.write(5, sge(pair.mrA, 0, 8), 1, pair.mrB.address() + AT, key, 0, 0);
            WorkCompletion wc;
            do {
                wc = Tests.pollOne(pair.cqA);
            } while (wc.id() != 5);
            if (expected != null) {
                assertEquals(expected, wc.status(), wc.toString());
            } else {
                assertNotEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
        }

        @Override
        public void close() {
            pair.close();
        }
    }
}
