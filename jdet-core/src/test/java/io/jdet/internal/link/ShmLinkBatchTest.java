package io.jdet.internal.link;

import io.jdet.Configuration;
import io.jdet.internal.wire.FrameGather;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static io.jdet.internal.link.LinkFrames.counters;
import static io.jdet.internal.link.LinkFrames.assertFrames;
import static io.jdet.internal.link.LinkFrames.send;
import static io.jdet.internal.link.LinkFrames.HEADER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared-memory link's batches, as on the fabric: the first small frame of a batch leaves at once, alone; the
 * small frames after it (and those after a post flagged MORE) leave together in one slot of the peer's ring, in
 * order; only into a ring whose owner accepts batch slots.
 */
@Timeout(30)
class ShmLinkBatchTest {
    @TempDir
    Path dir;

    private Configuration configuration(final int mtu, final int slots) {
        return new Configuration().shmDirectory(dir.toString()).shmMtu(mtu).shmRingFrames(slots);
    }

    private Link open(final String group, final int mtu, final int slots) {
        return Links.open("shm:" + group, configuration(mtu, slots));
    }

    /** Sends a frame tagged {@code tag} with {@code length} payload bytes of {@code tag}. */
    private Path ringFile(final String group, final Link link) throws Exception {
        return dir.resolve("jdet-" + Files.getAttribute(Path.of("/proc/self"), "unix:uid")).resolve(group)
            .resolve(link.address().substring(("shm:" + group + "/").length()) + ".ring");
    }

    @Test
    void aCorkedBurstArrivesInOrderInOneSlotAfterItsFirstFrameAlone() {
        try (Link a = open("burst", 1024, 8); Link b = open("burst", 1024, 8)) {
            a.cork();
            final int[] lengths = {0, 1, 2, 3, 5, 100, 300};
            for (int k = 0; k < lengths.length; k++) {
                assertTrue(send(a, b, 10 + k, lengths[k]));
            }
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(1, b.receive(got, 8), "the first frame left at once, the rest wait for the batch's end");
            assertTrue(a.mayHaveInput(), "frames wait staged");
            a.uncork();
            assertFalse(a.mayHaveInput());
            assertEquals(1, b.receive(got, 8), "one slot");
            assertFrames(got, 10, lengths);
            assertEquals(b.resolve(a.address()), got.peers.get(lengths.length - 1));
            assertEquals(1L, counters(a).get("link.tx.batches"));
            assertEquals((long) lengths.length - 1, counters(a).get("link.tx.batched_frames"));
        }
    }

    @Test
    void startsANewSlotForAnotherPeerWhenTheSlotWouldOverflowAndAfterALargeFrame() {
        try (Link a = open("parts", 4096, 8); Link b = open("parts", 4096, 8); Link c = open("parts", 4096, 8)) {
            a.cork();
            assertTrue(send(a, b, 1, 10));
            assertTrue(send(a, c, 2, 10));
            assertTrue(send(a, b, 3, 10));
            for (int k = 0; k < 4; k++) { // 3 of 80 + 1200 bytes fill a 4096-byte slot
                assertTrue(send(a, c, 4 + k, 1200));
            }
            assertTrue(send(a, b, 8, 10));
            assertTrue(send(a, b, 9, ShmLink.BATCH_MAX), "a large frame goes alone, after what is staged");
            assertTrue(send(a, b, 10, 10));
            a.uncork();
            final LinkFrames.Received atB = new LinkFrames.Received();
            assertEquals(5, b.receive(atB, 8), "alone; 3, then 8 (each parted by c's); the large one; 10");
            assertEquals(java.util.List.of(1, 3, 8, 9, 10), atB.frames.stream().map(f -> (int) f[0]).toList());
            assertEquals(HEADER + ShmLink.BATCH_MAX, atB.frames.get(3).length);
            final LinkFrames.Received atC = new LinkFrames.Received();
            assertEquals(3, c.receive(atC, 8), "c's first frame, then 3 that fit, then the fourth");
            assertEquals(5, atC.frames.size());
            for (int k = 0; k < 5; k++) {
                assertEquals(2 + (k == 0 ? 0 : k + 1), atC.frames.get(k)[0], "c's frame " + k + " in order");
            }
        }
    }

    @Test
    void sendsAtOnceOutsideABatchAndTheFirstOfEachBatchAlone() {
        try (Link a = open("alone", 1024, 8); Link b = open("alone", 1024, 8)) {
            final LinkFrames.Received got = new LinkFrames.Received();
            assertTrue(send(a, b, 1, 8));
            assertEquals(1, b.receive(got, 8), "outside a batch");
            for (int k = 2; k < 5; k++) { // a ping-pong: one frame per batch
                a.cork();
                assertTrue(send(a, b, k, 8));
                assertEquals(1, b.receive(got, 8), "alone, at once, before the batch ends");
                a.uncork();
            }
            assertFrames(got, 1, 8, 8, 8, 8);
            assertEquals(0L, counters(a).get("link.tx.batches"));
        }
    }

