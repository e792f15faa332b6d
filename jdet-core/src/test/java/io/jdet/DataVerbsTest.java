package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertSameBytes;
import static io.jdet.testing.Tests.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** Every data verb between two NICs on the in-process fabric, the data checked byte for byte. */
@Timeout(60)
class DataVerbsTest {
    private static final int MB = 1 << 20;
    private static final ValueLayout.OfLong LE_LONG =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @AutoClose
    Loopback pair; // package-private: ShmDataVerbsTest runs these tests over another link

    @BeforeEach
    void open() {
        pair = Loopback.open(new Loopback.Options().bufferBytes(8L * MB).sges(4));
    }

    @Test
    void shouldDeliverZeroLengthSendWhenNoSegmentsAreGiven() {
        pair.bufB.set(ValueLayout.JAVA_LONG, 0, 0x5a5a5a5aL);
        pair.qpB.recv(1, sge(pair.mrB, 0, 64), 1);
        pair.qpA.send(2, new DataSegment[0], 0, 0, 0);
        final WorkCompletion atB = Tests.pollOne(pair.cqB);
        assertEquals(WcStatus.SUCCESS, atB.status());
        assertEquals(WcType.RECV, atB.type());
        assertEquals(0, atB.length());
        assertEquals(0, atB.flags());
        assertSame(pair.qpB, atB.queuePair());
        assertEquals(0x5a5a5a5aL, pair.bufB.get(ValueLayout.JAVA_LONG, 0), "nothing written");
        final WorkCompletion atA = Tests.pollOne(pair.cqA);
        assertEquals(WcStatus.SUCCESS, atA.status());
        assertEquals(WcType.SEND, atA.type());
        assertEquals(2, atA.id());
        assertEquals(0, atA.length(), "a send completes with length 0");
    }

    @Test
    void shouldCarryImmediateAndSolicitedWhenFlagged() {
        fill(pair.bufA.asSlice(0, 100), 1);
        pair.qpB.recv(1, sge(pair.mrB, 0, 100), 1);
        pair.qpB.recv(2, sge(pair.mrB, 100, 100), 1);
        pair.qpA.send(3, sge(pair.mrA, 0, 100), 1, WrFlags.IMMEDIATE | WrFlags.SOLICITED, 0xCAFEBABE);
        pair.qpA.send(4, new DataSegment[0], 0, WrFlags.IMMEDIATE, -7);
        final List<WorkCompletion> atB = Tests.expectSuccess(pair.cqB, 2);
        assertEquals(1, atB.get(0).id());
        assertEquals(100, atB.get(0).length());
        assertEquals(WcFlags.IMMEDIATE | WcFlags.SOLICITED, atB.get(0).flags());
        assertEquals(0xCAFEBABE, atB.get(0).immediate());
        assertEquals(2, atB.get(1).id());
        assertEquals(0, atB.get(1).length());
        assertEquals(WcFlags.IMMEDIATE, atB.get(1).flags());
        assertEquals(-7, atB.get(1).immediate());
        assertSameBytes(pair.bufA.asSlice(0, 100), pair.bufB.asSlice(0, 100));
        final List<WorkCompletion> atA = Tests.expectSuccess(pair.cqA, 2);
        assertEquals(3, atA.get(0).id());
        assertEquals(0, atA.get(0).length());
    }

    @Test
    void shouldReassembleMessageWhenLongerThanOneFrame() {
        final int length = 5 * MB + 12_345; // about 80 frames: more than the window
        fill(pair.bufA.asSlice(0, length), 2);
        pair.qpB.recv(1, sge(pair.mrB, 7, length + 100), 1);
        pair.qpA.send(2, sge(pair.mrA, 0, length), 1, WrFlags.IMMEDIATE, 5);
        final WorkCompletion atB = Tests.pollOne(pair.cqB);
        assertEquals(WcStatus.SUCCESS, atB.status());
        assertEquals(length, atB.length());
        assertEquals(5, atB.immediate());
        assertSameBytes(pair.bufA.asSlice(0, length), pair.bufB.asSlice(7, length));
        assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
    }

