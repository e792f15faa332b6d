package io.jdet.collective;

import io.jdet.Collective;
import io.jdet.CollectiveTuning;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.ConnectionRejectedException;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QueuePair;
import io.jdet.Security;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Group formation, from an audit: groups whose tags differ only in the arrangement of their parts join through
 * one root NIC at once (their roots listened on one connection manager service, and the second failed with
 * EEXIST); a join that cannot set up its own memory fails as this member's own error (LOCAL_OP_ERR), and a member
 * whose root goes away during the join reports a lost connection (RETRY_EXCEEDED), as the Collective javadoc says
 * (both were REMOTE_OP_ERR).
 */
@Timeout(90)
class JoinTest {
    private static Configuration quick() {
        return new Configuration().ackTimeoutMs(300).collectives(CollectiveTuning.DEFAULT.withTimeoutMs(2000));
    }

    @Test
    void shouldJoinTwoGroupsWhoseTagsDifferOnlyInTheOrderOfTheirParts() {
        final long a = 0x123L << 24 | 0x456;
        final long b = 0x456L << 24 | 0x123;
        try (Group g = new Group(2, quick().collectives(CollectiveTuning.DEFAULT.withTimeoutMs(20_000)))) {
            final Collective[] second = {g.pds[0].createCollective(g.cqs[0]), g.pds[1].createCollective(g.cqs[1])};
            try {
                for (int i = 0; i < 2; i++) {
                    g.cos[i].join(10 + i, a, 2, i, g.nics[0].address(), 0);
                    second[i].join(20 + i, b, 2, i, g.nics[0].address(), 0);
                }
                for (int round = 0; round < 2; round++) {
                    for (final WorkCompletion wc : each(g.cqs, 30_000)) {
                        assertEquals(WcType.JOIN, wc.type(), wc.toString());
                        assertEquals(WcStatus.SUCCESS, wc.status(), wc + " " + g.cos[0] + " " + second[0]);
                    }
                }
            } finally {
                second[0].close();
                second[1].close();
            }
        }
    }

    @Test
    void shouldFailAJoinThatCannotRegisterItsOwnMemoryAsThisMembersOwnError() {
        try (Group g = new Group(2, quick().maxRegisteredBytes(64 * 1024))) {
            for (int i = 0; i < 2; i++) {
                g.cos[i].join(1, g.tag, 2, i, g.nics[0].address(), 0);
            }
            for (final WorkCompletion wc : each(g.cqs, 20_000)) {
                assertEquals(WcStatus.LOCAL_OP_ERR, wc.status(), wc.toString());
            }
        }
    }

    @Test
    void shouldReportALostConnectionWhenTheRootLeavesDuringTheJoin() throws InterruptedException {
        try (Group g = new Group(3, quick())) {
            g.cos[0].join(1, g.tag, 3, 0, g.nics[0].address(), 0);
            g.cos[1].join(1, g.tag, 3, 1, g.nics[0].address(), 0); // rank 2 never comes: the join waits
            Thread.sleep(200);
            g.cos[0].close();
            final WorkCompletion wc = each(new CompletionQueue[] {g.cqs[1]}, 20_000)[0];
            assertEquals(WcStatus.RETRY_EXCEEDED, wc.status(), wc.toString());
        }
    }

