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
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Batch slots of the shared-memory ring: the feature word that lets senders use them, their layout, and an owner
 * that takes every batch slot as a hostile process may have written it: checked before it is read, never read
 * outside its slot, the frames before a bad record delivered.
 */
class ShmRingBatchTest {
    private static final int MTU = 512;
    private static final int H = Frame.HEADER_LENGTH;

    @TempDir
    Path dir;

    private final List<ShmRing> rings = new ArrayList<>();

    @AfterEach
    void close() {
        rings.forEach(ShmRing::close);
    }

    private ShmRing create() throws IOException {
        final ShmRing ring = ShmRing.create(dir.resolve("1.ring"), 1, 8, MTU);
        rings.add(ring);
        return ring;
    }

    private ShmRing open() {
        final ShmRing ring = ShmRing.open(dir.resolve("1.ring"));
        rings.add(ring);
        return ring;
    }

    /** Changes the ring file as another process could. */
    private void edit(final Consumer<MemorySegment> change) throws IOException {
        try (FileChannel channel = FileChannel.open(dir.resolve("1.ring"), StandardOpenOption.READ,
            StandardOpenOption.WRITE); Arena local = Arena.ofConfined()) {
            change.accept(channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), local));
        }
    }

    private static long slot(final long ticket) {
        return ShmRingDescriptor.slotOffset(ticket, 7, ShmRingDescriptor.slotSize(MTU));
    }

    /** A batch as ShmLink stages it: frames of the lengths given, each starting with its marker (a long). */
    private static final class Batch {
        final ByteBuffer view = ByteBuffer.allocateDirect(MTU);
        final MemorySegment records = MemorySegment.ofBuffer(view);
        final List<Integer> at = new ArrayList<>();
        int first;
        int end;

        Batch(final boolean sealed, final int... lengths) {
            final FrameCrc crc = new FrameCrc();
            for (int k = 0; k < lengths.length; k++) {
                if (k > 0) {
                    end = Staging.recordAlign(end);
                    records.set(ValueLayout.JAVA_INT, end, lengths[k]);
                    end += Staging.RECORD_PREFIX;
                }
                at.add(end);
                final MemorySegment frame = records.asSlice(end, lengths[k]);
                frame.fill((byte) k);
                frame.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 100 + k);
                if (sealed) {
                    crc.seal(frame, frame.asByteBuffer(), lengths[k], new FrameGather(0));
                }
                end += lengths[k];
            }
            first = lengths[0];
        }
    }

    /** What the owner handed over: each frame's marker and length, and that it began at offset 0 of its segment. */
    private static final class Got implements FrameHandler {
        final List<Long> markers = new ArrayList<>();
        final List<Integer> lengths = new ArrayList<>();
        final List<Long> peers = new ArrayList<>();

        @Override
        public void onFrame(final MemorySegment frame, final int length, final long peer) {
            assertTrue(length <= frame.byteSize(), "the frame lies within what was handed over");
            markers.add(frame.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            lengths.add(length);
            peers.add(peer);
        }
    }

    private static Got drain(final ShmRing ring) {
        final Got got = new Got();
        ring.drain(got, 8, new FrameCrc());
        return got;
    }

    @Test
    void theOwnerSaysItAcceptsBatchesAndAFileWithoutTheBitGetsNone() throws IOException {
        final ShmRing ring = create();
        assertTrue(ring.acceptsBatches());
        assertTrue(open().acceptsBatches());
        edit(m -> assertEquals(ShmRingDescriptor.FEATURE_BATCHES,
            m.get(ValueLayout.JAVA_INT, ShmRingDescriptor.FEATURES_OFFSET)));
        edit(m -> m.set(ValueLayout.JAVA_INT, ShmRingDescriptor.FEATURES_OFFSET, 0)); // an older build's file
        final ShmRing old = open();
        assertTrue(old != null, "the version is unchanged: the file still opens");
        assertFalse(old.acceptsBatches());
    }

    @Test
    void aBatchArrivesInOrderInOneSlotEachFrameFromOffsetZero() throws IOException {
        final ShmRing ring = create();
        final ShmRing sender = open();
        final Batch b = new Batch(false, H, H + 1, H + 2, H + 3, H + 5);
        assertEquals(ShmRing.SENT, sender.offerBatch(7, 0, b.records, b.first, b.end));
        edit(m -> {
            assertEquals(b.end, m.get(ValueLayout.JAVA_INT, slot(0) + ShmRingDescriptor.SLOT_LENGTH_OFFSET));
            assertEquals(b.first, m.get(ValueLayout.JAVA_INT, slot(0) + ShmRingDescriptor.SLOT_FIRST_LENGTH_OFFSET));
            assertEquals(ShmRingDescriptor.FLAG_BATCH,
                m.get(ValueLayout.JAVA_INT, slot(0) + ShmRingDescriptor.SLOT_FLAGS_OFFSET));
        });
        final Got got = new Got();
        assertEquals(1, ring.drain(got, 8, new FrameCrc()), "one slot");
        assertEquals(List.of(100L, 101L, 102L, 103L, 104L), got.markers);
        assertEquals(List.of(H, H + 1, H + 2, H + 3, H + 5), got.lengths);
        assertEquals(List.of(7L, 7L, 7L, 7L, 7L), got.peers);
        assertEquals(0, ring.badLength());
    }

    @Test
    void aBatchOfOneFrameIsAPlainSlot() throws IOException {
        final ShmRing ring = create();
        final ShmRing sender = open();
        final Batch b = new Batch(false, H + 8);
        assertEquals(ShmRing.SENT, sender.offerBatch(7, 0, b.records, b.first, b.end));
        edit(m -> assertEquals(0, m.get(ValueLayout.JAVA_INT, slot(0) + ShmRingDescriptor.SLOT_FLAGS_OFFSET)));
        assertEquals(List.of(100L), drain(ring).markers);
    }

    @Test
    void refusesABatchLargerThanASlotOrWhoseFirstFrameLiesOutside() throws IOException {
        final ShmRing ring = create();
        final ShmRing sender = open();
        final MemorySegment records = MemorySegment.ofBuffer(ByteBuffer.allocateDirect(1024));
        assertThrows(IllegalArgumentException.class, () -> sender.offerBatch(7, 0, records, 100, MTU + 1));
        assertThrows(IllegalArgumentException.class, () -> sender.offerBatch(7, 0, records, 0, 100));
        assertThrows(IllegalArgumentException.class, () -> sender.offerBatch(7, 0, records, 200, 100));
        assertTrue(ring.isEmpty(), "nothing claimed");
    }

    @Test
    void checksEachSealedFrameOfABatchOnItsOwn() throws IOException {
        final ShmRing ring = create();
        final ShmRing sender = open();
        final Batch b = new Batch(true, H + 10, H + 11, H + 12, H + 13);
        b.records.set(ValueLayout.JAVA_BYTE, b.at.get(1) + H + 3, (byte) 0x7F); // the second frame
        b.records.set(ValueLayout.JAVA_BYTE, b.at.get(0) + H + 3, (byte) 0x7F); // and the first
        assertEquals(ShmRing.SENT, sender.offerBatch(7, ShmRingDescriptor.FLAG_CRC, b.records, b.first, b.end));
        final Got got = drain(ring);
        assertEquals(List.of(102L, 103L), got.markers, "the corrupted frames alone are dropped");
        assertEquals(2, ring.badCrc());
        assertEquals(0, ring.badLength());
    }

    /** A slot's frames, then a hostile change to one of its words: what the owner delivers and counts. */
    private void hostile(final long ticket, final Consumer<MemorySegment> change, final List<Long> delivered,
                         final long badLength) throws IOException {
        final ShmRing ring = create();
        final ShmRing sender = open();
        final Batch filler = new Batch(false, H);
        for (long t = 0; t < ticket; t++) { // moves the ring on to the slot wanted
            assertEquals(ShmRing.SENT, sender.offerBatch(7, 0, filler.records, filler.first, filler.end));
            assertEquals(List.of(100L), drain(ring).markers);
        }
        final Batch b = new Batch(false, H + 4, H + 20, H + 3, H + 8); // STANDARD's
        assertEquals(ShmRing.SENT, sender.offerBatch(7, 0, b.records, b.first, b.end));
        final long s = slot(ticket);
        edit(m -> change.accept(m.asSlice(s, ShmRingDescriptor.slotSize(MTU))));
        assertEquals(delivered, drain(ring).markers);
        assertEquals(badLength, ring.badLength());
        assertEquals(ShmRing.SENT, sender.offerBatch(7, 0, filler.records, filler.first, filler.end));
        assertEquals(List.of(100L), drain(ring).markers, "the ring goes on");
        rings.forEach(ShmRing::close);
        rings.clear();
        java.nio.file.Files.deleteIfExists(dir.resolve("1.ring")); // the owner deleted it as it closed
    }

    /** The batch every hostile case starts from: records at 88, 192 and 280, ending at 368. */
    private static final Batch STANDARD = new Batch(false, H + 4, H + 20, H + 3, H + 8);

    /** Sets the length of record k (1 = the second frame) of the standard hostile batch. */
    private static Consumer<MemorySegment> record(final int k, final int length) {
        final long prefix = ShmRingDescriptor.SLOT_FRAME_OFFSET + STANDARD.at.get(k) - Staging.RECORD_PREFIX;
        return slot -> slot.set(ValueLayout.JAVA_INT, prefix, length);
    }

    private static Consumer<MemorySegment> word(final int offset, final int value) {
        return slot -> slot.set(ValueLayout.JAVA_INT, offset, value);
    }

    @Test
    void countsAndDropsTheRestOfASlotAtARecordThatCannotBeOneAndDeliversWhatCameBefore() throws IOException {
        final List<Long> upToSecond = List.of(100L);
        final List<Long> upToThird = List.of(100L, 101L);
        for (final long ticket : new long[] {0, 7}) { // slot 7 ends the file: a read past it would throw
            hostile(ticket, record(1, 0), upToSecond, 1);
            hostile(ticket, record(1, -1), upToSecond, 1);
            hostile(ticket, record(1, Integer.MIN_VALUE), upToSecond, 1);
            hostile(ticket, record(1, H - 1), upToSecond, 1);
            hostile(ticket, record(2, STANDARD.end - STANDARD.at.get(2) + 1), upToThird, 1); // one past the end
            hostile(ticket, record(2, MTU + 1), upToThird, 1);
            hostile(ticket, record(2, Integer.MAX_VALUE), upToThird, 1);
            hostile(ticket, record(3, H + 8 + 1), List.of(100L, 101L, 102L), 1); // the last, one byte too long
            // Cut short: the rest of the last frame is read as a record length, which does not fit.
            hostile(ticket, record(3, H), List.of(100L, 101L, 102L, 103L), 1);
        }
    }

    @Test
    void dropsAWholeSlotWhoseTotalOrFirstFrameCannotBe() throws IOException {
        final int length = ShmRingDescriptor.SLOT_LENGTH_OFFSET;
        final int first = ShmRingDescriptor.SLOT_FIRST_LENGTH_OFFSET;
        for (final long ticket : new long[] {0, 7}) {
            hostile(ticket, word(length, MTU + 1), List.of(), 1);
            hostile(ticket, word(length, Integer.MAX_VALUE), List.of(), 1);
            hostile(ticket, word(length, -8), List.of(), 1);
            hostile(ticket, word(first, 0), List.of(), 1);
            hostile(ticket, word(first, H - 1), List.of(), 1);
            hostile(ticket, word(first, MTU), List.of(), 1); // past the slot's total
            hostile(ticket, word(first, -1), List.of(), 1);
        }
    }

    @Test
    void aTotalMadeLargerThanTheRecordsReadsNoFurtherThanTheSlot() throws IOException {
        // The total says the whole MTU, the records end before it: what follows the last record is read as one more
        // record length (zero in a fresh slot), which is bad: counted, and the four frames still delivered.
        hostile(7, word(ShmRingDescriptor.SLOT_LENGTH_OFFSET, MTU), List.of(100L, 101L, 102L, 103L), 1);
        // A total made shorter cuts a record short: its length no longer fits, the frames before it are delivered.
        hostile(7, word(ShmRingDescriptor.SLOT_LENGTH_OFFSET, STANDARD.end - 1), List.of(100L, 101L, 102L), 1);
        // Up to 3 bytes after the last record: no room for a record's length.
        hostile(7, word(ShmRingDescriptor.SLOT_LENGTH_OFFSET, STANDARD.end + 3), List.of(100L, 101L, 102L, 103L), 1);
    }

    @Test
    void aBatchFlagFromAProcessThatNeverLaidOutRecordsIsChecked() throws IOException {
        // A plain slot whose flags a hostile process sets to "batch", with a first length left from an earlier lap.
        final ShmRing ring = create();
        final ShmRing sender = open();
        final MemorySegment frame = MemorySegment.ofBuffer(ByteBuffer.allocateDirect(H + 40));
        frame.set(ValueLayout.JAVA_LONG, 0, 55);
        assertEquals(ShmRing.SENT, sender.offer(7, 0, frame, H + 40, new FrameGather(0)));
        edit(m -> {
            m.set(ValueLayout.JAVA_INT, slot(0) + ShmRingDescriptor.SLOT_FLAGS_OFFSET, ShmRingDescriptor.FLAG_BATCH);
            m.set(ValueLayout.JAVA_INT, slot(0) + ShmRingDescriptor.SLOT_FIRST_LENGTH_OFFSET, H);
        });
        assertEquals(List.of(55L), drain(ring).markers, "the first frame; the rest is no record");
        assertEquals(1, ring.badLength());
    }
}