    @Test
    void holdsThePostsAfterOneFlaggedMoreAcrossFlushesUntilABatchEndsWithoutIt() {
        try (Link a = open("more", 1024, 8); Link b = open("more", 1024, 8)) {
            for (int k = 1; k <= 3; k++) { // a burst of posts flagged MORE, one frame each
                a.cork();
                assertTrue(send(a, b, k, 8));
                a.uncorkHolding();
                a.flush();
            }
            assertTrue(a.mayHaveInput(), "a poll must run the pass that sends what MORE held");
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(1, b.receive(got, 8), "the burst's first went at once; a flush leaves the held ones");
            a.cork();
            assertTrue(send(a, b, 4, 8)); // the burst's last post
            a.uncork();
            assertEquals(1, b.receive(got, 8), "the rest in one slot");
            assertFrames(got, 1, 8, 8, 8, 8);
            a.cork();
            assertTrue(send(a, b, 5, 8));
            assertEquals(1, b.receive(got, 8), "after a batch without MORE, a lone frame goes at once again");
            a.uncork();
            assertEquals(1L, counters(a).get("link.tx.batches"));
            assertEquals(3L, counters(a).get("link.tx.batched_frames"));
        }
    }

    /** A peer of an older build: its ring file's feature word is 0 (unused space then), so it gets single frames. */
    @Test
    void aPeerRingWithoutTheFeatureBitGetsSingleFrames() throws Exception {
        try (Link a = open("old", 1024, 8); Link b = open("old", 1024, 8)) {
            try (FileChannel channel = FileChannel.open(ringFile("old", b), StandardOpenOption.READ,
                StandardOpenOption.WRITE); Arena map = Arena.ofConfined()) {
                channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), map)
                    .set(ValueLayout.JAVA_INT, ShmRingDescriptor.FEATURES_OFFSET, 0);
            }
            a.cork();
            for (int k = 0; k < 5; k++) {
                assertTrue(send(a, b, 1 + k, 8));
            }
            a.uncorkHolding();
            assertFalse(a.mayHaveInput(), "nothing staged");
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(5, b.receive(got, 8), "a slot each");
            assertFrames(got, 1, 8, 8, 8, 8, 8);
            assertEquals(0L, counters(a).get("link.tx.batches"));
            assertEquals(0L, counters(b).get("link.rx.bad_length"));
        }
    }

    @Test
    void keepsABatchStagedWhileThePeersRingIsFullAndSendsItOnceThereIsRoom() {
        try (Link a = open("full", 1024, 8); Link b = open("full", 1024, 8)) {
            for (int k = 0; k < 7; k++) {
                assertTrue(send(a, b, 1, 8), "slot " + k);
            }
            a.cork();
            assertTrue(send(a, b, 9, 8), "the last slot");
            assertTrue(send(a, b, 2, 8), "staging needs no room in the ring");
            assertTrue(send(a, b, 3, 8));
            a.uncork();
            assertTrue(a.mayHaveInput(), "staged frames wait for a pass");
            assertFalse(send(a, b, 4, 8), "outside a batch: what is staged leaves first, and the ring is full");
            a.cork();
            assertTrue(send(a, b, 5, 8), "in a batch, staged behind them: the staging has room");
            a.uncork();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(8, b.receive(got, 8));
            a.flush();
            assertEquals(1, b.receive(got, 8), "the staged batch, once there was room");
            assertEquals(11, got.frames.size(), "the refused frame is not among them");
            assertEquals(9, got.frames.get(7)[0]);
            assertEquals(2, got.frames.get(8)[0]);
            assertEquals(3, got.frames.get(9)[0]);
            assertEquals(5, got.frames.get(10)[0]);
            assertTrue(counters(a).get("link.tx.ring_full") > 0);
        }
    }

    @Test
    void aPeerThatTakesNothingHoldsUpNoOtherPeer() {
        try (Link a = open("stuck", 4096, 8); Link stuck = open("stuck", 4096, 8); Link c = open("stuck", 4096, 8)) {
            for (int k = 0; k < 7; k++) {
                assertTrue(send(a, stuck, 1, 8), "slot " + k);
            }
            a.cork();
            assertTrue(send(a, stuck, 9, 8), "the last slot");
            assertTrue(send(a, stuck, 2, 8), "staged for the full ring");
            assertTrue(send(a, c, 3, 8), "another peer's frame goes alone");
            assertTrue(send(a, c, 4, 8));
            a.uncork();
            assertTrue(send(a, c, 5, ShmLink.BATCH_MAX), "outside a batch too");
            final LinkFrames.Received atC = new LinkFrames.Received();
            assertEquals(3, c.receive(atC, 8));
            assertFrames(atC, 3, 8, 8, ShmLink.BATCH_MAX);
            final LinkFrames.Received atStuck = new LinkFrames.Received();
            assertEquals(8, stuck.receive(atStuck, 8));
            a.flush();
            assertEquals(1, stuck.receive(atStuck, 8), "the staged frame once there was room");
            assertEquals(2, atStuck.frames.get(8)[0]);
        }
    }

    @Test
    void countsStagedFramesForAPeerThatClosedAsSentToNobody() {
        try (Link a = open("gone", 1024, 8)) {
            final Link b = open("gone", 1024, 8);
            a.cork();
            assertTrue(send(a, b, 1, 8), "at once");
            assertTrue(send(a, b, 2, 8), "staged");
            assertTrue(send(a, b, 3, 8), "staged");
            b.close();
            a.uncork();
            assertEquals(2L, counters(a).get("link.tx.peer_gone"));
            assertFalse(a.mayHaveInput());
        }
    }

    @Test
    void aFrameWhoseMemoryClosedThrowsAsAloneAndStagesNothing() {
        try (Link a = open("freed", 1024, 8); Link b = open("freed", 1024, 8)) {
            final FrameGather gone = new FrameGather(1);
            final MemorySegment header;
            try (Arena arena = Arena.ofShared()) {
                final MemorySegment memory = arena.allocate(100);
                gone.add(memory, memory.asByteBuffer(), 0, 100);
                header = LinkFrames.header(9, gone);
            }
            a.cork();
            assertTrue(send(a, b, 1, 8));
            assertThrows(IllegalStateException.class, () -> a.send(a.resolve(b.address()), header, HEADER, gone),
                "as the single-frame path does");
            assertTrue(send(a, b, 2, 8));
            a.uncork();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(2, b.receive(got, 8), "the first at once, the third staged");
            assertFrames(got, 1, 8, 8);
        }
    }

    @Test
    void checksEachSealedFrameOfABatchOnItsOwn() {
        final Configuration corrupting = configuration(1024, 8).faults(new io.jdet.FaultPlan(0, 0, 0, 0.5, 1));
        // The links themselves, without the fault injector Links.open puts in front: it would corrupt frames too.
        try (Link a = new ShmLink("sealed", corrupting); Link b = new ShmLink("sealed", corrupting)) {
            assertTrue(a.checksummed(1));
            final FrameGather payload = LinkFrames.payload(16, 2);
            final MemorySegment bad = LinkFrames.header(2, payload);
            bad.set(ValueLayout.JAVA_BYTE, 40, (byte) (bad.get(ValueLayout.JAVA_BYTE, 40) ^ 1));
            a.cork();
            assertTrue(send(a, b, 1, 16));
            assertTrue(send(a, b, 1, 16));
            assertTrue(a.send(a.resolve(b.address()), bad, HEADER, payload));
            assertTrue(send(a, b, 3, 16));
            a.uncork();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(2, b.receive(got, 8));
            assertEquals(3, got.frames.size(), "the corrupted frame alone is dropped");
            assertEquals(3, got.frames.get(2)[0]);
            assertEquals(1L, counters(b).get("link.rx.bad_crc"));
            assertEquals(1L, counters(a).get("link.tx.batches"));
        }
    }

    @Test
    void carriesWhatTheStagingHeldWhenTheSenderCloses() {
        try (Link b = open("close", 1024, 8)) {
            final Link a = open("close", 1024, 8);
            a.cork();
            assertTrue(send(a, b, 1, 8), "at once");
            assertTrue(send(a, b, 2, 8), "staged");
            assertTrue(send(a, b, 3, 8), "staged");
            a.uncorkHolding();
            a.close();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(2, b.receive(got, 8));
            assertFrames(got, 1, 8, 8, 8);
            assertEquals(0L, counters(a).get("link.tx.errors"));
        }
    }

    /** What close cannot publish (the peer's ring is full) is dropped and counted, not sent by a later flush. */
    @Test
    void dropsWhatTheStagingHeldWhenTheSenderClosesOnAFullRing() {
        try (Link b = open("closefull", 1024, 2); Link c = open("closefull", 1024, 2)) {
            final Link a = open("closefull", 1024, 2);
            a.cork();
            assertTrue(send(a, b, 1, 8), "at once");
            assertTrue(send(a, b, 2, 8), "staged");
            assertTrue(send(a, b, 3, 8), "staged");
            assertTrue(send(c, b, 9, 8), "the ring's last slot");
            a.uncork();
            a.close();
            final LinkFrames.Received got = new LinkFrames.Received();
            assertEquals(2, b.receive(got, 8));
            a.flush(); // as LinkLock.unlock does right after NicImpl's shutdown closed the link
            a.cork();
            a.uncork();
            assertEquals(0, b.receive(got, 8), "nothing leaves a closed link");
            assertEquals(2L, counters(a).get("link.tx.errors"), "the staged frames were lost, and counted");
        }
    }

    @Test
    void aPushInsideABatchPublishesWhatIsStagedAndWhatFollowsIsStagedAgain() {
        try (Link a = open("push", 1024, 8); Link b = open("push", 1024, 8)) {
            LinkFrames.assertPushInsideABatch(a, b);
        }
    }
}
