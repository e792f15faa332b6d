package io.jdet;

import io.jdet.testing.Loopback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.function.IntFunction;

import static io.jdet.testing.Loopback.sge;
import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every queue pair limit at its edges, at creation and when resized ({@code det_create_qp}, {@code det_modify_qp}):
 * the limit the NIC reports and 0 are accepted, one beyond either is EINVAL; a resize below what a queue holds is
 * EBUSY, and a resize changes only what it names.
 */
@Timeout(60)
class QueuePairLimitsTest {

    /** Creates a queue pair with one attribute set to {@code value} and the others small, then closes it. */
    private static void create(final Loopback pair, final int field, final int value) {
        final int[] a = {4, 4, 1, 1, 1, 1};
        a[field] = value;
        final CompletionQueue cq = pair.cqA;
        pair.pdA.createQp(new QpCreate(a[0] == 0 ? null : cq, a[1] == 0 ? null : cq, a[0], a[1], a[2], a[3], a[4],
            a[5])).close();
    }

    @Test
    void shouldAcceptEachCreateLimitAndZeroAndRefuseOneBeyond() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final NicAttributes n = pair.nicA.query();
            final int[] max = {n.maxSqSize(), n.maxRqSize(), n.maxSges(), n.maxSges(), n.maxOr(), n.maxIr()};
            for (int field = 0; field < max.length; field++) {
                final int f = field;
                create(pair, f, max[f]);
                create(pair, f, 0);
                assertErrno(Errno.EINVAL, () -> create(pair, f, max[f] + 1), "field " + f + " beyond its limit");
                assertErrno(Errno.EINVAL, () -> create(pair, f, -1), "field " + f + " negative");
            }
        }
    }

    private static void resize(final Loopback pair, final IntFunction<QpModify> change, final int value) {
        final QueuePair qp = pair.pdA.createQp(new QpCreate(pair.cqA, pair.cqA, 4, 4, 1, 1, 1, 1));
        try {
            qp.modify(change.apply(value));
        } finally {
            qp.close();
        }
    }

    @Test
    void shouldAcceptEachResizeLimitAndZeroAndRefuseOneBeyond() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final NicAttributes n = pair.nicA.query();
            final int[] max = {n.maxSqSize(), n.maxRqSize(), n.maxOr(), n.maxIr()};
            final java.util.List<IntFunction<QpModify>> changes = java.util.List.of(
                v -> new QpModify().sqSize(v), v -> new QpModify().rqSize(v), v -> new QpModify().maxOr(v),
                v -> new QpModify().maxIr(v));
            for (int i = 0; i < max.length; i++) {
                final IntFunction<QpModify> change = changes.get(i);
                final int limit = max[i];
                resize(pair, change, limit);
                resize(pair, change, 0);
                assertErrno(Errno.EINVAL, () -> resize(pair, change, limit + 1), "change " + i + " beyond its limit");
                assertErrno(Errno.EINVAL, () -> resize(pair, change, -1), "change " + i + " negative");
            }
        }
    }

    @Test
    void shouldRefuseToShrinkAReceiveQueueBelowWhatItHolds() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final QueuePair qp = pair.pdA.createQp(new QpCreate(pair.cqA, pair.cqA, 4, 8, 1, 1, 1, 1));
            for (int i = 0; i < 3; i++) {
                qp.recv(i, sge(pair.mrA, 0, 8), 1);
            }
            // What it holds matters only to a resize of the receive queue.
            qp.modify(new QpModify().sqSize(8).maxOr(2).maxIr(2));
            assertTrue(qp.query().rqSize() >= 8, "the receive queue keeps its size");
            assertErrno(Errno.EBUSY, () -> qp.modify(new QpModify().rqSize(2)));
            qp.modify(new QpModify().rqSize(3));
            assertEquals(3, qp.query().rqSize());
            qp.close();
        }
    }

    @Test
    void shouldChangeOnlyWhatAResizeNames() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final QueuePair qp = pair.pdA.createQp(new QpCreate(pair.cqA, pair.cqA, 4, 8, 1, 1, 2, 3));
            final QpAttributes before = qp.query();
            qp.modify(new QpModify().rqSize(16));
            QpAttributes a = qp.query();
            assertTrue(a.rqSize() >= 16, a.toString());
            assertEquals(before.sqSize(), a.sqSize());
            assertEquals(before.maxOr(), a.maxOr());
            assertEquals(before.maxIr(), a.maxIr());
            qp.modify(new QpModify().sqSize(32));
            a = qp.query();
            assertTrue(a.sqSize() >= 32, a.toString());
            assertTrue(a.rqSize() >= 16, a.toString());
            assertEquals(before.maxOr(), a.maxOr());
            assertEquals(before.maxIr(), a.maxIr());
            qp.modify(new QpModify().maxOr(7));
            a = qp.query();
            assertEquals(7, a.maxOr());
            assertTrue(a.sqSize() >= 32 && a.rqSize() >= 16, a.toString());
            assertEquals(before.maxIr(), a.maxIr());
            qp.modify(new QpModify().maxIr(9));
            a = qp.query();
            assertTrue(a.maxIr() >= 9, a.toString());
            assertEquals(7, a.maxOr());
            assertTrue(a.sqSize() >= 32 && a.rqSize() >= 16, a.toString());
            qp.close();
        }
    }
}
