package io.jdet.collective;

import io.jdet.CollectiveTuning;
import io.jdet.DetException;
import io.jdet.Errno;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Receive slots per peer: by default ({@link CollectiveTuning#AUTO_SLOTS}) 16 in a group of up to 16 members, where
 * memory is cheap and a one-way flow (a broadcast's) hands credits back half as often, 8 in a larger one; a count
 * given is used as it is.
 */
class CollectiveSlotsTest {
    @Test
    void shouldPickSlotsByTheGroupsSizeByDefault() {
        assertEquals(CollectiveTuning.AUTO_SLOTS, CollectiveTuning.DEFAULT.slots());
        assertEquals(16, CollectiveTuning.DEFAULT.slotsFor(2));
        assertEquals(16, CollectiveTuning.DEFAULT.slotsFor(16));
        assertEquals(8, CollectiveTuning.DEFAULT.slotsFor(17));
        assertEquals(8, CollectiveTuning.DEFAULT.slotsFor(1024));
    }

    @Test
    void shouldUseTheCountGivenWhateverTheSize() {
        final CollectiveTuning four = CollectiveTuning.DEFAULT.withSlots(4096, 4);
        assertEquals(4, four.slotsFor(2));
        assertEquals(4, four.slotsFor(1024));
        assertEquals(16, four.withSlots(4096, CollectiveTuning.AUTO_SLOTS).slotsFor(3), "automatic again");
    }

    @Test
    void shouldRefuseCountsOutsideTheRangeWithEinval() {
        for (final int bad : new int[] {-1, 1, 4097}) {
            assertEquals(Errno.EINVAL, assertThrows(DetException.class,
                () -> CollectiveTuning.DEFAULT.withSlots(16_384, bad)).errno(), "count " + bad);
        }
    }
}
