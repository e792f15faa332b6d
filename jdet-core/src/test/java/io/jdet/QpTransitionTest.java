package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.ValueLayout;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DET's queue pair transition table ({@code det_modify_qp(3)}), driven through {@code modify} and judged by what
 * each transition does, not by the state it reports alone: a receive posted before the transition is kept,
 * discarded or flushed; the peer is told or left alone; and afterwards the queue pair posts, refuses or carries
 * data as its state says. A refused transition (EPERM) changes nothing at all.
 *
 * <p>Row DISCONNECT is not here: that state is transitory (a disconnect leaves it, for IDLE or ERROR, before the
 * verb returns, under the engine lock), so no caller ever sees a queue pair in it, which
 * {@link #shouldNeverBeSeenInDisconnectWhenDisconnectFlushesOrNot} checks from both ends.
 */
@Timeout(30)
class QpTransitionTest {
    private static final long EARLY = 100;
    private static final long LATE = 101;

    /** What became of the receive posted at A before the transition. */
    enum Receive {
        /** Still posted: the next message lands in it. */
        KEPT,
        /** Gone without a completion (a reset to IDLE). */
        DISCARDED,
        /** Completed with FLUSHED by the transition. */
        FLUSHED,
        /** None was posted (A was in ERROR already). */
        NONE
    }

    @ParameterizedTest(name = "{0} -> {1}: {2}, A ends {3}, its receive {4}, B ends {5}")
    @CsvSource({
        "IDLE, IDLE, ok, IDLE, DISCARDED, IDLE",
        "IDLE, CONNECTED, ok, CONNECTED, KEPT, IDLE",
        "IDLE, DISCONNECT, EPERM, IDLE, KEPT, IDLE",
        "IDLE, ERROR, ok, ERROR, FLUSHED, IDLE",
        "CONNECTED, IDLE, EPERM, CONNECTED, KEPT, CONNECTED",
        "CONNECTED, CONNECTED, ok, CONNECTED, KEPT, CONNECTED",
        "CONNECTED, DISCONNECT, ok, IDLE, FLUSHED, IDLE",
        "CONNECTED, ERROR, ok, ERROR, FLUSHED, ERROR",
        "ERROR, IDLE, ok, IDLE, NONE, ERROR",
        "ERROR, CONNECTED, EPERM, ERROR, NONE, ERROR",
        "ERROR, DISCONNECT, EPERM, ERROR, NONE, ERROR",
        "ERROR, ERROR, ok, ERROR, NONE, ERROR"})
    void shouldDoWhatDetTransitionTableSaysWhenModified(final QpState from, final QpState to, final String outcome,
                                                        final QpState endA, final Receive receive,
                                                        final QpState endB) {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            enter(pair, from);
            final int remoteBefore = pair.qpA.query().remoteQpNum();
            // CONNECTED -> CONNECTED names another peer queue pair: the modify must not reconnect.
            final QpModify modify = to == QpState.CONNECTED
                ? new QpModify().connect(pair.nicB.address(), pair.qpB.number() + (from == QpState.IDLE ? 0 : 1),
                    pair.qpB.query().localPsn())
                : new QpModify().state(to);
            if (outcome.equals("EPERM")) {
                assertErrno(Errno.EPERM, () -> pair.qpA.modify(modify));
            } else {
                pair.qpA.modify(modify);
            }
            assertEquals(endA, pair.qpA.query().state());
            if (from == QpState.CONNECTED && endA == QpState.CONNECTED) {
                assertEquals(remoteBefore, pair.qpA.query().remoteQpNum(), "still connected to the same peer");
            }
            if (receive == Receive.FLUSHED) {
                final WorkCompletion flushed = pair.pollA(1).get(0);
                assertEquals(EARLY, flushed.id());
                assertEquals(WcStatus.FLUSHED, flushed.status());
            }
            Loopback.awaitState(pair.qpB, endB);
            switch (endA) {
                case CONNECTED -> assertCarriesData(pair, EARLY);
                case IDLE -> assertIdleThenReconnects(pair, receive == Receive.KEPT ? EARLY : LATE);
                case ERROR -> assertRefusesWork(pair);
                default -> throw new AssertionError("a queue pair seen in " + endA);
            }
        }
    }

    @Test
    void shouldNeverBeSeenInDisconnectWhenDisconnectFlushesOrNot() {
        try (Loopback pair = Loopback.open()) {
            pair.qpA.modify(new QpModify().state(QpState.DISCONNECT));
            assertEquals(QpState.IDLE, pair.qpA.query().state(), "nothing outstanding: IDLE at once");
            Loopback.awaitState(pair.qpB, QpState.IDLE);
            pair.connect();
            pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0); // B has no receive: the send stays outstanding
            pair.qpA.modify(new QpModify().state(QpState.DISCONNECT));
            assertEquals(QpState.ERROR, pair.qpA.query().state(), "a flushed send makes the disconnect an error");
            assertEquals(WcStatus.FLUSHED, pair.pollA(1).get(0).status());
            assertErrno(Errno.EPERM, () -> pair.qpA.modify(new QpModify().state(QpState.DISCONNECT)),
                "from ERROR");
        }
    }

    /** Brings A to a state, with a receive posted at A while it may take one. */
    private static void enter(final Loopback pair, final QpState from) {
        if (from != QpState.IDLE) {
            pair.connect();
        }
        pair.qpA.recv(EARLY, sge(pair.mrA, 0, 64), 1);
        if (from == QpState.ERROR) {
            pair.qpA.modify(new QpModify().state(QpState.ERROR));
            assertEquals(EARLY, pair.pollA(1).get(0).id(), "entering ERROR flushed the receive");
            Loopback.awaitState(pair.qpB, QpState.ERROR);
        }
        assertEquals(from, pair.qpA.query().state());
    }

    /** B, connected to A if it is not yet, sends a message; it must land in A's receive {@code id}. */
    private static void assertCarriesData(final Loopback pair, final long id) {
        if (pair.qpB.query().state() == QpState.IDLE) {
            Loopback.connect(pair.qpB, pair.nicA, pair.qpA);
        }
        pair.bufB.set(ValueLayout.JAVA_LONG_UNALIGNED, 512, 0x5EED_0000L + id);
        pair.qpB.send(7, sge(pair.mrB, 512, 8), 1, 0, 0);
        final WorkCompletion got = pair.pollA(1).get(0);
        assertEquals(WcStatus.SUCCESS, got.status(), got.toString());
        assertEquals(id, got.id(), "the message landed in receive " + got.id());
        assertEquals(0x5EED_0000L + id, pair.bufA.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
        assertEquals(WcStatus.SUCCESS, pair.pollB(1).get(0).status());
    }

    /** A in IDLE refuses sends; once both ends are connected again, a message lands in receive {@code id}. */
    private static void assertIdleThenReconnects(final Loopback pair, final long id) {
        assertErrno(Errno.ENOTCONN, () -> pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0), "a send while IDLE");
        if (pair.qpB.query().state() == QpState.ERROR) {
            pair.qpB.modify(new QpModify().state(QpState.IDLE));
        }
        assertEquals(QpState.IDLE, pair.qpB.query().state());
        final List<WorkCompletion> none = drain(pair);
        assertTrue(none.isEmpty(), "no completion for work reset or refused: " + none);
        pair.qpA.recv(LATE, sge(pair.mrA, 0, 64), 1);
        Loopback.connect(pair.qpA, pair.nicB, pair.qpB);
        assertCarriesData(pair, id);
    }

    /** A in ERROR takes neither sends nor receives, and raises no new completion. */
    private static void assertRefusesWork(final Loopback pair) {
        assertErrno(Errno.ENOTCONN, () -> pair.qpA.send(1, sge(pair.mrA, 0, 8), 1, 0, 0), "a send in ERROR");
        assertErrno(Errno.ENOTCONN, () -> pair.qpA.recv(2, sge(pair.mrA, 0, 8), 1), "a receive in ERROR");
        final List<WorkCompletion> none = drain(pair);
        assertTrue(none.isEmpty(), "nothing flushed twice: " + none);
    }

    /** Takes whatever completions A has now, without waiting. */
    private static List<WorkCompletion> drain(final Loopback pair) {
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion()};
        final int n = pair.cqA.poll(batch);
        return java.util.Arrays.stream(batch, 0, n).map(Tests::copy).toList();
    }
}