    /**
     * Security: a stranger without the connection manager's pre-shared key sends the root a request with the right
     * tag, size and a free rank; the root accepts, the handshake fails (EACCES), and that one unauthenticated
     * request failed the whole join (REMOTE_OP_ERR at the root, RETRY_EXCEEDED at the member). Repeated, every
     * attempt left a control queue pair and two flushed receives behind: the control queue overran.
     */
    @Test
    void shouldJoinDespiteStrangersWithoutThePreSharedKey() throws ReflectiveOperationException {
        final byte[] psk = "a pre-shared key of 32 bytes....".getBytes(StandardCharsets.US_ASCII);
        final byte[] wrong = psk.clone();
        wrong[0] ^= 1;
        try (Group g = new Group(2, quick().collectives(CollectiveTuning.DEFAULT.withTimeoutMs(20_000)))) {
            for (final Nic nic : g.nics) {
                nic.connectionManager().security(Security.of(Security.Mode.AUTH).withPreSharedKey(psk));
            }
            g.cos[0].join(1, g.tag, 2, 0, g.nics[0].address(), 0);
            final Nic stranger = g.det.openNic("loop:co" + g.tag, null);
            stranger.connectionManager().security(Security.of(Security.Mode.AUTH).withPreSharedKey(wrong));
            final ProtectionDomain pd = stranger.allocPd();
            final CompletionQueue cq = stranger.createCq(16, null);
            final byte[] claim = ByteBuffer.allocate(24).putLong(g.tag).putInt(2).putInt(1)
                .putLong(tuningDigest(CollectiveTuning.DEFAULT, 2, stranger.address())).array();
            final int serviceId = serviceId(g.tag);
            for (int k = 0; k < 100; k++) { // more than the root's control queue holds of flushed receives
                try (QueuePair qp = pd.createQp(new QpCreate(cq, cq, 4, 4, 1, 1, 1, 1))) {
                    final DetException e = assertThrows(DetException.class, () -> stranger.connectionManager()
                        .connect(g.nics[0].address(), serviceId, qp, claim, 2_000));
                    if (e.errno() != Errno.EACCES) {
                        break; // the root no longer listens: its join failed (the completions below say how)
                    }
                }
            }
            g.cos[1].join(2, g.tag, 2, 1, g.nics[0].address(), 0);
            for (final WorkCompletion wc : each(g.cqs, 30_000)) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc + " " + g.cos[0] + " " + g.cos[1]);
                assertEquals(WcType.JOIN, wc.type(), wc.toString());
            }
        }
    }

    /**
     * A close from an interrupted thread (a shutdown hook, an executor's shutdownNow) returned without waiting for
     * the joiner; whenever the joiner then finished after the close's clean-up, it handed its queue pairs, regions,
     * windows, listener and memory to a group already torn down: never freed, the domain stayed EBUSY and the tag's
     * service stayed taken on the NIC for good. Twenty rounds: the old code lost that race in most of them.
     */
    @Test
    void shouldFreeEverythingWhenAnInterruptedThreadClosesAJoiningGroup() throws ReflectiveOperationException,
        InterruptedException {
        try (Group g = new Group(2, quick());
             QueuePair probe = g.pds[1].createQp(new QpCreate(g.cqs[1], g.cqs[1], 4, 4, 1, 1, 1, 1))) {
            for (int round = 0; round < 20; round++) {
                final long tag = g.tag << 8 | round;
                final ProtectionDomain pd = g.nics[0].allocPd();
                final CompletionQueue cq = g.nics[0].createCq(16, null);
                final Collective co = pd.createCollective(cq);
                co.join(1, tag, 2, 0, g.nics[0].address(), 0); // rank 1 never comes: the join waits
                final int serviceId = serviceId(tag);
                while (true) { // until the root takes requests (it refuses this garbage): its joiner made everything
                    try {
                        g.nics[1].connectionManager().connect(g.nics[0].address(), serviceId, probe, new byte[1],
                            10_000);
                        fail("garbage accepted");
                    } catch (final ConnectionRejectedException refused) {
                        if (refused.reason() == ConnectionRejectedException.Reason.REJECTED) {
                            break;
                        }
                    }
                    Thread.sleep(1);
                }
                Thread.currentThread().interrupt();
                try {
                    co.close();
                } finally {
                    assertTrue(Thread.interrupted(), "the interrupt status is kept");
                }
                pd.close(); // was EBUSY: the joiner's queue pairs and regions were left in the domain
                cq.close();
                g.nics[0].connectionManager().listen(serviceId).close(); // was EEXIST: its listener too
            }
        }
    }

    /**
     * A member whose collective tunings differ from the root's (here the rendezvous threshold: another build, another
     * {@code jdet.co.rendezvous.bytes}) used to join, then wait for messages the others sent another way until the
     * timeout ("no progress"), or misread them ("disagree on a length"). The root now refuses it at the join: its
     * JOIN fails at once, saying why.
     */
    @Test
    void shouldRefuseAMemberWhoseTuningsDifferAtOnceSayingWhy() {
        final Configuration slow = quick().collectives(CollectiveTuning.DEFAULT.withTimeoutMs(20_000));
        try (Group g = new Group(2, slow);
             Det other = Det.open(quick().jmx(false).collectives(CollectiveTuning.DEFAULT.withTimeoutMs(20_000)
                 .withRendezvousBytes(65_536)))) {
            final Nic nic = other.openNic("loop:co" + g.tag, null);
            final CompletionQueue cq = nic.createCq(16, null);
            final Collective co = nic.allocPd().createCollective(cq);
            g.cos[0].join(1, g.tag, 2, 0, g.nics[0].address(), 0);
            final long start = System.nanoTime();
            co.join(2, g.tag, 2, 1, g.nics[0].address(), 0);
            final WorkCompletion wc = each(new CompletionQueue[] {cq}, 10_000)[0];
            assertEquals(WcType.JOIN, wc.type());
            assertEquals(WcStatus.REMOTE_OP_ERR, wc.status(), wc.toString());
            assertTrue(System.nanoTime() - start < 10_000_000_000L, "long before the 20 s timeout");
            final DetException later = assertThrows(DetException.class, () -> co.barrier(3, 0));
            assertEquals(Errno.ENOTCONN, later.errno());
            assertTrue(later.getMessage().contains("tunings differ"), later.getMessage());
        }
    }

    /** {@code Joiner.tuningDigest}, what a member's join request carries (package-private in the implementation). */
    private static long tuningDigest(final CollectiveTuning t, final int size, final String address)
        throws ReflectiveOperationException {
        final java.lang.reflect.Method digest = Class.forName("io.jdet.internal.collective.Joiner")
            .getDeclaredMethod("tuningDigest", CollectiveTuning.class, int.class, String.class);
        digest.setAccessible(true);
        return (long) digest.invoke(null, t, size, address);
    }

    /** The connection manager service a group's root listens on (package-private in the implementation). */
    private static int serviceId(final long tag) throws ReflectiveOperationException {
        final java.lang.reflect.Method service = Class.forName("io.jdet.internal.collective.Joiner")
            .getDeclaredMethod("serviceId", long.class);
        service.setAccessible(true);
        return (int) service.invoke(null, tag);
    }

    /** One completion from each queue, within {@code ms}. */
    private static WorkCompletion[] each(final CompletionQueue[] cqs, final long ms) {
        final WorkCompletion[] got = new WorkCompletion[cqs.length];
        int have = 0;
        final long deadline = System.nanoTime() + ms * 1_000_000L;
        while (have < cqs.length) {
            for (int i = 0; i < cqs.length; i++) {
                final WorkCompletion[] w = {new WorkCompletion()};
                if (got[i] == null && cqs[i].poll(w) == 1) {
                    got[i] = w[0];
                    have++;
                }
            }
            if (System.nanoTime() > deadline) {
                fail("no completion within " + ms + " ms: " + java.util.Arrays.toString(got));
            }
            Thread.onSpinWait();
        }
        return got;
    }
}
