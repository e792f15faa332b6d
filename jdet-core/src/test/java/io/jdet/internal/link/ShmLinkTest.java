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
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
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
            assertFalse(a.checksummed(1), "memory needs no CRC");
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
            assertTrue(link.checksummed(1));
        }
    }

    /**
     * A peer writes "closed" into this NIC's own state word (the word is anyone's to write), then this NIC sends a
     * frame to itself: a queue pair connected within one NIC, or a reply to a frame whose forged sender id is this
     * NIC's own. The send must not take the forged word for its own ring's close: unmapping the ring it drains
     * would make every later receive throw on the engine thread.
     */
    @Test
    void aForgedClosedStateNeverMakesANicUnmapItsOwnRing() throws Exception {
        try (Arena arena = Arena.ofConfined(); Link a = Links.open("shm:self", configuration())) {
            final MemorySegment header = arena.allocate(Frame.HEADER_LENGTH, 8);
            header.set(ValueLayout.JAVA_LONG, 0, 78);
            final FrameGather none = new FrameGather(0);
            final long self = a.resolve(a.address());
            assertTrue(self > 0);
            final Path own = groupDirectory("self").resolve(a.address().substring("shm:self/".length()) + ".ring");
            try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(own,
                java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE);
                 Arena map = Arena.ofConfined()) {
                channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, channel.size(), map)
                    .set(ValueLayout.JAVA_INT, ShmRingDescriptor.STATE_OFFSET, ShmRingDescriptor.STATE_CLOSED);
            }
            a.send(self, header, Frame.HEADER_LENGTH, none);
            assertDoesNotThrow(a::mayHaveInput, "the NIC's own ring is still mapped");
            assertDoesNotThrow(() -> a.receive((frame, length, peer) -> { }, 10));
            assertTrue(Files.exists(own), "the NIC's own ring file is still there for its peers");
        }
    }

    /**
     * {@code <dir>/jdet-<uid>} lies in a directory every user may write ({@code /dev/shm}): another local user can
     * make that name first, as a directory of its own that anyone may write or as a link to one. Rings made in it
     * could then be renamed, replaced or read by that user, and its files taken for peers' rings. The link must
     * refuse a user or group directory that is not a real directory of its own user closed to everyone else.
     */
    @Test
    void refusesAUserOrGroupDirectoryThatOthersCouldWrite() throws Exception {
        final Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        final var open = PosixFilePermissions.fromString("rwxrwxrwx");
        // A link planted under the user directory's name, to a directory anyone may write.
        final Path linked = dir.resolve("linked");
        final Path elsewhere = Files.createDirectory(linked.resolveSibling("elsewhere"));
        Files.setPosixFilePermissions(elsewhere, open);
        Files.createDirectory(linked);
        Files.createSymbolicLink(linked.resolve("jdet-" + uid), elsewhere);
        // A real user directory anyone may write.
        final Path writable = Files.createDirectory(dir.resolve("writable"));
        Files.setPosixFilePermissions(Files.createDirectory(writable.resolve("jdet-" + uid)), open);
        // A private user directory, but a group directory anyone may write.
        final Path group = Files.createDirectory(dir.resolve("group"));
        final Path user = Files.createDirectory(group.resolve("jdet-" + uid),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.setPosixFilePermissions(Files.createDirectory(user.resolve("g")), open);
        for (final Path base : new Path[] {linked, writable, group}) {
            final Configuration c = configuration().shmDirectory(base.toString());
            final DetException e = assertThrows(DetException.class, () -> Links.open("shm:g", c).close(),
                base.getFileName().toString());
            assertEquals(Errno.ENODEV, e.errno());
        }
        try (var planted = Files.list(elsewhere)) {
            assertEquals(0, planted.count(), "nothing made in the other user's directory");
        }
    }

    /**
     * The sender id of a frame is whatever its writer put in the slot, and the engine answers frames (a cookie, an
     * INVALID_QP disconnect) to that id: a peer inventing ids fills the peer table with unreachable entries. Once
     * full, the NIC must still reach a real peer, one whose ring exists, rather than refuse every new one for good.
     */
    @Test
    void inventedSenderIdsNeverLockARealPeerOut() throws Exception {
        try (Arena arena = Arena.ofConfined(); Link a = Links.open("shm:full", configuration());
             Link b = Links.open("shm:full", configuration())) {
            final MemorySegment header = arena.allocate(Frame.HEADER_LENGTH, 8);
            header.set(ValueLayout.JAVA_LONG, 0, 79);
            final FrameGather none = new FrameGather(0);
            for (long invented = 1; invented <= ShmPeers.MAX_PEERS; invented++) {
                assertTrue(a.send(invented << 20, header, Frame.HEADER_LENGTH, none), "dropped: nobody there");
            }
            final long toB = a.resolve(b.address());
            assertTrue(toB > 0, "a real peer is still reachable");
            assertTrue(a.send(toB, header, Frame.HEADER_LENGTH, none));
            assertEquals(1, b.receive((frame, length, peer) -> assertEquals(79, frame.get(ValueLayout.JAVA_LONG, 0)),
                10));
            for (long invented = 1; invented <= ShmPeers.MAX_PEERS; invented++) { // full again
                assertTrue(a.send((invented << 20) + 1, header, Frame.HEADER_LENGTH, none));
            }
            // And a peer a never resolved (c) writes first: a's answer goes to the id in the slot.
            try (Link c = Links.open("shm:full", configuration())) {
                assertTrue(c.send(c.resolve(a.address()), header, Frame.HEADER_LENGTH, none));
                final List<Long> senders = new ArrayList<>();
                assertEquals(1, a.receive((frame, length, peer) -> senders.add(peer), 10));
                assertTrue(a.send(senders.get(0), header, Frame.HEADER_LENGTH, none));
                assertEquals(1, c.receive((frame, length, peer) -> { }, 10), "a's answer reached c");
            }
        }
    }

    private long ringFiles(final String group) throws Exception {
        try (var files = Files.list(groupDirectory(group))) {
            return files.filter(f -> f.toString().endsWith(".ring")).count();
        }
    }
}
