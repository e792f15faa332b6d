package io.jdet.systest;

import io.jdet.Collective;
import io.jdet.CompletionQueue;
import io.jdet.Det;
import io.jdet.EventQueue;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.WcStatus;
import io.jdet.WcType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * A collective group of four JVMs over UDP on loopback: this JVM is rank 0 (the root of the join) and three
 * {@link CollectiveMain} processes the others. Every verb's result is checked against a plain computation on every
 * member; and a member killed in the middle of an all-reduce makes it fail on every survivor with an error
 * completion and a CO_ERROR event, within the collective timeout.
 */
@Timeout(240)
class CollectiveProcessesTest {
    private static final int SIZE = 4;

    private static List<PeerProcess> spawn(final String[] roles, final String root, final long tag,
                                           final long timeoutMs) throws Exception {
        final List<PeerProcess> peers = new ArrayList<>();
        for (int rank = 1; rank < SIZE; rank++) {
            peers.add(new PeerProcess(List.of(), CollectiveMain.class, roles[rank], root, String.valueOf(rank),
                String.valueOf(SIZE), String.valueOf(tag), String.valueOf(timeoutMs)));
        }
        return peers;
    }

    private static void closeAll(final List<PeerProcess> peers) {
        for (final PeerProcess peer : peers) {
            peer.close();
        }
    }

    @Test
    void everyVerbOnFourProcessesMatchesAPlainComputation() throws Exception {
        final long timeoutMs = 60_000; // the join waits for three JVMs to start on a loaded machine
        try (Det det = Det.open(CollectiveMain.configuration("member", timeoutMs))) {
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic("udp:127.0.0.1", events);
            final ProtectionDomain pd = nic.allocPd();
            final CompletionQueue cq = nic.createCq(64, null);
            final Collective co = pd.createCollective(cq);
            final long tag = 0x4a000000L + ProcessHandle.current().pid();
            co.join(0, tag, SIZE, 0, nic.address(), 0);
            final List<PeerProcess> peers = spawn(new String[] {"", "member", "member", "member"}, nic.address(),
                tag, timeoutMs);
            try {
                final long count;
                try (CollectiveWorkload w = new CollectiveWorkload(co, pd, cq)) {
                    CollectiveMain.expect(cq, WcType.JOIN, 90_000);
                    count = w.run();
                } catch (final AssertionError | RuntimeException e) {
                    final StringBuilder sb = new StringBuilder(String.valueOf(e));
                    for (final PeerProcess peer : peers) {
                        sb.append("\n--- a member's output:\n").append(peer.output());
                    }
                    throw new AssertionError(sb.toString(), e);
                }
                for (final PeerProcess peer : peers) {
                    assertEquals(String.valueOf(count), peer.awaitLine("OK", 60_000), peer.output());
                }
                // every member finished: now they may close (one closing earlier could fail a slower one)
                for (final PeerProcess peer : peers) {
                    peer.closeInput();
                }
                for (final PeerProcess peer : peers) {
                    assertEquals(0, peer.awaitExit(30_000), peer.output());
                }
            } finally {
                closeAll(peers);
            }
            co.close();
        }
    }

    @Test
    void aMemberKilledMidCollectiveFailsItOnEverySurvivor() throws Exception {
        final long timeoutMs = 60_000; // also bounds the joins of JVMs that start one after another
        try (Det det = Det.open(CollectiveMain.configuration("survive", timeoutMs))) {
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic("udp:127.0.0.1", events);
            final ProtectionDomain pd = nic.allocPd();
            final CompletionQueue cq = nic.createCq(64, null);
            final Collective co = pd.createCollective(cq);
            final long tag = 0x4b000000L + ProcessHandle.current().pid();
            co.join(0, tag, SIZE, 0, nic.address(), 0);
            // rank 3 posts the all-reduce, then stops polling and is killed; ranks 0 to 2 survive
            final List<PeerProcess> peers = spawn(new String[] {"", "survive", "survive", "stall"}, nic.address(),
                tag, timeoutMs);
            try {
                CollectiveMain.expect(cq, WcType.JOIN, 90_000);
                CollectiveMain.postAfterBarrier(co, pd, cq);
                for (final PeerProcess peer : peers) {
                    peer.awaitLine("POSTED", 60_000);
                }
                peers.get(2).kill();
                final long killedAt = System.nanoTime();
                // the hang bound, not a timing check: the timeout without progress plus a generous margin
                final WcStatus status = CollectiveMain.awaitFailure(co, cq, events, timeoutMs + 30_000);
                assertNotEquals(WcStatus.SUCCESS, status);
                System.out.printf("member killed: the survivors' all-reduce failed (%s) after %.0f ms%n", status,
                    (System.nanoTime() - killedAt) / 1e6);
                for (final PeerProcess peer : peers.subList(0, 2)) {
                    assertNotEquals("SUCCESS", peer.awaitLine("FAILED", timeoutMs + 30_000), peer.output());
                    assertEquals(0, peer.awaitExit(30_000), peer.output());
                }
            } finally {
                closeAll(peers);
            }
            co.close();
        }
    }
}
