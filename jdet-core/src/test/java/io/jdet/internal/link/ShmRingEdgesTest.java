package io.jdet.internal.link;

import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
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
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared-memory ring as a peer process may find it: headers and slots written by someone else are checked
 * field by field, never trusted; and the owner's memory is gone once it closes.
 */
class ShmRingEdgesTest {
    private static final int MTU = 512;
    private static final FrameGather NONE = new FrameGather(0);

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final List<ShmRing> rings = new ArrayList<>();

    @AfterEach
    void close() {
        rings.forEach(r -> {
            try {
                r.close();
            } catch (final IllegalStateException alreadyClosed) {
                // closed by the test itself
            }
        });
        arena.close();
    }

    private ShmRing create(final String name, final int slots, final int mtu) throws IOException {
        final ShmRing ring = ShmRing.create(dir.resolve(name), 1, slots, mtu);
        rings.add(ring);
        return ring;
    }

    private ShmRing open(final String name) {
        final ShmRing ring = ShmRing.open(dir.resolve(name));
        if (ring != null) {
            rings.add(ring);
        }
        return ring;
    }

    /** Changes a ring file as another process could. */
    private void edit(final String name, final Consumer<MemorySegment> change) throws IOException {
        try (FileChannel channel = FileChannel.open(dir.resolve(name), StandardOpenOption.READ,
            StandardOpenOption.WRITE); Arena local = Arena.ofConfined()) {
            change.accept(channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), local));
        }
    }

    /** Sets the sequence word of each of the 8 slots of an MTU-sized ring file, as another process could. */
    private void sequences(final String name, final java.util.function.IntToLongFunction ofSlot) throws IOException {
        edit(name, m -> {
            for (int i = 0; i < 8; i++) {
                m.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.slotOffset(i, 7, ShmRingDescriptor.slotSize(MTU))
                    + ShmRingDescriptor.SLOT_SEQUENCE_OFFSET, ofSlot.applyAsLong(i));
            }
        });
    }

    /** A copy of the ring file {@code 1.ring} with one change; the copy's name. */
    private String copyWith(final String copy, final Consumer<MemorySegment> change) throws IOException {
        Files.copy(dir.resolve("1.ring"), dir.resolve(copy));
        edit(copy, change);
        return copy;
    }

    private MemorySegment frame(final long marker, final int length) {
        final MemorySegment f = arena.allocate(length, 8);
        f.set(ValueLayout.JAVA_LONG, 0, marker);
        return f;
    }

    private static List<Long> drain(final ShmRing ring, final int max) {
        final List<Long> markers = new ArrayList<>();
        ring.drain((frame, length, peer) -> markers.add(frame.get(ValueLayout.JAVA_LONG, 0)), max, new FrameCrc());
        return markers;
    }

    private static long finishedProcessPid() throws Exception {
        final Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        return p.pid();
    }

    @Test
    void opensOnlyAHeaderWhoseEveryFieldIsRight() throws IOException {
        create("1.ring", 8, MTU);
        assertNotNull(open(copyWith("same.ring", m -> { })), "an unchanged copy opens");
        final int i = ShmRingDescriptor.SLOT_COUNT_OFFSET;
        assertNull(open(copyWith("magic.ring",
            m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.MAGIC_OFFSET, ShmRingDescriptor.MAGIC + 1))));
        assertNull(open(copyWith("version.ring",
            m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.VERSION_OFFSET, ShmRingDescriptor.VERSION + 1))));
        assertNull(open(copyWith("initialising.ring",
            m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.STATE_OFFSET, ShmRingDescriptor.STATE_INITIALISING))));
        assertNull(open(copyWith("closed.ring",
            m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.STATE_OFFSET, ShmRingDescriptor.STATE_CLOSED))));
        assertNull(open(copyWith("slots1.ring", m -> m.set(ValueLayout.JAVA_INT, i, 1))));
        assertNull(open(copyWith("slots0.ring", m -> m.set(ValueLayout.JAVA_INT, i, 0))));
        assertNull(open(copyWith("slots6.ring", m -> m.set(ValueLayout.JAVA_INT, i, 6))), "not a power of two");
        assertNull(open(copyWith("slots16.ring", m -> m.set(ValueLayout.JAVA_INT, i, 16))), "longer than the file");
        assertNull(open(copyWith("slots4.ring", m -> m.set(ValueLayout.JAVA_INT, i, 4))), "shorter than the file");
        assertNull(open(copyWith("slotsize.ring", m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.SLOT_SIZE_OFFSET,
            ShmRingDescriptor.slotSize(MTU) + 64))));
        assertNull(open(copyWith("mtu.ring", m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.MTU_OFFSET, MTU + 64))),
            "an MTU that does not match the slot size");
    }

    @Test
    void opensOnlyAFileOfTheRightLength() throws IOException {
        create("1.ring", 8, MTU);
        final byte[] whole = Files.readAllBytes(dir.resolve("1.ring"));
        Files.write(dir.resolve("long.ring"), java.util.Arrays.copyOf(whole, whole.length + 64));
        assertNull(open("long.ring"));
        Files.write(dir.resolve("short.ring"), java.util.Arrays.copyOf(whole, whole.length - 1));
        assertNull(open("short.ring"));
        Files.write(dir.resolve("header.ring"), java.util.Arrays.copyOf(whole, ShmRingDescriptor.HEADER_LENGTH));
        assertNull(open("header.ring"));
        Files.write(dir.resolve("tiny.ring"), java.util.Arrays.copyOf(whole, ShmRingDescriptor.HEADER_LENGTH - 1));
        assertNull(open("tiny.ring"));
    }

    @Test
    void theSmallestAndLargestLegalRingsOpen() throws IOException {
        create("two.ring", 2, MTU);
        assertNotNull(open("two.ring"), "two slots");
        create("min.ring", 2, ShmRing.MIN_MTU);
        assertNotNull(open("min.ring"), "the least MTU Configuration allows");
        create("max.ring", 2, 65_535);
        assertNotNull(open("max.ring"), "an MTU of 65535");
        create("small.ring", 2, ShmRing.MIN_MTU - 1);
        assertNull(open("small.ring"), "an MTU that leaves a protected frame no payload (a link adopting it failed "
            + "every post dividing by its payload size)");
        create("big.ring", 2, 65_536);
        assertNull(open("big.ring"), "an MTU above 65535");
    }

    @Test
    void aRingIsStaleOnlyWhenOrphaned() throws Exception {
        create("1.ring", 8, MTU);
        assertFalse(ShmRing.stale(dir.resolve("1.ring")), "its owner runs and has it open");
        assertFalse(ShmRing.stale(dir.resolve(copyWith("closed.ring",
            m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.STATE_OFFSET, ShmRingDescriptor.STATE_CLOSED)))),
            "the state word is anyone's to write: a live owner's ring is never deleted by a peer");
        assertFalse(ShmRing.stale(dir.resolve(copyWith("version.ring", m -> {
            m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.VERSION_OFFSET, ShmRingDescriptor.VERSION + 1);
            m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.STATE_OFFSET, ShmRingDescriptor.STATE_CLOSED);
        }))), "not a ring of this version: left alone");
        final long dead = finishedProcessPid();
        assertTrue(ShmRing.stale(dir.resolve(copyWith("orphan.ring",
            m -> m.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.OWNER_PID_OFFSET, dead)))));
        assertTrue(ShmRing.stale(dir.resolve(copyWith("orphan-closed.ring", m -> {
            m.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.OWNER_PID_OFFSET, dead);
            m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.STATE_OFFSET, ShmRingDescriptor.STATE_CLOSED);
        }))));
        Files.write(dir.resolve("short.ring"), new byte[ShmRingDescriptor.OWNER_START_OFFSET + Long.BYTES - 1]);
        assertFalse(ShmRing.stale(dir.resolve("short.ring")));
        assertFalse(ShmRing.stale(dir.resolve("missing.ring")));
    }

    @Test
    void aPeerNoticesItsOwnersDeathAtMostOncePerCheckInterval() throws Exception {
        create("1.ring", 8, MTU);
        final long dead = finishedProcessPid();
        final ShmRing orphaned = open(copyWith("orphan.ring",
            m -> m.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.OWNER_PID_OFFSET, dead)));
        final ShmRing live = open("1.ring");
        final long t0 = 1_000 * ShmRing.CLAIM_CHECK_NS;
        assertFalse(live.ownerGone(t0));
        assertFalse(live.ownerAlive() == false, "this process owns 1.ring");
        assertFalse(orphaned.ownerAlive());
        assertTrue(orphaned.ownerGone(t0));
        assertFalse(orphaned.ownerGone(t0 + ShmRing.CLAIM_CHECK_NS - 1), "/proc is read at most once per interval");
        assertTrue(orphaned.ownerGone(t0 + ShmRing.CLAIM_CHECK_NS));
        assertEquals(ShmRing.SENT, orphaned.offer(7, 0, frame(1, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE),
            "a dead owner is the caller's to notice; the ring still takes the frame");
    }

    @Test
    void dropsSlotsAPeerFilledWithImpossibleValues() throws IOException {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        final long slot0 = ShmRingDescriptor.slotOffset(0, 7, ShmRingDescriptor.slotSize(MTU));
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(1, MTU), MTU, NONE));
        assertEquals(List.of(1L), drain(ring, 8), "a frame of exactly the MTU");
        assertEquals(ShmRing.SENT, sender.offer(1, 0, frame(2, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(2L), drain(ring, 8), "sender 1, one header long");
        assertEquals(ShmRing.SENT, sender.offer(0, 0, frame(3, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(), drain(ring, 8), "sender 0 is no sender");
        assertEquals(1, ring.badLength());
        // A peer that writes a length beyond the MTU after publishing: the owner must not read past its slot.
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(4, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        final long slot3 = ShmRingDescriptor.slotOffset(3, 7, ShmRingDescriptor.slotSize(MTU));
        edit("1.ring", m -> m.set(ValueLayout.JAVA_INT, slot3 + ShmRingDescriptor.SLOT_LENGTH_OFFSET, MTU + 1));
        assertEquals(List.of(), drain(ring, 8));
        assertEquals(2, ring.badLength());
        assertEquals(0, ring.badCrc());
        assertTrue(slot0 >= ShmRingDescriptor.HEADER_LENGTH);
    }

    @Test
    @Timeout(30)
    void aProducerCallsARingWrittenOverFullInsteadOfSpinning() throws IOException {
        // Every slot's sequence set far ahead of the tail (or the tail moved back): no lap explains it, and a
        // producer that kept re-reading the tail would spin for ever with the engine lock held.
        create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        sequences("1.ring", i -> Long.MAX_VALUE - i);
        assertEquals(ShmRing.FULL, sender.offer(7, 0, frame(1, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        sequences("1.ring", i -> i + 1); // each one ahead by one: what a producer's publication looks like
        assertEquals(ShmRing.FULL, sender.offer(7, 0, frame(1, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE),
            "a tail that never catches up is given up after a bounded number of claims");
    }

    @Test
    void aCopyThatFailsPublishesAnEmptySlotInsteadOfStallingTheRing() throws IOException {
        // The payload's memory is freed between the claim and the copy: the producer's claim would stand for as long
        // as its process lives (a live claimant's slot is never skipped), stalling the ring for every sender.
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        final Arena gone = Arena.ofShared();
        final java.nio.ByteBuffer view = gone.allocate(64).asByteBuffer();
        final FrameGather freed = new FrameGather(1);
        freed.add(MemorySegment.ofBuffer(view), view, 0, 64);
        gone.close();
        assertThrows(IllegalStateException.class,
            () -> sender.offer(7, 0, frame(1, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, freed));
        assertEquals(List.of(), drain(ring, 8), "the empty slot is dropped");
        assertEquals(1, ring.badLength());
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(2, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(2L), drain(ring, 8), "the ring goes on");
    }

    @Test
    @Timeout(30)
    void aFifoPlantedInTheGroupNeitherBlocksNorCountsAsAStaleRing() throws Exception {
        final Path fifo = dir.resolve("2.ring");
        final Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertTrue(mkfifo.waitFor(10, TimeUnit.SECONDS) && mkfifo.exitValue() == 0, "mkfifo");
        assertFalse(ShmRing.stale(fifo), "opening it for reading alone would block until a writer came");
        assertNull(ShmRing.open(fifo));
    }

    @Test
    void checksTheCrcOfFramesThatCarryOne() throws IOException {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        final FrameCrc crc = new FrameCrc();
        for (long i = 0; i < 8; i++) { // one lap: every slot checks a CRC once
            final MemorySegment good = frame(i, Frame.HEADER_LENGTH);
            crc.seal(good, good.asByteBuffer(), Frame.HEADER_LENGTH, NONE);
            assertEquals(ShmRing.SENT, sender.offer(7, ShmRingDescriptor.FLAG_CRC, good, Frame.HEADER_LENGTH, NONE));
            assertEquals(List.of(i), drain(ring, 8));
        }
        final MemorySegment bad = frame(6, Frame.HEADER_LENGTH);
        crc.seal(bad, bad.asByteBuffer(), Frame.HEADER_LENGTH, NONE);
        bad.set(ValueLayout.JAVA_BYTE, 20, (byte) 1);
        assertEquals(ShmRing.SENT, sender.offer(7, ShmRingDescriptor.FLAG_CRC, bad, Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(), drain(ring, 8));
        assertEquals(1, ring.badCrc());
        assertEquals(ShmRing.SENT, sender.offer(7, 0, bad, Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(6L), drain(ring, 8), "without the flag the CRC is the link's business, not checked");
        assertEquals(0, ring.badLength());
    }

    @Test
    void drainsAtMostTheFramesAskedFor() throws IOException {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        for (long i = 0; i < 3; i++) {
            assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(i, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        }
        assertFalse(ring.isEmpty());
        assertEquals(List.of(0L, 1L), drain(ring, 2));
        assertFalse(ring.isEmpty());
        assertEquals(List.of(2L), drain(ring, 2));
        assertTrue(ring.isEmpty());
        assertEquals(List.of(), drain(ring, 0));
    }

    @Test
    void skipsAClaimThatNamesNoClaimantAfterItsTimeout() throws Exception {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        // A producer claimed ticket 0 and stopped before it could even write its pid.
        edit("1.ring", m -> m.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.TAIL_OFFSET, 1L));
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(9, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        final long start = System.nanoTime();
        final List<Long> got = new ArrayList<>();
        while (got.isEmpty()) {
            got.addAll(drain(ring, 8));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "the claim was never skipped");
            Thread.onSpinWait();
        }
        assertTrue(System.nanoTime() - start >= ShmRing.CLAIM_TIMEOUT_NS, "skipped before its timeout");
        assertEquals(List.of(9L), got);
        assertEquals(1, ring.skipped());
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(10, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(10L), drain(ring, 8), "the skipped slot is free again for its next lap");
    }

    @Test
    void aSkippedClaimWithNothingBehindItStillFreesTheHead() throws Exception {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        final long dead = finishedProcessPid();
        edit("1.ring", m -> {
            m.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.TAIL_OFFSET, 1L);
            m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.HEADER_LENGTH + ShmRingDescriptor.SLOT_CLAIMANT_OFFSET,
                (int) dead);
        });
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int taken = 0;
        while (ring.skipped() == 0) {
            taken += ring.drain((f, l, p) -> { }, 8, new FrameCrc());
            assertTrue(System.nanoTime() - deadline < 0, "the dead claim was never skipped");
            Thread.onSpinWait();
        }
        assertEquals(1, taken, "a skipped slot counts as taken");
        assertTrue(ring.isEmpty());
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(3, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(3L), drain(ring, 8), "the frame behind the skipped slot arrives");
    }

    @Test
    void aClaimWhoseClaimantRunsIsNeverSkippedAndAnEmptySlotIsNoClaim() throws Exception {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        // An empty ring (past its first ticket) watched for longer than the timeout of a claim without claimant:
        // nothing is skipped, and the next frame arrives.
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(0, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(0L), drain(ring, 8));
        final long start = System.nanoTime();
        while (System.nanoTime() - start < ShmRing.CLAIM_TIMEOUT_NS + 3 * ShmRing.CLAIM_CHECK_NS) {
            assertEquals(0, ring.drain((f, l, p) -> { }, 8, new FrameCrc()));
            Thread.onSpinWait();
        }
        assertEquals(0, ring.skipped());
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(1, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        assertEquals(List.of(1L), drain(ring, 8));
        // This process claims ticket 2 and runs on: several liveness checks later the claim still stands.
        edit("1.ring", m -> {
            m.set(ValueLayout.JAVA_LONG, ShmRingDescriptor.TAIL_OFFSET, 3L);
            m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.slotOffset(2, 7, ShmRingDescriptor.slotSize(MTU))
                + ShmRingDescriptor.SLOT_CLAIMANT_OFFSET, (int) ProcessStamp.PID);
        });
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(2, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH, NONE));
        final long watch = System.nanoTime();
        while (System.nanoTime() - watch < 5 * ShmRing.CLAIM_CHECK_NS) {
            assertEquals(0, ring.drain((f, l, p) -> { }, 8, new FrameCrc()));
            Thread.onSpinWait();
        }
        assertEquals(0, ring.skipped());
    }

    @Test
    void aFrameWakesAnOwnerAsleepOnTheRing() throws Exception {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing sender = open("1.ring");
        for (int round = 0; round < 3; round++) {
            final Thread sleeper = Thread.ofPlatform().start(() ->
                ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(600), 0));
            awaitSleeping(sleeper);
            assertEquals(ShmRing.SENT, sender.offer(7, 0, frame(round, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH,
                NONE));
            sleeper.join(TimeUnit.SECONDS.toMillis(20));
            assertFalse(sleeper.isAlive(), "a frame did not wake the owner");
            assertEquals(List.of((long) round), drain(ring, 8));
        }
    }

    @Test
    void closingWakesAnOwnerAsleepOnTheRing() throws Exception {
        final ShmRing ring = create("1.ring", 8, MTU);
        final Thread sleeper = Thread.ofPlatform().start(() -> {
            try {
                ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(600), 0);
            } catch (final IllegalStateException closed) {
                // the memory is gone when it wakes: what the link's progress thread expects
            }
        });
        awaitSleeping(sleeper);
        ring.close();
        sleeper.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(sleeper.isAlive(), "closing did not wake the owner");
    }

    /** Waits until the thread counts itself among the ring's sleepers (read from the file, as a peer would). */
    private void awaitSleeping(final Thread sleeper) throws IOException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        try (FileChannel channel = FileChannel.open(dir.resolve("1.ring"), StandardOpenOption.READ);
             Arena local = Arena.ofConfined()) {
            final MemorySegment raw = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), local);
            while (raw.get(ValueLayout.JAVA_INT, ShmRingDescriptor.WAITERS_OFFSET) == 0) {
                assertTrue(sleeper.isAlive(), "the owner stopped waiting on its own");
                assertTrue(System.nanoTime() - deadline < 0, "the owner never went to sleep");
                Thread.onSpinWait();
            }
        }
    }

    @Test
    void anEmptyRingsWaitEndsAtItsTimeoutAndAFullOnesAtOnce() throws Exception {
        final ShmRing ring = create("1.ring", 8, MTU);
        final Thread waiter = Thread.ofPlatform().start(() ->
            ring.await(Link.PROGRESS, TimeUnit.MILLISECONDS.toNanos(20), 0));
        waiter.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(waiter.isAlive(), "a 20 ms wait did not end");
        final Thread spinner = Thread.ofPlatform().start(() ->
            ring.await(Link.PROGRESS, TimeUnit.MILLISECONDS.toNanos(20),
            TimeUnit.MILLISECONDS.toNanos(5)));
        spinner.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(spinner.isAlive(), "a wait that spins first did not end");
        assertEquals(ShmRing.SENT, open("1.ring").offer(7, 0, frame(1, Frame.HEADER_LENGTH), Frame.HEADER_LENGTH,
            NONE));
        final Thread ready = Thread.ofPlatform().start(() ->
            ring.await(Link.PROGRESS, TimeUnit.SECONDS.toNanos(600), 0));
        ready.join(TimeUnit.SECONDS.toMillis(20));
        assertFalse(ready.isAlive(), "a frame waits: no sleep");
    }

    @Test
    void closingUnmapsAndOnlyTheOwnerDeletesTheFile() throws IOException {
        final ShmRing ring = create("1.ring", 8, MTU);
        final ShmRing peer = open("1.ring");
        peer.close();
        assertThrows(IllegalStateException.class, peer::isEmpty, "a closed view's memory is gone");
        assertTrue(Files.exists(dir.resolve("1.ring")), "a peer leaves the owner's file");
        assertFalse(ring.closedByOwner());
        ring.close();
        assertThrows(IllegalStateException.class, ring::isEmpty);
        assertFalse(Files.exists(dir.resolve("1.ring")));
    }
}
