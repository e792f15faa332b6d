package io.jdet.internal.verbs;

import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WrFlags;
import io.jdet.internal.link.ForwardingLink;
import io.jdet.internal.link.FrameHandler;
import io.jdet.internal.link.Links;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A post that leaves frames waiting for a full window takes in the acknowledgements already waiting on a memory link
 * (ProtocolNic#windowFull: the in-process fabric and shared memory), so that a burst of posts keeps its frames flowing without a poll in between. A's link
 * here hands nothing to A's progress thread, so only the application's own calls take frames in.
 */
@Timeout(30)
class PostTakesAcksTest {
    private static final int WINDOW = 4;
    /** Small writes in flight: four windows of them. */
    private static final int SMALL_WINDOW = 4 * WINDOW;

    /** A's link: the progress thread takes nothing; receives by the application are counted. */
    private static final class AppOnlyLink extends ForwardingLink {
        volatile Thread progress;
        final AtomicLong byApplication = new AtomicLong();

        AppOnlyLink(final String name, final Configuration configuration) {
            super(Links.open(name, configuration));
        }

        @Override
        public int receive(final FrameHandler handler, final int max) {
            if (Thread.currentThread() == progress) {
                return 0;
            }
            final int n = inner.receive(handler, max);
            byApplication.addAndGet(n);
            return n;
        }

        @Override
        public void await(final int waiter, final long timeoutNs) {
            if (Thread.currentThread() == progress) {
                LockSupport.parkNanos(timeoutNs); // it would find the ring full of what it may not take, and spin
            } else {
                inner.await(waiter, timeoutNs);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"loop", "shm"})
    void shouldTakeWaitingAcksWhenAPostFindsTheWindowFull(final String kind) {
        final Configuration c = new Configuration().windowFrames(WINDOW).ackDelayUs(10_000_000)
            .minRtoUs(5_000_000).maxRtoUs(5_000_000);
        final String fabric = kind.equals("loop") ? Tests.uniqueFabric("post-acks")
            : Tests.uniqueShmGroup("post-acks");
        try (Arena arena = Arena.ofShared(); Det det = Det.open(c)) {
            final DeviceImpl device = (DeviceImpl) det;
            final AppOnlyLink link = new AppOnlyLink(fabric, device.configuration);
            final NicImpl nicA;
            synchronized (device) {
                nicA = device.attach("a", link, null);
            }
            link.progress = nicA.progressThread();
            final Nic nicB = det.openNic(fabric, null);
            final CompletionQueue cqA = nicA.createCq(64, null);
            final CompletionQueue cqB = nicB.createCq(64, null);
            final QueuePair qpA = nicA.allocPd().createQp(new QpCreate(cqA, cqA, 64, 4, 1, 1, 1, 1));
            final QueuePair qpB = nicB.allocPd().createQp(new QpCreate(cqB, cqB, 4, 4, 1, 1, 1, 1));
            final MemoryRegion mrA = qpA.query().pd().regMr(arena.allocate(64, 64), Loopback.ALL_RIGHTS);
            final MemoryRegion mrB = qpB.query().pd().regMr(arena.allocate(64, 64), Loopback.ALL_RIGHTS);
            qpA.modify(new QpModify().connect(nicB.address(), qpB.number(), qpB.query().localPsn()));
            qpB.modify(new QpModify().connect(nicA.address(), qpA.number(), qpA.query().localPsn()));
            final DataSegment[] sge = {new DataSegment().set(mrA, 0, 8)};

            for (int i = 0; i < SMALL_WINDOW; i++) {
                qpA.write(i, sge, 1, mrB.address(), mrB.rKey(), WrFlags.SUPPRESSED, 0);
            }
            assertEquals((long) SMALL_WINDOW, nicA.counters().get("frames.sent"), "the window is full");
            // B's progress thread takes the writes and acknowledges every quarter window: the acks wait in A's ring
            Tests.await("B's acknowledgements wait for A", link::inputWaiting);
            assertEquals(0L, link.byApplication.get(), "A took nothing in yet");

            qpA.write(SMALL_WINDOW, sge, 1, mrB.address(), mrB.rKey(), 0, 0);
            assertTrue(link.byApplication.get() > 0, "the post took the acknowledgements in");
            assertEquals(SMALL_WINDOW + 1L, nicA.counters().get("frames.sent"), "and sent its frame at once");
            assertEquals(WcStatus.SUCCESS, Tests.pollUntil(cqA, 1).get(0).status());
            assertFalse(link.inputWaiting());
            Tests.assertEngineHealthy(nicA, nicB);
        }
    }
}
