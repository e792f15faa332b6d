package io.jdet.internal.link;

import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShmRingTest {
    private static final int MTU = 512;
    private static final FrameGather NONE = new FrameGather(0);

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final List<ShmRing> rings = new ArrayList<>();

    @AfterEach
    void close() {
        rings.forEach(ShmRing::close);
        arena.close();
    }

    private ShmRing owner(final int slots) throws IOException {
        final ShmRing ring = ShmRing.create(dir.resolve("1.ring"), 1, slots, MTU);
        rings.add(ring);
        return ring;
    }

    private ShmRing peer() {
        final ShmRing ring = ShmRing.open(dir.resolve("1.ring"));
        assertNotNull(ring);
        rings.add(ring);
        return ring;
    }

    /** A header-sized frame whose first long is the marker. */
    private MemorySegment frame(final long marker) {
        final MemorySegment header = arena.allocate(Frame.HEADER_LENGTH, 8);
        header.set(ValueLayout.JAVA_LONG, 0, marker);
        return header;
    }

    private static List<Long> drainAll(final ShmRing ring, final List<Long> senders) {
        final List<Long> markers = new ArrayList<>();
        ring.drain((frame, length, peer) -> {
            markers.add(frame.get(ValueLayout.JAVA_LONG, 0));
            senders.add(peer);
        }, Integer.MAX_VALUE, new FrameCrc());
        return markers;
    }

    @Test
    void shouldDeliverInOrderAcrossManyLapsWhenRingWrapsAround() throws IOException {
        final ShmRing ring = owner(8);
        final ShmRing sender = peer();
        final List<Long> got = new ArrayList<>();
        final List<Long> senders = new ArrayList<>();
        for (long i = 0; i < 100; i += 5) {
            for (long j = i; j < i + 5; j++) {
                assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(j), Frame.HEADER_LENGTH, NONE));
            }
            got.addAll(drainAll(ring, senders));
        }
        for (int i = 0; i < 100; i++) {
            assertEquals(i, got.get(i));
            assertEquals(7L, senders.get(i));
        }
        assertTrue(ring.isEmpty());
    }

    @Test
    void shouldGatherPayloadPiecesIntoOneFrame() throws IOException {
        final ShmRing ring = owner(8);
        final MemorySegment a = arena.allocate(100);
        final MemorySegment b = arena.allocate(50);
        a.fill((byte) 1);
        b.fill((byte) 2);
        final FrameGather gather = new FrameGather(2);
        gather.add(a, a.asByteBuffer(), 10, 90);
        gather.add(b, b.asByteBuffer(), 0, 50);
        assertEquals(ShmRing.SENT, peer().offer(3, 0, frame(9), Frame.HEADER_LENGTH, gather));
        final int[] seen = new int[3];
        ring.drain((frame, length, peer) -> {
            seen[0] = length;
            seen[1] = frame.get(ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH + 89);
            seen[2] = frame.get(ValueLayout.JAVA_BYTE, Frame.HEADER_LENGTH + 90);
        }, 10, new FrameCrc());
        assertEquals(Frame.HEADER_LENGTH + 140, seen[0]);
        assertEquals(1, seen[1]);
        assertEquals(2, seen[2]);
    }

    @Test
    void shouldRefuseFramesWhenRingIsFullAndAcceptAgainWhenDrained() throws IOException {
        final ShmRing ring = owner(8);
        final ShmRing sender = peer();
        for (int i = 0; i < 8; i++) {
            assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(i), Frame.HEADER_LENGTH, NONE));
        }
        assertEquals(ShmRing.FULL, sender.offer(7, 0, frame(8), Frame.HEADER_LENGTH, NONE));
        assertEquals(8, drainAll(ring, new ArrayList<>()).size());
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(8), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(8L), drainAll(ring, new ArrayList<>()));
    }

    @Test
    void shouldKeepEachSendersOrderWhenSendersRace() throws Exception {
        final ShmRing ring = owner(16);
        final int perSender = 2_000;
        final List<Thread> threads = new ArrayList<>();
        final ShmRing[] views = new ShmRing[3];
        for (int s = 0; s < views.length; s++) {
            views[s] = peer();
        }
        for (int s = 0; s < views.length; s++) {
            final ShmRing view = views[s];
            final long sender = s + 1;
            threads.add(Thread.ofPlatform().start(() -> {
                try (Arena local = Arena.ofConfined()) {
                    final MemorySegment header = local.allocate(Frame.HEADER_LENGTH, 8);
                    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    for (long i = 0; i < perSender; ) {
                        header.set(ValueLayout.JAVA_LONG, 0, i);
                        if (view.offer(sender, 0, header, Frame.HEADER_LENGTH, NONE) == ShmRing.SENT) {
                            i++;
                        } else if (System.nanoTime() - deadline > 0) {
                            throw new AssertionError("sender " + sender + " stuck at " + i);
                        } else {
                            Thread.yield(); // two cores host all four threads: let the consumer run
                        }
                    }
                }
            }));
        }
        final long[] next = new long[views.length + 1];
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        int total = 0;
        while (total < perSender * views.length) {
            total += ring.drain((frame, length, peer) -> {
                assertEquals(next[(int) peer]++, frame.get(ValueLayout.JAVA_LONG, 0));
            }, 64, new FrameCrc());
            assertTrue(System.nanoTime() - deadline < 0, "consumer stuck at " + total);
            Thread.yield();
        }
        for (final Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(t.isAlive());
        }
        assertEquals(perSender, next[1]);
        assertEquals(perSender, next[3]);
    }

    @Test
    void shouldSkipSlotWhenItsClaimantDiedBeforePublishing() throws Exception {
        final ShmRing ring = owner(8);
        final ShmRing sender = peer();
        // A producer that claimed ticket 0 (the tail moved, the sequence did not), wrote its pid and died.
        final long deadPid = finishedProcessPid();
        try (FileChannel channel = FileChannel.open(dir.resolve("1.ring"), StandardOpenOption.READ,
            StandardOpenOption.WRITE); Arena local = Arena.ofConfined()) {
            final MemorySegment raw = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), local);
            raw.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.TAIL_OFFSET, 1L);
            raw.set(ValueLayout.JAVA_INT, ShmRingDescriptor.HEADER_LENGTH + ShmRingDescriptor.SLOT_CLAIMANT_OFFSET,
                (int) deadPid);
        }
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(42), Frame.HEADER_LENGTH, NONE));
        final List<Long> got = new ArrayList<>();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (got.isEmpty()) {
            got.addAll(drainAll(ring, new ArrayList<>()));
            assertTrue(System.nanoTime() - deadline < 0, "the dead claim was never skipped");
            Thread.onSpinWait();
        }
        assertEquals(List.of(42L), got);
        assertEquals(1, ring.skipped());
    }

    @Test
    void shouldNotSkipSlotWhileItsClaimantRuns() throws IOException {
        final ShmRing ring = owner(8);
        final ShmRing sender = peer();
        // This process claimed ticket 0 and is still running: never skipped while the claimant runs.
        try (FileChannel channel = FileChannel.open(dir.resolve("1.ring"), StandardOpenOption.READ,
            StandardOpenOption.WRITE); Arena local = Arena.ofConfined()) {
            final MemorySegment raw = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), local);
            raw.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.TAIL_OFFSET, 1L);
            raw.set(ValueLayout.JAVA_INT, ShmRingDescriptor.HEADER_LENGTH + ShmRingDescriptor.SLOT_CLAIMANT_OFFSET,
                (int) ProcessStamp.PID);
        }
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(1), Frame.HEADER_LENGTH, NONE));
        for (int i = 0; i < 1000; i++) {
            assertEquals(0, ring.drain((f, l, p) -> { }, 10, new FrameCrc()));
        }
        assertEquals(0, ring.skipped());
    }

    @Test
    void shouldReportOwnerGoneWhenItClosedOrItsProcessDied() throws Exception {
        final ShmRing ring = owner(8);
        final ShmRing sender = peer();
        assertFalse(sender.ownerGone(System.nanoTime()));
        ring.close();
        rings.remove(ring);
        assertTrue(sender.ownerGone(System.nanoTime()));
        assertEquals(ShmRing.CLOSED, sender.offer(7, 0, frame(1), Frame.HEADER_LENGTH, NONE));
        assertFalse(Files.exists(dir.resolve("1.ring")));
        // A ring file whose owner process is gone is stale.
        final ShmRing orphan = ShmRing.create(dir.resolve("2.ring"), 2, 8, MTU);
        try (FileChannel channel = FileChannel.open(dir.resolve("2.ring"), StandardOpenOption.READ,
            StandardOpenOption.WRITE); Arena local = Arena.ofConfined()) {
            final MemorySegment raw = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), local);
            raw.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.OWNER_PID_OFFSET, finishedProcessPid());
        }
        assertTrue(ShmRing.stale(dir.resolve("2.ring")));
        assertEquals(0, ShmLink.sweep(dir));
        assertFalse(Files.exists(dir.resolve("2.ring")));
        orphan.close();
    }

    @Test
    void shouldNotOpenFilesThatAreNoRing() throws IOException {
        Files.write(dir.resolve("junk.ring"), new byte[1000]);
        assertNull(ShmRing.open(dir.resolve("junk.ring")));
        assertNull(ShmRing.open(dir.resolve("missing.ring")));
        assertFalse(ShmRing.stale(dir.resolve("junk.ring")));
    }

    @Test
    void shouldDropFramesWithImpossibleLengths() throws IOException {
        final ShmRing ring = owner(8);
        final ShmRing sender = peer();
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(1), 10, NONE));
        assertEquals(ShmRing.SENT, sender.offer(-5, 0, frame(2), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(), drainAll(ring, new ArrayList<>()));
        assertEquals(2, ring.badLength());
    }

    @Test
    void shouldWakeSleepingOwnerWhenFrameArrives() throws Exception {
        final ShmRing ring = owner(8);
        final ShmRing sender = peer();
        final Thread sleeper = Thread.ofPlatform().start(() -> ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(60), 0));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (sleeper.getState() == Thread.State.NEW) {
            assertTrue(System.nanoTime() - deadline < 0);
            Thread.onSpinWait();
        }
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(1), Frame.HEADER_LENGTH, NONE));
        sleeper.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(sleeper.isAlive(), "a frame did not wake the owner");
        final Thread second = Thread.ofPlatform().start(() -> {
            drainAll(ring, new ArrayList<>());
            ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(60), 0);
        });
        while (second.isAlive() && second.getState() != Thread.State.RUNNABLE) {
            Thread.onSpinWait();
        }
        final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (second.isAlive() && System.nanoTime() - until < 0) {
            ring.wakeup(Link.PROGRESS);
            second.join(1);
        }
        assertFalse(second.isAlive(), "wakeup did not end the wait");
    }

    private static long finishedProcessPid() throws Exception {
        final Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        return p.pid();
    }
}