    @Test
    void shouldGatherAndScatterWhenSendHasSeveralSegments() {
        final MemorySegment otherA = pair.arena.allocate(100_000);
        final MemoryRegion otherRegionA = pair.pdA.regMr(otherA, Access.LOCAL_READ);
        fill(pair.bufA.asSlice(0, 70_000), 3);
        fill(otherA, 4);
        final DataSegment[] gather = {
            new DataSegment().set(pair.mrA, 0, 70_000),
            new DataSegment().set(otherRegionA, 0, 1),
            new DataSegment().set(pair.mrA, 0, 0),
            new DataSegment().set(otherRegionA, 1, 99_999)};
        final int total = 170_000;
        final DataSegment[] scatter = {
            new DataSegment().set(pair.mrB, 1_000_000, 64_999),
            new DataSegment().set(pair.mrB, 3, 2),
            new DataSegment().set(pair.mrB, 2_000_000, 200_000)};
        pair.qpB.recv(1, scatter, 3);
        pair.qpA.send(2, gather, 4, 0, 0);
        final WorkCompletion atB = Tests.pollOne(pair.cqB);
        assertEquals(WcStatus.SUCCESS, atB.status());
        assertEquals(total, atB.length());
        final MemorySegment expected = pair.arena.allocate(total);
        MemorySegment.copy(pair.bufA, 0, expected, 0, 70_000);
        MemorySegment.copy(otherA, 0, expected, 70_000, 100_000);
        final MemorySegment received = pair.arena.allocate(total);
        MemorySegment.copy(pair.bufB, 1_000_000, received, 0, 64_999);
        MemorySegment.copy(pair.bufB, 3, received, 64_999, 2);
        MemorySegment.copy(pair.bufB, 2_000_000, received, 65_001, total - 65_001);
        assertSameBytes(expected, received);
        assertEquals(WcStatus.SUCCESS, Tests.pollOne(pair.cqA).status());
    }

    @Test
    void shouldConsumeReceivesInPostOrderWhenSeveralMessagesArrive() {
        for (int i = 0; i < 20; i++) {
            pair.qpB.recv(100 + i, sge(pair.mrB, 64L * i, 64), 1);
        }
        for (int i = 0; i < 20; i++) {
            pair.bufA.set(ValueLayout.JAVA_INT, 4L * i, i * 7);
            pair.qpA.send(i, sge(pair.mrA, 4L * i, 4), 1, i % 2 == 0 ? WrFlags.SUPPRESSED : 0, 0);
        }
        final List<WorkCompletion> atB = Tests.expectSuccess(pair.cqB, 20);
        for (int i = 0; i < 20; i++) {
            assertEquals(100 + i, atB.get(i).id());
            assertEquals(4, atB.get(i).length());
            assertEquals(i * 7, pair.bufB.get(ValueLayout.JAVA_INT, 64L * i));
        }
        final List<WorkCompletion> atA = Tests.expectSuccess(pair.cqA, 10);
        for (int i = 0; i < 10; i++) {
            assertEquals(2L * i + 1, atA.get(i).id(), "only the signaled sends complete");
            assertEquals(2, atA.get(i).reapCount(), "each frees the suppressed send before it");
        }
        Tests.assertNoCompletion(pair.cqA, 5);
    }

    @Test
    void shouldPlaceBytesWhenWritten() {
        final int length = 6 * MB + 3;
        fill(pair.bufA.asSlice(0, length), 5);
        final DataSegment[] gather = {new DataSegment().set(pair.mrA, 0, 1_000_000),
            new DataSegment().set(pair.mrA, 1_000_000, length - 1_000_000)};
        pair.qpA.write(1, gather, 2, pair.mrB.address() + 11, pair.mrB.rKey(), 0, 0);
        final WorkCompletion wc = Tests.pollOne(pair.cqA);
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(WcType.RDMA_WRITE, wc.type());
        assertEquals(0, wc.length(), "a write completes with length 0");
        assertSameBytes(pair.bufA.asSlice(0, length), pair.bufB.asSlice(11, length));
        Tests.assertNoCompletion(pair.cqB, 5); // a write without immediate makes no completion at the target
    }

    @Test
    void shouldConsumeReceiveWhenWrittenWithImmediate() {
        final int length = 150_000;
        fill(pair.bufA.asSlice(0, length), 6);
        pair.bufB.set(ValueLayout.JAVA_LONG, 0, 1234);
        pair.qpB.recv(1, sge(pair.mrB, 0, 8), 1);
        pair.qpB.recv(2, sge(pair.mrB, 8, 8), 1);
        pair.qpA.write(3, sge(pair.mrA, 0, length), 1, pair.mrB.address() + 4096, pair.mrB.rKey(),
            WrFlags.IMMEDIATE | WrFlags.SOLICITED, 99);
        pair.qpA.write(4, new DataSegment[0], 0, pair.mrB.address(), pair.mrB.rKey(), WrFlags.IMMEDIATE, 100);
        final List<WorkCompletion> atB = Tests.expectSuccess(pair.cqB, 2);
        assertEquals(1, atB.get(0).id());
        assertEquals(WcType.RECV, atB.get(0).type());
        assertEquals(length, atB.get(0).length(), "the byte count written");
        assertEquals(99, atB.get(0).immediate());
        assertEquals(WcFlags.IMMEDIATE | WcFlags.SOLICITED, atB.get(0).flags());
        assertEquals(2, atB.get(1).id());
        assertEquals(0, atB.get(1).length());
        assertEquals(100, atB.get(1).immediate());
        assertEquals(1234, pair.bufB.get(ValueLayout.JAVA_LONG, 0), "the receive buffer is not written");
        assertSameBytes(pair.bufA.asSlice(0, length), pair.bufB.asSlice(4096, length));
        final List<WorkCompletion> atA = Tests.expectSuccess(pair.cqA, 2);
        assertEquals(WcType.RDMA_WRITE, atA.get(0).type());
        assertEquals(0, atA.get(0).length());
    }

