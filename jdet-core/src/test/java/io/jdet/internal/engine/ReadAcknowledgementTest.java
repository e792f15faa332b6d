package io.jdet.internal.engine;

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
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A read response acknowledges its request: once a read has completed, the requester has nothing outstanding, so
 * a retransmission timer firing afterwards finds nothing to resend. (It used to go back to a request that had
 * already completed, and its search for that request ran off the send queue.)
 */
class ReadAcknowledgementTest {

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void shouldLeaveNothingToRetransmitWhenReadHasCompleted() throws InterruptedException {
        // A retransmits after 10 us; B acknowledges only on its own delayed-ack timer (1 s) and never retransmits
        // within the test, so only the read response itself can acknowledge A's read request in time.
        final Configuration requester = new Configuration().minRtoUs(10).timerPeriodUs(50).ackDelayUs(1_000_000);
        final Configuration responder = new Configuration().minRtoUs(900_000).maxRtoUs(900_000).timerPeriodUs(50)
            .ackDelayUs(1_000_000);
        try (Det detA = Det.open(requester); Det detB = Det.open(responder); Arena arena = Arena.ofShared()) {
            final Nic nicA = detA.openNic("loop:read-ack", null);
            final Nic nicB = detB.openNic("loop:read-ack", null);
            final ProtectionDomain pdA = nicA.allocPd();
            final ProtectionDomain pdB = nicB.allocPd();
            final CompletionQueue cqA = nicA.createCq(8, null);
            final CompletionQueue cqB = nicB.createCq(8, null);
            final QueuePair qpA = pdA.createQp(QpCreate.of(cqA, 4, 1));
            final QueuePair qpB = pdB.createQp(QpCreate.of(cqB, 4, 1));
            qpA.modify(new QpModify().connect(nicB.address(), qpB.number()));
            qpB.modify(new QpModify().connect(nicA.address(), qpA.number()));
            final MemoryRegion mrA = pdA.regMr(arena.allocate(64), Access.LOCAL_WRITE);
            final MemoryRegion mrB = pdB.regMr(arena.allocate(64), Access.LOCAL_READ | Access.REMOTE_READ);
            final DataSegment[] into = {new DataSegment().set(mrA, 0, 8)};
            final WorkCompletion[] wc = {new WorkCompletion()};

            for (int round = 0; round < 3; round++) {
                qpA.read(round, into, 1, mrB.address(), mrB.rKey(), 0);
                int done = 0;
                while (done == 0) {
                    cqB.poll(wc);
                    done = cqA.poll(wc);
                }
                assertEquals(WcStatus.SUCCESS, wc[0].status());
                final long timeouts = nicA.counters().get("retransmit.timeouts");
                Thread.sleep(5); // many timer periods and retransmission timeouts of A
                cqA.poll(wc);
                assertEquals(timeouts, nicA.counters().get("retransmit.timeouts"), "round " + round);
                assertEquals(0L, nicA.counters().get("rx.bad_header"), "the progress thread caught a failure");
            }
        }
    }
}
