package io.jdet.internal.cm;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The per-source bound on open connection requests, and which request makes room when the table is full. */
class CmSourcesTest {
    /** A UDP peer: the IPv4 address above the 16-bit port. */
    private static long udp(final int host, final int port) {
        return (0x0A00_0000L | host) << 16 | port;
    }

    private static CmRequest request(final long peer, final int state) {
        final CmRequest r = new CmRequest(null, peer, "peer", 1, 2, 3, 0, 0, new byte[0]);
        r.state = state;
        return r;
    }

    @Test
    void countsTheOpenRequestsOfOneHostOverAllItsPortsOnUdp() {
        final CmSources sources = new CmSources(true, 2);
        final List<CmRequest> table = new ArrayList<>();
        assertTrue(sources.allows(table, udp(1, 5000)));
        table.add(request(udp(1, 5000), CmRequest.PENDING));
        assertTrue(sources.allows(table, udp(1, 5001)));
        table.add(request(udp(1, 5001), CmRequest.ACCEPTED));
        assertFalse(sources.allows(table, udp(1, 5002)), "two open from host 1, whatever the port");
        assertTrue(sources.allows(table, udp(2, 5000)), "another host is not limited by host 1");
        table.add(request(udp(2, 5000), CmRequest.PENDING));
        assertFalse(sources.allows(table, udp(1, 5000)));
    }

    @Test
    void countsOnlyRequestsStillOpen() {
        final CmSources sources = new CmSources(true, 1);
        final List<CmRequest> table = new ArrayList<>();
        table.add(request(udp(1, 1), CmRequest.ESTABLISHED));
        table.add(request(udp(1, 2), CmRequest.REJECTED));
        table.add(request(udp(1, 3), CmRequest.AUTH_FAILED));
        assertTrue(sources.allows(table, udp(1, 4)), "answered requests do not count");
        table.add(request(udp(1, 5), CmRequest.ACCEPTED));
        assertFalse(sources.allows(table, udp(1, 4)), "an accepted one not yet established counts");
    }

    @Test
    void onOtherLinksTheWholeAddressIsTheSource() {
        final CmSources sources = new CmSources(false, 1);
        final List<CmRequest> table = new ArrayList<>();
        table.add(request(0x0000_1122_3344_5566L, CmRequest.PENDING));
        assertFalse(sources.allows(table, 0x0000_1122_3344_5566L));
        assertTrue(sources.allows(table, 0x0000_1122_3344_5567L), "differs in the low 16 bits only");
    }

    @Test
    void evictsTheFirstAnsweredRequestAndNeverAnOpenOne() {
        final List<CmRequest> table = new ArrayList<>();
        final CmRequest open = request(1, CmRequest.PENDING);
        final CmRequest accepted = request(2, CmRequest.ACCEPTED);
        final CmRequest done = request(3, CmRequest.ESTABLISHED);
        final CmRequest rejected = request(4, CmRequest.REJECTED);
        table.add(open);
        table.add(accepted);
        table.add(done);
        table.add(rejected);
        assertTrue(CmSources.evictAnswered(table));
        assertEquals(List.of(open, accepted, rejected), table, "the first answered one goes");
        assertTrue(CmSources.evictAnswered(table));
        assertEquals(List.of(open, accepted), table);
        assertFalse(CmSources.evictAnswered(table), "only open requests are left");
        assertEquals(2, table.size());
        assertSame(open, table.get(0));
    }
}