    @Test
    void shouldFetchBytesWhenRead() {
        final int length = 6 * MB + 5;
        fill(pair.bufB.asSlice(0, length), 7);
        final DataSegment[] scatter = {new DataSegment().set(pair.mrA, 100, 65_000),
            new DataSegment().set(pair.mrA, 100 + 65_000 + 17, length - 65_000)};
        pair.qpA.read(1, scatter, 2, pair.mrB.address(), pair.mrB.rKey(), 0);
        final WorkCompletion wc = Tests.pollOne(pair.cqA);
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(WcType.RDMA_READ, wc.type());
        assertEquals(length, wc.length(), "a read completes with the bytes read");
        assertSameBytes(pair.bufB.asSlice(0, 65_000), pair.bufA.asSlice(100, 65_000));
        assertSameBytes(pair.bufB.asSlice(65_000, length - 65_000), pair.bufA.asSlice(100 + 65_017,
            length - 65_000));
    }

    @Test
    void shouldReturnOriginalWhenComparingAndSwapping() {
        final long remote = pair.mrB.address() + 64;
        pair.bufB.set(LE_LONG, 64, 10);
        final DataSegment result = new DataSegment().set(pair.mrA, 8, 8);
        pair.qpA.compExch(1, 10, 20, result, remote, pair.mrB.rKey(), 0);
        WorkCompletion wc = Tests.pollOne(pair.cqA);
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(WcType.COMP_EXCH, wc.type());
        assertEquals(8, wc.length());
        assertEquals(10, pair.bufA.get(LE_LONG, 8));
        assertEquals(20, pair.bufB.get(LE_LONG, 64), "swapped");
        pair.qpA.compExch(2, 10, 30, result, remote, pair.mrB.rKey(), 0);
        wc = Tests.pollOne(pair.cqA);
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(20, pair.bufA.get(LE_LONG, 8), "the original, which did not match");
        assertEquals(20, pair.bufB.get(LE_LONG, 64), "not swapped");
    }

    @Test
    void shouldReturnOriginalWhenFetchingAndAdding() {
        final long remote = pair.mrB.address() + 128;
        pair.bufB.set(LE_LONG, 128, Long.MAX_VALUE);
        final DataSegment result = new DataSegment().set(pair.mrA, 16, 8);
        pair.qpA.fetchAdd(1, 1, result, remote, pair.mrB.rKey(), 0);
        WorkCompletion wc = Tests.pollOne(pair.cqA);
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(WcType.FETCH_ADD, wc.type());
        assertEquals(8, wc.length());
        assertEquals(Long.MAX_VALUE, pair.bufA.get(LE_LONG, 16));
        assertEquals(Long.MIN_VALUE, pair.bufB.get(LE_LONG, 128), "wraps like a 64-bit add");
        pair.qpA.fetchAdd(2, -5, result, remote, pair.mrB.rKey(), 0);
        Tests.expectSuccess(pair.cqA, 1);
        assertEquals(Long.MIN_VALUE, pair.bufA.get(LE_LONG, 16));
        assertEquals(Long.MIN_VALUE - 5, pair.bufB.get(LE_LONG, 128));
    }

    @Test
    void shouldWaitForEarlierReadWhenFenced() {
        final int length = 3 * MB;
        for (int round = 0; round < 5; round++) {
            fill(pair.bufB.asSlice(0, length), 100 + round);
            // read B[0, n) into A, then write that A range back to B[4 MB, ...): only a fence makes the write carry
            // the bytes the read brought.
            pair.qpA.read(1, sge(pair.mrA, 0, length), 1, pair.mrB.address(), pair.mrB.rKey(), WrFlags.SUPPRESSED);
            pair.qpA.write(2, sge(pair.mrA, 0, length), 1, pair.mrB.address() + 4 * MB, pair.mrB.rKey(),
                WrFlags.FENCED, 0);
            final WorkCompletion wc = Tests.pollOne(pair.cqA);
            assertEquals(2, wc.id());
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(2, wc.reapCount());
            assertSameBytes(pair.bufB.asSlice(0, length), pair.bufB.asSlice(4 * MB, length));
        }
    }

