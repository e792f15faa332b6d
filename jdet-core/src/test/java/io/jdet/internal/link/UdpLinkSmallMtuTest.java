package io.jdet.internal.link;

import io.jdet.WcStatus;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import io.jdet.testing.VethPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The UDP link on an interface whose MTU (IPv4 allows 68) leaves less than a frame header once IP and UDP take
 * theirs: the frame limit was MTU - 28, so the NIC opened with a frame limit below the 80-byte header, its engine
 * split messages into frames of negative payload (zero at MTU 108: a division by zero) and nothing ever arrived,
 * although IP fragments a larger datagram and every IPv4 host reassembles 576 bytes.
 */
@Timeout(60)
class UdpLinkSmallMtuTest {

    @Test
    void shouldNeverGiveAFrameLimitThatCannotHoldAFrame() {
        for (int mtu = 29; mtu <= 700; mtu++) {
            final int limit = new UdpAddress(1, 1, mtu).frameLimit();
            assertTrue(limit >= 576 - 28, "MTU " + mtu + ": frame limit " + limit + ", a header is "
                + Frame.HEADER_LENGTH);
        }
    }

    @Test
    void shouldCarryAMessageOverAnInterfaceWhoseMtuLeavesNoRoomForAFrame() {
        try (VethPair veth = new VethPair(100)) {
            final String[] ip = veth.addresses(213);
            try (Loopback pair = Loopback.open(new Loopback.Options()
                .nics("udp:" + ip[0], "udp:" + ip[1]))) {
                pair.qpB.recv(1, sge(pair.mrB, 0, 1000), 1);
                Tests.fill(pair.bufA.asSlice(0, 1000), 5);
                pair.qpA.send(2, sge(pair.mrA, 0, 1000), 1, 0, 0);
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status(), () -> "" + pair.nicA.counters());
                assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqB).status());
                Tests.assertSameBytes(pair.bufA.asSlice(0, 1000), pair.bufB.asSlice(0, 1000));
            }
        }
    }
}
