package io.jdet.internal.link;

import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.FaultPlan;
import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShmLinkTest {
    @TempDir
    Path dir;

    private Configuration configuration() {
        return new Configuration().shmDirectory(dir.toString()).shmMtu(1024).shmRingFrames(8);
    }

    private Path groupDirectory(final String group) throws Exception {
        return dir.resolve("jdet-" + Files.getAttribute(Path.of("/proc/self"), "unix:uid")).resolve(group);
    }

    @Test
    void shouldRefuseNamesThatAreNoGroupWithEnodev() {
        for (final String name : new String[] {"shm:", "shm:a/b", "shm:..", "shm:" + "x".repeat(65), "shm:a b"}) {
            final DetException e = assertThrows(DetException.class, () -> Links.open(name, configuration()), name);
            assertEquals(Errno.ENODEV, e.errno());
        }
    }

    @Test
    void shouldResolveOnlyLiveAddressesOfItsGroup() throws Exception {
        try (Link a = Links.open("shm:g", configuration()); Link b = Links.open("shm:g", configuration())) {
            assertTrue(a.address().startsWith("shm:g/"), a.address());
            assertNotEquals(a.address(), b.address());
            assertEquals(1024, a.mtu());
            assertFalse(a.checksummed(), "memory needs no CRC");
            final long peer = a.resolve(b.address());
            assertTrue(peer > 0);
            assertEquals(b.address(), a.describe(peer));
            assertEquals(-1, a.resolve("shm:other/" + b.address().substring(6)));
            assertEquals(-1, a.resolve("shm:g/zz"));
            assertEquals(-1, a.resolve("shm:g/123"));
            assertEquals(-1, a.resolve("loop:g/1"));
            assertEquals(2, ringFiles("g"));
        }
        assertFalse(Files.exists(groupDirectory("g")), "closing the last NIC removes the group's files");
    }

    @Test
    void shouldCarryFramesWithSenderHandleAndDropThemForClosedPeer() throws Exception {
        try (Arena arena = Arena.ofConfined(); Link a = Links.open("shm:h", configuration())) {
            final MemorySegment header = arena.allocate(Frame.HEADER_LENGTH, 8);
            header.set(ValueLayout.JAVA_LONG, 0, 77);
            final FrameGather none = new FrameGather(0);
            final Link b = Links.open("shm:h", configuration());
            final long toB = a.resolve(b.address());
            assertTrue(a.send(toB, header, Frame.HEADER_LENGTH, none));
            final List<Long> from = new ArrayList<>();
            assertEquals(1, b.receive((frame, length, peer) -> {
                assertEquals(77, frame.get(ValueLayout.JAVA_LONG, 0));
                from.add(peer);
            }, 10));
            assertEquals(b.resolve(a.address()), from.get(0), "the peer handle of a frame is its sender's");
            b.close();
            assertTrue(a.send(toB, header, Frame.HEADER_LENGTH, none), "a closed peer's frames are dropped");
            final var counters = new java.util.HashMap<String, Long>();
            a.addCounters(counters);
            assertEquals(1, counters.get("link.tx.peer_gone"));
            assertEquals(1, ringFiles("h"), "the closed peer deleted its ring");
            assertEquals(-1, a.resolve(b.address()));
        }
    }

    @Test
    void shouldAskForCrcsWhenFaultsCorruptFrames() {
        final Configuration corrupting = configuration().faults(new FaultPlan(0, 0, 0, 0.5, 1));
        try (Link link = Links.open("shm:c", corrupting)) {
            assertTrue(link.checksummed());
        }
    }

    private long ringFiles(final String group) throws Exception {
        try (var files = Files.list(groupDirectory(group))) {
            return files.filter(f -> f.toString().endsWith(".ring")).count();
        }
    }
}
