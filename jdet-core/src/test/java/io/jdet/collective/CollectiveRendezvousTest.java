package io.jdet.collective;

import io.jdet.Configuration;
import io.jdet.MemoryRegion;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the rendezvous adds to the collectives beyond their results (which {@link CollectiveVerbsTest} and
 * {@link CollectiveUdpFaultsTest} check under rendezvous tunings): the sender's step, which waits for the
 * acknowledgement of its writes, does not wait for the receiver's application to poll again.
 */
@Timeout(60)
class CollectiveRendezvousTest {
    /**
     * Rank 1 polls until its broadcast completes, then stops, as an application does that goes on to compute: the
     * acknowledgement of the root's write must have left in that poll. Before, the engine kept an acknowledgement the
     * sender asked for until the application's next pass on that NIC, and with none coming until its progress thread
     * found the application idle (half a millisecond on): the root's broadcast waited that long.
     */
    @Test
    void theSendersStepDoesNotWaitForTheReceiverToPollAgain() {
        final Configuration c = new Configuration();
        c.collectives(c.collectives().withRendezvousBytes(1));
        final int n = 4096;
        try (Group g = new Group(2, c, "udp:127.0.0.1:0").joined()) {
            final MemoryRegion src = g.region(0, n);
            final MemoryRegion dst = g.region(1, n);
            for (int i = 0; i < n; i++) {
                src.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            g.cos[1].bcast(1, 0, Group.ds(dst), 0);
            g.cos[0].bcast(1, 0, Group.ds(src), 0);
            final WorkCompletion[] one = {new WorkCompletion()};
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            boolean rootDone = false;
            while (true) {
                if (!rootDone && g.cqs[0].poll(one) == 1) {
                    assertEquals(WcStatus.SUCCESS, one[0].status(), "the root completed first: " + one[0]);
                    rootDone = true;
                }
                if (g.cqs[1].poll(one) == 1) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    fail("rank 1 saw no completion");
                }
            }
            assertEquals(WcStatus.SUCCESS, one[0].status(), one[0].toString());
            assertEquals(WcType.BCAST, one[0].type());
            final long acksThen = g.nics[1].counters().get("acks.sent");
            while (!rootDone && g.cqs[0].poll(one) == 0) {
                if (System.nanoTime() > deadline) {
                    fail("the root saw no completion");
                }
            }
            if (!rootDone) {
                assertEquals(WcStatus.SUCCESS, one[0].status(), one[0].toString());
            }
            assertEquals(acksThen, g.nics[1].counters().get("acks.sent"),
                "rank 1 acknowledged the root's write after its own broadcast completed: the root waited for it");
            assertEquals(-1, src.segment().mismatch(dst.segment()), "rank 1's bytes");
        }
    }

    /**
     * A message of more rendezvous writes (of at most a mebibyte each) than the send queue holds: the receiver takes
     * the immediate of the last write as the end of the whole message, whose length its completion does not carry
     * (it reports the last write's bytes), and the writes, each signaled, never fill the sender's send queue with
     * entries only a later completion could retire.
     */
    @Test
    void aMessageOfMoreWritesThanTheSendQueueHoldsArrivesWhole() {
        final int n = 24 * (1 << 20) + 4096;
        try (Group g = new Group(2, new Configuration()).joined()) {
            final MemoryRegion src = g.region(0, n);
            final MemoryRegion dst = g.region(1, n);
            for (int i = 0; i < n; i += 4093) {
                src.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i / 4093 * 7 + 1));
            }
            g.cos[0].bcast(1, 0, Group.ds(src), 0);
            g.cos[1].bcast(1, 0, Group.ds(dst), 0);
            final WorkCompletion[] got = g.awaitAll(30_000);
            for (int i = 0; i < 2; i++) {
                assertEquals(WcStatus.SUCCESS, got[i].status(), "member " + i + ": " + got[i] + "; " + g.cos[0]
                    + "; " + g.cos[1]);
            }
            assertEquals(-1, src.segment().mismatch(dst.segment()), "rank 1's bytes");
        }
    }
}
