package io.jdet.internal.link;

import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.jdet.internal.link.LinkFrames.counters;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A UDP link that found nothing on its last receive takes one datagram with {@code recvfrom}, the cheapest call
 * when nothing waits; once a receive took a datagram, the next takes a batch ({@code recvmmsg}), so a burst is
 * still taken many datagrams a call.
 */
@Timeout(30)
class UdpLinkSingleReceiveTest {
    private static final String LOCAL = "udp:127.0.0.1";

    private static long singles(final Link link) {
        return counters(link).get("link.rx.single_receives");
    }

    @Test
    void anIdleLinkPollsForOneDatagramAndABurstFollowsInBatches() {
        try (UdpLink a = new UdpLink(LOCAL); UdpLink b = new UdpLink(LOCAL)) {
            final LinkFrames.Received got = new LinkFrames.Received();
            for (int i = 0; i < 3; i++) {
                assertEquals(0, b.receive(got, 16));
            }
            assertEquals(3L, singles(b), "each empty poll a single receive");
            for (int tag = 1; tag <= 10; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, 20 * tag)); // outside a batch: a datagram each
            }
            final int[] first = {0};
            Tests.await("the first datagram", () -> (first[0] = b.receive(got, 16)) > 0);
            assertEquals(1, first[0], "a single receive takes one datagram, however many wait");
            final long singlesBefore = singles(b);
            final int batch = b.receive(got, 16);
            assertTrue(batch >= 1 && batch <= 9, "the receive after a datagram takes a batch: " + batch);
            assertEquals(singlesBefore, singles(b), "a batch, not a single receive");
            Tests.await("the rest", () -> {
                b.receive(got, 16);
                return got.frames.size() >= 10;
            });
            final int[] lengths = new int[10];
            for (int i = 0; i < 10; i++) {
                lengths[i] = 20 * (i + 1);
            }
            LinkFrames.assertFrames(got, 1, lengths);
            final long sender = b.resolve(a.address());
            for (int i = 0; i < 10; i++) {
                assertEquals(sender, got.peers.get(i), "frame " + i + "'s sender, single receive or batch");
            }
            assertEquals(0, b.receive(got, 16), "nothing more: each frame taken once");
        }
    }

    @Test
    void aSingleReceiveSplitsADatagramOfSeveralFrames() {
        try (UdpLink a = new UdpLink(LOCAL); UdpLink b = new UdpLink(LOCAL)) {
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(0, b.receive(got, 16));
            a.cork();
            for (int tag = 1; tag <= 4; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, 100 + tag));
            }
            a.uncork(); // one datagram of four frames
            final long singlesBefore = singles(b);
            final int[] calls = {0};
            final int[] taken = {0};
            Tests.await("the datagram", () -> {
                calls[0]++;
                return (taken[0] = b.receive(got, 16)) > 0;
            });
            assertEquals(1, taken[0], "one datagram");
            assertEquals(singlesBefore + calls[0], singles(b), "every one of those receives a single one");
            LinkFrames.assertFrames(got, 1, 101, 102, 103, 104);
        }
    }
}