    @Test
    void shouldCarryEveryVerbWhenFramesAreSmall() {
        try (Loopback small = Loopback.open(new Loopback.Options().configuration(new Configuration().loopMtu(576))
            .bufferBytes(2L * MB))) {
            assertEquals(576, small.qpA.query().mtu());
            final int length = 300_001; // hundreds of frames: many windows' worth
            fill(small.bufA.asSlice(0, length), 21);
            fill(small.bufB.asSlice(MB, length), 22);
            small.qpB.recv(1, new DataSegment[] {new DataSegment().set(small.mrB, 0, 1000),
                new DataSegment().set(small.mrB, 5000, length)}, 2);
            small.qpA.send(2, sge(small.mrA, 0, length), 1, 0, 0);
            small.qpA.write(3, sge(small.mrA, 0, length), 1, small.mrB.address() + 400_000, small.mrB.rKey(), 0, 0);
            small.qpA.read(4, sge(small.mrA, MB, length), 1, small.mrB.address() + MB, small.mrB.rKey(), 0);
            small.qpA.fetchAdd(5, 3, new DataSegment().set(small.mrA, 1_500_000, 8), small.mrB.address() + 1_600_000,
                small.mrB.rKey(), 0);
            Tests.expectSuccess(small.cqA, 4);
            assertEquals(length, Tests.expectSuccess(small.cqB, 1).get(0).length());
            assertSameBytes(small.bufA.asSlice(0, 1000), small.bufB.asSlice(0, 1000));
            assertSameBytes(small.bufA.asSlice(1000, length - 1000), small.bufB.asSlice(5000, length - 1000));
            assertSameBytes(small.bufA.asSlice(0, length), small.bufB.asSlice(400_000, length));
            assertSameBytes(small.bufB.asSlice(MB, length), small.bufA.asSlice(MB, length));
            assertEquals(3, small.bufB.get(LE_LONG, 1_600_000));
        }
    }

    @Test
    void shouldCompleteInPostOrderWithDetLengthsWhenVerbsAreMixed() {
        final MemoryWindow mw = pair.pdA.createMw(1);
        pair.qpB.recv(50, sge(pair.mrB, 0, 64), 1);
        pair.qpB.recv(51, sge(pair.mrB, 64, 64), 1);
        pair.qpA.send(1, sge(pair.mrA, 0, 64), 1, 0, 0);
        pair.qpA.write(2, sge(pair.mrA, 0, 64), 1, pair.mrB.address() + 1024, pair.mrB.rKey(), 0, 0);
        pair.qpA.read(3, sge(pair.mrA, 4096, 300_000), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
        pair.qpA.compExch(4, 0, 1, new DataSegment().set(pair.mrA, 512 * 1024, 8), pair.mrB.address() + 2048,
            pair.mrB.rKey(), 0);
        pair.qpA.fetchAdd(5, 1, new DataSegment().set(pair.mrA, 512 * 1024 + 8, 8), pair.mrB.address() + 2056,
            pair.mrB.rKey(), WrFlags.SUPPRESSED);
        pair.qpA.bind(6, mw, pair.mrA, pair.mrA.address(), 64, Access.REMOTE_READ, 0);
        pair.qpA.send(7, new DataSegment[0], 0, WrFlags.SUPPRESSED, 0);
        pair.qpA.write(8, sge(pair.mrA, 0, 8), 1, pair.mrB.address() + 3072, pair.mrB.rKey(),
            WrFlags.NO_TIMEOUT | WrFlags.FENCED, 0);
        final List<WorkCompletion> wcs = pair.pollA(6);
        final long[] ids = {1, 2, 3, 4, 6, 8};
        final WcType[] types = {WcType.SEND, WcType.RDMA_WRITE, WcType.RDMA_READ, WcType.COMP_EXCH, WcType.BIND,
            WcType.RDMA_WRITE};
        final int[] lengths = {0, 0, 300_000, 8, 0, 0};
        final int[] reaps = {1, 1, 1, 1, 2, 2};
        for (int i = 0; i < ids.length; i++) {
            final WorkCompletion wc = wcs.get(i);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(ids[i], wc.id());
            assertEquals(types[i], wc.type());
            assertEquals(lengths[i], wc.length(), wc.toString());
            assertEquals(reaps[i], wc.reapCount(), wc.toString());
        }
        Tests.expectSuccess(pair.cqB, 2);
        Tests.assertNoCompletion(pair.cqA, 5);
    }
}
