package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A read response acknowledges its request: once a read has completed, the requester has nothing outstanding, so
 * a retransmission timer firing afterwards finds nothing to resend. (It used to go back to a request that had
 * already completed, and its search for that request ran off the send queue.)
 *
 * <p>The test does not sleep to let timers fire: it runs the requester's timers itself, under the engine lock, at
 * a time ten of its longest retransmission timeouts later, so every timer is due whatever the machine's load. A
 * control at the end shows that the same run does retransmit a request that is still unacknowledged.
 */
class ReadAcknowledgementTest {
    /** How far ahead of the clock the timers are run: ten times the requester's longest retransmission timeout. */
    private static final long LATER_NS = TimeUnit.MILLISECONDS.toNanos(10);

    /** The time the timers were last run at; each run is later than the one before. */
    private long virtualNow;

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldLeaveNothingToRetransmitWhenReadHasCompleted() {
        // A would retransmit after 10 us to 1 ms; B acknowledges only on its own delayed-ack timer (1 s) and never
        // retransmits within the test, so only the read response itself can acknowledge A's read request.
        final Configuration requester = new Configuration().minRtoUs(10).maxRtoUs(1000).timerPeriodUs(50)
            .ackDelayUs(1_000_000);
        final Configuration responder = new Configuration().minRtoUs(900_000).maxRtoUs(900_000).timerPeriodUs(50)
            .ackDelayUs(1_000_000);
        final String fabric = Tests.uniqueFabric("read-ack");
        try (Det detA = Det.open(requester); Det detB = Det.open(responder); Arena arena = Arena.ofShared()) {
            final Nic nicA = detA.openNic(fabric, null);
            final Nic nicB = detB.openNic(fabric, null);
            final ProtectionDomain pdA = nicA.allocPd();
            final ProtectionDomain pdB = nicB.allocPd();
            final CompletionQueue cqA = nicA.createCq(8, null);
            final CompletionQueue cqB = nicB.createCq(8, null);
            final QueuePair qpA = pdA.createQp(QpCreate.of(cqA, 4, 1));
            final QueuePair qpB = pdB.createQp(QpCreate.of(cqB, 4, 1));
            qpA.modify(new QpModify().connect(nicB.address(), qpB.number(), qpB.query().localPsn()));
            qpB.modify(new QpModify().connect(nicA.address(), qpA.number(), qpA.query().localPsn()));
            final MemoryRegion mrA = pdA.regMr(arena.allocate(64), Access.LOCAL_READ | Access.LOCAL_WRITE);
            final MemoryRegion mrB = pdB.regMr(arena.allocate(64), Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ
                | Access.REMOTE_WRITE);
            final DataSegment[] into = {new DataSegment().set(mrA, 0, 8)};

            for (int round = 0; round < 3; round++) {
                qpA.read(round, into, 1, mrB.address(), mrB.rKey(), 0);
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(cqA).status(), "round " + round);
                assertEquals(0, retransmissionsWhenTimersRunLater(nicA), "round " + round + ": "
                    + nicA.counters());
                Tests.assertEngineHealthy(nicA);
            }

            // The control: a write B has not acknowledged yet is retransmitted by the very same timer run. It is
            // unsignaled, so it does not ask B for an immediate acknowledgement (B would send one at once).
            qpA.write(9, into, 1, mrB.address(), mrB.rKey(), io.jdet.WrFlags.SUPPRESSED, 0);
            assertTrue(retransmissionsWhenTimersRunLater(nicA) > 0, "the write was retransmitted: "
                + nicA.counters());
            Tests.assertEngineHealthy(nicA, nicB);
        }
    }

    /**
     * Runs a NIC's progress, timers included, at a time {@link #LATER_NS} after the clock (and after the previous
     * run), under its engine lock.
     *
     * @return how many retransmission timeouts that run counted
     */
    private long retransmissionsWhenTimersRunLater(final Nic nic) {
        final NicImpl engine = (NicImpl) nic;
        virtualNow = Math.max(System.nanoTime(), virtualNow) + LATER_NS;
        engine.lock.lock();
        try {
            final long before = engine.counters.timeouts;
            engine.progress(virtualNow);
            return engine.counters.timeouts - before;
        } finally {
            engine.lock.unlock();
        }
    }
}
