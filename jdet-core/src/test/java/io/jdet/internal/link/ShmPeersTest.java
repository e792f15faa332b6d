package io.jdet.internal.link;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The peer table of a shared-memory NIC: lookups through growth and collisions, unreachable peers, its bound. */
class ShmPeersTest {
    @TempDir
    Path dir;

    private final List<ShmRing> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(ShmRing::close);
    }

    private ShmRing ring(final long id) throws IOException {
        final ShmRing r = ShmRing.create(dir.resolve(id + ".ring"), id, 8, 512);
        opened.add(r);
        return r;
    }

    @Test
    void everyPeerIsFoundWithItsRingThroughTheTablesGrowth() throws IOException {
        final ShmPeers peers = new ShmPeers();
        final ShmRing first = ring(1);
        final ShmRing last = ring(2);
        assertTrue(peers.put(1, first));
        for (long id = 2; id < 1000; id++) {
            assertTrue(peers.put(id * 16, null), "unreachable peers are remembered too"); // ids alike in low bits
        }
        assertTrue(peers.put(1000 * 16, last));
        assertSame(first, peers.get(1));
        assertSame(last, peers.get(1000 * 16));
        for (long id = 2; id < 1000; id++) {
            assertTrue(peers.contains(id * 16), "peer " + id * 16);
            assertNull(peers.get(id * 16));
        }
        assertFalse(peers.contains(3), "never recorded");
        assertNull(peers.get(3));
        assertEquals(java.util.Set.of(first, last), java.util.Set.of(peers.rings()), "the rings, nulls left out");
    }

    @Test
    void recordingAPeerAgainReplacesItsRingAndTakesNoRoom() throws IOException {
        final ShmPeers peers = new ShmPeers();
        assertTrue(peers.put(7, null));
        final ShmRing found = ring(7);
        assertTrue(peers.put(7, found), "the unreachable peer became reachable");
        assertSame(found, peers.get(7));
        assertEquals(1, peers.rings().length);
        for (long id = 100; id < 100 + ShmPeers.MAX_PEERS - 1; id++) {
            assertTrue(peers.put(id, null));
        }
        assertTrue(peers.put(7, found), "a known peer is recorded again even when the table is full");
        assertFalse(peers.put(99, null), "past the bound a new peer is not remembered");
        assertFalse(peers.contains(99));
        assertTrue(peers.contains(100 + ShmPeers.MAX_PEERS - 2));
    }
}
