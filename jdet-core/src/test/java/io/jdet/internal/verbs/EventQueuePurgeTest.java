package io.jdet.internal.verbs;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventCode;
import io.jdet.EventRecord;
import io.jdet.ResourceType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The event ring without a NIC: a destroyed object's pending events are purged wherever the ring has wrapped, the
 * others keep their order, and an application's own events (type UNKNOWN) naming the object are kept.
 */
class EventQueuePurgeTest {
    private static final Object GONE = "gone";
    private static final Object KEPT = "kept";

    private static EventQueueImpl queue() {
        return new EventQueueImpl(null, null); // no device: waitOn with a timeout of 0 never blocks
    }

    private static List<Integer> drain(final EventQueueImpl q) {
        final List<Integer> codes = new ArrayList<>();
        final EventRecord r = new EventRecord();
        while (q.pending() > 0) {
            q.waitOn(0, r);
            codes.add(r.rawCode());
            assertSame(KEPT, r.handle());
        }
        assertEquals(Errno.EAGAIN, assertThrows(DetException.class, () -> q.waitOn(0, r)).errno());
        return codes;
    }

    @Test
    void aPurgeAcrossTheWrapOfTheRingKeepsTheOthersInOrder() {
        final EventQueueImpl q = queue();
        final EventRecord r = new EventRecord();
        for (int i = 0; i < 10; i++) {
            q.post(100 + i, ResourceType.QP, KEPT);
        }
        for (int i = 0; i < 10; i++) {
            q.waitOn(0, r); // the ring's head is now at 10 of 16
        }
        for (int i = 0; i < 12; i++) {
            q.post(i, ResourceType.QP, i % 3 == 1 ? GONE : KEPT); // slots 10..15, then 0..5
        }
        q.purge(GONE);
        assertEquals(8, q.pending());
        assertEquals(List.of(0, 2, 3, 5, 6, 8, 9, 11), drain(q));
        q.post(42, ResourceType.QP, KEPT); // the ring still works after the purge
        assertEquals(List.of(42), drain(q));
    }

    @Test
    void anApplicationsOwnEventNamingTheObjectIsKept() {
        final EventQueueImpl q = queue();
        q.post(EventCode.QP_ERROR.code(), ResourceType.QP, GONE);
        q.post(EventCode.USER_GENERATED.code(), ResourceType.UNKNOWN, GONE);
        q.purge(GONE);
        assertEquals(1, q.pending());
        final EventRecord r = new EventRecord();
        q.waitOn(0, r);
        assertEquals(EventCode.USER_GENERATED, r.code());
        assertSame(GONE, r.handle());
    }

    @Test
    void aPurgeThatKeepsNothingEmptiesTheQueue() {
        final EventQueueImpl q = queue();
        for (int i = 0; i < 20; i++) {
            q.post(i, ResourceType.CQ, GONE); // grows past its first 16 slots
        }
        q.purge(GONE);
        assertEquals(0, q.pending());
        q.post(7, ResourceType.QP, KEPT);
        assertEquals(List.of(7), drain(q));
    }
}
