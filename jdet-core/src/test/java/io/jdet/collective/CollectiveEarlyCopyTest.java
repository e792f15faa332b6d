package io.jdet.collective;

import io.jdet.Configuration;
import io.jdet.MemoryRegion;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The copy of an all-reduce's src into dst that runs while the first round's transfers are in flight
 * (Schedule.copyEarly) must not change bytes those transfers still read. The API lets an all-reduce's src overlap
 * its dst (only scatter, gather and all-to-all refuse it): a send of src that reads it late (by rendezvous, after
 * the peer's advertisement) then read what the early copy had already moved.
 */
@Timeout(120)
class CollectiveEarlyCopyTest {
    static Stream<Arguments> cases() {
        final List<Arguments> out = new ArrayList<>();
        for (final int p : new int[] {2, 3, 4, 5}) {
            for (final String t : new String[] {"rendezvous", "mixed", "medium", "mpich"}) {
                for (final int shift : new int[] {8, -8, 0}) {
                    out.add(Arguments.of(p, t, shift));
                }
            }
        }
        return out.stream();
    }

    /** src and dst in one region, src {@code shift} bytes after dst (before it when negative; the same when 0). */
    @ParameterizedTest(name = "p={0} {1} shift={2}")
    @MethodSource("cases")
    void anAllreduceWhoseSourceOverlapsItsDestination(final int p, final String tuning, final int shift) {
        // 512 bytes: rendezvous under "rendezvous" and "mixed", more chunks than credits under the others
        overlapping(new Group(p, CollectiveVerbsTest.tuning(p, tuning)), 64, shift);
    }

    /** The default tuning: 128 KiB go by rendezvous. */
    @ParameterizedTest(name = "p={0} shift={1}")
    @CsvSource({"2, 8", "2, -8", "3, 8", "4, -8"})
    void aLongAllreduceWhoseSourceOverlapsItsDestinationUnderTheDefaults(final int p, final int shift) {
        overlapping(new Group(p, new Configuration()), 16_384, shift);
    }

    private static void overlapping(final Group group, final int count, final int shift) {
        final int p = group.p;
        final long n = 8L * count;
        try (Group g = group.joined()) {
            final MemoryRegion[] mr = new MemoryRegion[p];
            final long srcAt = Math.max(shift, 0);
            final long dstAt = Math.max(-shift, 0);
            for (int i = 0; i < p; i++) {
                mr[i] = g.region(i, n + Math.abs(shift));
                for (int e = 0; e < count; e++) {
                    mr[i].segment().set(ValueLayout.JAVA_LONG_UNALIGNED, srcAt + 8L * e, value(i, e));
                }
            }
            for (int i = 0; i < p; i++) {
                g.cos[i].allreduce(11, Group.ds(mr[i], srcAt, n), Group.ds(mr[i], dstAt, n), ReduceOp.SUM,
                    ReduceType.INT64, 0);
            }
            g.expectAll(WcType.ALLREDUCE, n);
            for (int i = 0; i < p; i++) {
                for (int e = 0; e < count; e++) {
                    long want = 0;
                    for (int j = 0; j < p; j++) {
                        want += value(j, e);
                    }
                    assertEquals(want, mr[i].segment().get(ValueLayout.JAVA_LONG_UNALIGNED, dstAt + 8L * e),
                        "member " + i + ", element " + e);
                }
            }
        }
    }

    private static long value(final int rank, final int e) {
        return 1000L * (rank + 1) + e * 7L + 1;
    }
}
