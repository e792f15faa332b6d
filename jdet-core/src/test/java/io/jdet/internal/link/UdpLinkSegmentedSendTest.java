package io.jdet.internal.link;

import io.jdet.testing.Tests;
import io.jdet.testing.VethPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import static io.jdet.internal.link.LinkFrames.HEADER;
import static io.jdet.internal.link.LinkFrames.counters;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Segmented sends (UDP GSO): staged datagrams for one peer, all of one length but a shorter last one, leave as one
 * {@code sendmmsg} message with a {@code UDP_SEGMENT} cmsg, which the kernel cuts back into exactly those datagrams;
 * the receiver sees the same datagrams, hence the same frames, in order: one by one, or, on a link that does not
 * place fragments (frames under {@link UdpLink#PLACE_MIN_FRAME}), as one aggregate (UDP GRO) that it cuts itself. Runs between two addresses of a veth pair
 * (whose MTU sets the frame limit; the kernel routes the traffic over loopback), which needs root: skipped without,
 * failed in CI.
 */
@Timeout(60)
class UdpLinkSegmentedSendTest {
    private static final int SO_NO_CHECK = 11;

    /** Receives until {@code n} frames arrived. */
    private static LinkFrames.Received receive(final Link link, final int n) {
        final LinkFrames.Received got = new LinkFrames.Received();
        Tests.await(n + " frames", () -> {
            link.receive(got, 16);
            return got.frames.size() >= n;
        });
        return got;
    }

    /** The payload that fills a datagram of the link's frame limit. */
    private static int full(final UdpLink link) {
        return link.mtu() - HEADER;
    }

    /** A test body given two links on the two addresses of a veth pair, and those addresses. */
    private interface OnPair {
        void run(UdpLink a, UdpLink b, String[] ip) throws Throwable;
    }

    /** Runs {@code test} with links on a fresh veth pair of the given MTU, its addresses in 198.18.{@code subnet}. */
    private static void onVethPair(final int mtu, final int subnet, final OnPair test) throws Throwable {
        try (VethPair veth = new VethPair(mtu)) {
            final String[] ip = veth.addresses(subnet);
            try (UdpLink a = new UdpLink("udp:" + ip[0]); UdpLink b = new UdpLink("udp:" + ip[1])) {
                test.run(a, b, ip);
            }
        }
    }

    /** The sender's counters: {@code sends} segmented sends carried {@code datagrams} datagrams in all. */
    private static void assertSegmented(final Link sender, final long sends, final long datagrams) {
        final Map<String, Long> m = counters(sender);
        assertEquals(sends, m.get("link.tx.segmented_sends"), m::toString);
        assertEquals(datagrams, m.get("link.tx.segmented_datagrams"), m::toString);
    }

    /** The receiver's counters: {@code aggregates} aggregates carried {@code datagrams} datagrams in all. */
    private static void assertAggregated(final Link receiver, final long aggregates, final long datagrams) {
        final Map<String, Long> m = counters(receiver);
        assertEquals(aggregates, m.get("link.rx.aggregates"), m::toString);
        assertEquals(datagrams, m.get("link.rx.aggregated_datagrams"), m::toString);
    }

    @Test
    void aRunOfFullDatagramsAndAShorterLastLeavesAsOneSegmentedSend() throws Throwable {
        onVethPair(1500, 218, (a, b, ip) -> {
            assertEquals(1472, a.mtu());
            a.cork();
            for (int tag = 1; tag <= 10; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, full(a)));
            }
            assertTrue(LinkFrames.send(a, b, 11, 100));
            a.uncork();
            final LinkFrames.Received got = receive(b, 11);
            final int[] lengths = new int[11];
            java.util.Arrays.fill(lengths, full(a));
            lengths[10] = 100;
            LinkFrames.assertFrames(got, 1, lengths);
            assertSegmented(a, 1, 11);
            final Map<String, Long> c = counters(a);
            assertEquals(0L, c.get("link.tx.segmenting_refused"), c::toString);
            assertEquals(0L, c.get("link.tx.errors"), c::toString);
            // The receiver took that run datagram by datagram, and its full-size datagrams switched aggregating on:
            // the next run comes as one aggregate (UDP GRO), which it cuts back into its datagrams.
            assertEquals(0L, counters(b).get("link.rx.aggregates"));
            assertTrue(b.aggregating());
            a.cork();
            for (int tag = 12; tag <= 22; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, tag == 22 ? 100 : full(a)));
            }
            a.uncork();
            LinkFrames.assertFrames(receive(b, 11), 12, lengths);
            assertAggregated(b, 1, 11);
            assertEquals(0L, counters(b).get("link.rx.bad_crc"));
        });
    }

    @Test
    void aggregatingStartsWithALongMessagesFragmentsAndStopsAfterLoneSmallDatagrams() throws Throwable {
        onVethPair(1500, 228, (a, b, ip) -> {
            assertTrue(b.receivesAggregates());
            assertFalse(b.aggregating(), "off until long messages come: on, it slows every lone datagram");
            assertTrue(LinkFrames.send(a, b, 1, full(a)));
            LinkFrames.assertFrames(receive(b, 1), 1, full(a));
            assertFalse(b.aggregating(), "one full-size datagram is not yet a long message");
            prime(a, b);
            for (int tag = 1; tag < UdpLink.AGGREGATE_UNTIL; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, 8));
                LinkFrames.assertFrames(receive(b, 1), tag, 8);
                assertTrue(b.aggregating(), "still on after " + tag + " lone datagrams");
            }
            assertTrue(LinkFrames.send(a, b, 9, 8));
            LinkFrames.assertFrames(receive(b, 1), 9, 8);
            assertFalse(b.aggregating(), "off after " + UdpLink.AGGREGATE_UNTIL + " receives without a long message");
            assertEquals(2L, counters(b).get("link.rx.aggregating_switches"));
        });
    }

    @Test
    void aLongMessageOfTwoFullFragmentsSwitchesAggregatingOnAtAnIdleLink() throws Throwable {
        // An idle link takes the first datagram alone (recvfrom) and the rest in a batch: the full-size one taken
        // alone still counts with the batch's, as when one recvmmsg took both.
        onVethPair(1500, 229, (a, b, ip) -> {
            final LinkFrames.Received idle = new LinkFrames.Received();
            assertEquals(0, b.receive(idle, 16), "nothing waits: the next receive is a single one");
            a.cork();
            assertTrue(LinkFrames.send(a, b, 1, full(a)));
            assertTrue(LinkFrames.send(a, b, 2, full(a)));
            assertTrue(LinkFrames.send(a, b, 3, 100));
            a.uncork();
            LinkFrames.assertFrames(receive(b, 3), 1, full(a), full(a), 100);
            assertTrue(counters(b).get("link.rx.single_receives") >= 2, "the first datagram taken alone");
            assertTrue(b.aggregating(), "two full-size datagrams are a long message's fragments");
        });
    }

    /** Sends a run of three full-size datagrams from a to b and receives it: b aggregates from then on. */
    private static void prime(final UdpLink a, final UdpLink b) {
        a.cork();
        for (int tag = 101; tag <= 103; tag++) {
            assertTrue(LinkFrames.send(a, b, tag, full(a)));
        }
        a.uncork();
        LinkFrames.assertFrames(receive(b, 3), 101, full(a), full(a), full(a));
        assertTrue(b.aggregating(), "a long message's fragments switch aggregating on");
    }

    @Test
    void eachPeerGetsItsOwnRunsAndADatagramAfterAShorterOneStartsAnother() throws Throwable {
        onVethPair(1500, 219, (a, b, ip) -> {
            try (UdpLink c = new UdpLink("udp:" + ip[1])) {
                final int full = full(a);
                a.cork();
                assertTrue(LinkFrames.send(a, b, 1, full));
                assertTrue(LinkFrames.send(a, b, 2, full));
                assertTrue(LinkFrames.send(a, b, 3, 300)); // ends b's first run
                assertTrue(LinkFrames.send(a, c, 20, full)); // another peer: a run of its own
                assertTrue(LinkFrames.send(a, c, 21, full));
                assertTrue(LinkFrames.send(a, b, 4, full)); // b again, alone: a plain datagram
                a.uncork();
                LinkFrames.assertFrames(receive(b, 4), 1, full, full, 300, full);
                LinkFrames.assertFrames(receive(c, 2), 20, full, full);
                assertSegmented(a, 2, 5);
            }
        });
    }

    @Test
    void aDatagramForTheSamePeerAfterAShorterOneStartsAnotherRun() throws Throwable {
        // Consecutive datagrams for one peer: full, full, short, full, full. Were the short one not to end its run,
        // the kernel would cut full, full, (short + the head of the next full), ...: frames torn across datagrams.
        onVethPair(1500, 224, (a, b, ip) -> {
            final int full = full(a);
            a.cork();
            assertTrue(LinkFrames.send(a, b, 1, full));
            assertTrue(LinkFrames.send(a, b, 2, full));
            assertTrue(LinkFrames.send(a, b, 3, 300));
            assertTrue(LinkFrames.send(a, b, 4, full)); // does not fit beside 300: a datagram of its own
            assertTrue(LinkFrames.send(a, b, 5, full));
            a.uncork();
            LinkFrames.assertFrames(receive(b, 5), 1, full, full, 300, full, full);
            assertSegmented(a, 2, 5);
            final Map<String, Long> r = counters(b);
            assertEquals(0L, r.get("link.rx.bad_crc"), r::toString);
            assertEquals(0L, r.get("link.rx.truncated"), r::toString);
        });
    }

    @Test
    void theControlBufferIsOfferedAgainBeforeEveryReceive() throws Throwable {
        // The kernel writes back the control length it used: 0 after a plain datagram. Unless it is set again before
        // the next recvmmsg, the aggregate that lands in that buffer next comes without its size.
        onVethPair(1500, 225, (a, b, ip) -> {
            final int full = full(a);
            prime(a, b);
            assertTrue(LinkFrames.send(a, b, 1, 8)); // alone: a plain datagram, no cmsg
            LinkFrames.assertFrames(receive(b, 1), 1, 8);
            a.cork();
            for (int tag = 2; tag <= 4; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, full));
            }
            a.uncork();
            LinkFrames.assertFrames(receive(b, 3), 2, full, full, full);
            assertAggregated(b, 1, 3);
        });
    }

    @Test
    void aRunStopsBelowTheLargestUdpPayload() throws Throwable {
        // Frames of 8972 bytes: 7 make 62 804 bytes, an 8th would pass 65 507, so 9 go as runs of 7 and 2.
        onVethPair(9000, 220, (a, b, ip) -> {
            final int full = full(a);
            a.cork();
            for (int tag = 1; tag <= 9; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, full));
            }
            a.uncork();
            final int[] lengths = new int[9];
            java.util.Arrays.fill(lengths, full);
            LinkFrames.assertFrames(receive(b, 9), 1, lengths);
            assertSegmented(a, 2, 9);
        });
    }

    @Test
    void aCorruptDatagramInsideAnAggregateCostsOnlyItsOwnFrames() throws Throwable {
        onVethPair(1500, 223, (a, b, ip) -> {
            final int full = full(a);
            prime(a, b);
            a.cork();
            assertTrue(LinkFrames.send(a, b, 1, full));
            final io.jdet.internal.wire.FrameGather payload = LinkFrames.payload(full, 2);
            final MemorySegment bad = LinkFrames.header(2, payload);
            final long crc = io.jdet.internal.wire.FrameCrc.CRC_OFFSET;
            bad.set(ValueLayout.JAVA_BYTE, crc, (byte) ~bad.get(ValueLayout.JAVA_BYTE, crc));
            assertTrue(a.send(a.resolve(b.address()), bad, HEADER, payload));
            assertTrue(LinkFrames.send(a, b, 3, full));
            a.uncork();
            final LinkFrames.Received got = new LinkFrames.Received();
            Tests.await("frames 1 and 3, and the bad one counted", () -> {
                b.receive(got, 16);
                return got.frames.size() >= 2 && counters(b).get("link.rx.bad_crc") >= 1;
            });
            assertEquals(2, got.frames.size());
            assertEquals((byte) 1, got.frames.get(0)[0]);
            assertEquals((byte) 3, got.frames.get(1)[0], "the datagram after the bad one still counts");
            assertEquals(1L, counters(b).get("link.rx.aggregates"));
        });
    }

    @Test
    void onlyALinkThatDoesNotPlaceFragmentsTakesAggregates() throws Throwable {
        try (UdpLink loopback = new UdpLink("udp:127.0.0.1")) {
            assertTrue(loopback.mtu() >= UdpLink.PLACE_MIN_FRAME);
            assertFalse(loopback.receivesAggregates(), "frames of 64 KiB are placed, one datagram at a time");
        }
        onVethPair(1500, 222, (a, b, ip) -> assertTrue(a.receivesAggregates(),
            "1472-byte frames are copied, and may come aggregated"));
    }

    @Test
    void aPeerThatRefusesEverySendDoesNotTurnSegmentingOff() throws Throwable {
        onVethPair(1500, 227, (a, b, ip) -> {
            final int full = full(a);
            // Port 0: the kernel refuses a send to it (EINVAL), cut into datagrams or not.
            final long nowhere = a.resolve(b.address()) & ~0xFFFFL;
            a.cork();
            for (int tag = 1; tag <= 3; tag++) {
                final io.jdet.internal.wire.FrameGather payload = LinkFrames.payload(full, tag);
                assertTrue(a.send(nowhere, LinkFrames.header(tag, payload), HEADER, payload));
            }
            for (int tag = 4; tag <= 6; tag++) {
                assertTrue(LinkFrames.send(a, b, tag, full));
            }
            a.uncork();
            LinkFrames.assertFrames(receive(b, 3), 4, full, full, full);
            final Map<String, Long> m = counters(a);
            assertEquals(3L, m.get("link.tx.errors"), "the three datagrams to port 0 are lost: " + m);
            assertEquals(0L, m.get("link.tx.segmenting_refused"), m::toString);
            assertEquals(1L, m.get("link.tx.segmented_sends"), "b's run still went as one: " + m);
        });
    }

    @Test
    void aKernelThatRefusesToSegmentGetsTheDatagramsOneByOne() throws Throwable {
        onVethPair(1500, 221, (a, b, ip) -> {
            try (Arena arena = Arena.ofConfined()) {
                // A socket that sends without UDP checksums cannot segment: the kernel answers EINVAL.
                final MemorySegment one = arena.allocate(ValueLayout.JAVA_INT);
                one.set(ValueLayout.JAVA_INT, 0, 1);
                final int set = (int) Posix.SETSOCKOPT.invokeExact(Posix.newErrnoState(arena), a.fd(),
                    Posix.SOL_SOCKET, SO_NO_CHECK, one, 4);
                assertEquals(0, set, "setsockopt SO_NO_CHECK");
                final int full = full(a);
                for (int round = 0; round < 2; round++) {
                    a.cork();
                    for (int tag = 1; tag <= 5; tag++) {
                        assertTrue(LinkFrames.send(a, b, tag, full));
                    }
                    a.uncork();
                    LinkFrames.assertFrames(receive(b, 5), 1, full, full, full, full, full);
                }
                final Map<String, Long> m = counters(a);
                assertEquals(1L, m.get("link.tx.segmenting_refused"), "refused once, then never asked: " + m);
                assertEquals(0L, m.get("link.tx.segmented_sends"), m::toString);
                assertEquals(0L, m.get("link.tx.errors"), m::toString);
            }
        });
    }
}
