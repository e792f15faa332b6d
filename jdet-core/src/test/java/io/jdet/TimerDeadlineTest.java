package io.jdet;

import io.jdet.internal.wire.Frame;
import io.jdet.testing.HostilePeer;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Deadlines the protocol arms that must hold whatever the background tick ({@code timerPeriodUs}, here 1 s) is
 * (found by a review of the change that brought the tick forward). Every bound below is far from what the tick makes of it: each round waits about
 * a second for the tick where the deadline asks for a millisecond or less.
 */
@Timeout(60)
class TimerDeadlineTest {
    /**
     * An RTO armed by a post while the application does not poll: the progress thread sleeps on the link for a
     * timer period it computed before the post, and nothing wakes it (the frame was lost, no frame arrives), so
     * the retransmission waits for the tick, not the RTO.
     */
    @Test
    void anRtoArmedByAPostIsKeptWhileTheApplicationIsIdle() throws InterruptedException {
        try (HostileSetup s = new HostileSetup(ONE_MS_RTO_ONE_S_TICK)) {
            // the application is idle between rounds: the progress thread sleeps on the link
            final long ms = threeLostWritesResentMs(s, () -> { });
            assertTrue(ms < 1000, "three writes lost once were resent " + ms + " ms in all after their posts, "
                + "with a 1 ms RTO: the 1 s tick decided, not the RTO");
        }
    }

    /**
     * As above, while another application thread sleeps on the link as its waiter (blocked in
     * {@code EventQueue.waitOn}): that thread computed its sleep before the post armed the RTO.
     */
    @Test
    void anRtoArmedByAPostIsKeptWhileAnotherThreadWaitsOnTheLink() throws InterruptedException {
        try (HostileSetup s = new HostileSetup(ONE_MS_RTO_ONE_S_TICK)) {
            final Thread waiter = Thread.ofPlatform().daemon().start(() -> {
                try {
                    s.lo.eventsA.waitOn(30_000_000, new EventRecord());
                } catch (final RuntimeException closed) {
                    // the queue closed under it at the end of the test
                }
            });
            // between rounds the waiter sleeps on the link for the engine's next deadline: the 1 s tick
            final long ms = threeLostWritesResentMs(s, () -> { });
            assertTrue(waiter.isAlive(), "the waiter left the link");
            assertTrue(ms < 1000, "three writes lost once were resent " + ms + " ms in all after their posts, "
                + "with a 1 ms RTO and a link waiter: the 1 s tick decided, not the RTO");
        }
    }

    /**
     * A deadline the timers do not act on must not keep an idle progress thread awake: a NO_TIMEOUT write to a
     * silent peer, past the ack timeout, retransmits at its RTO's pace (here every 200 ms) and nothing else.
     */
    @Test
    void anIdleProgressThreadDoesNotSpinOnADeadlineNobodyActsOn() throws InterruptedException {
        final Configuration c = new Configuration().timerPeriodUs(1_000_000).minRtoUs(200_000).maxRtoUs(200_000)
            .ackTimeoutMs(10);
        try (HostileSetup s = new HostileSetup(c)) {
            s.lo.qpA.write(1, sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, WrFlags.NO_TIMEOUT, 0);
            s.expectRequest(Frame.OP_WRITE);
            Thread.sleep(100); // past the ack timeout: NO_TIMEOUT keeps it going
            final java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            final Thread progress = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("jdet-progress-" + s.lo.nicA.address())).findFirst()
                .orElseThrow();
            final long before = mx.getThreadCpuTime(progress.threadId());
            Thread.sleep(1000);
            final long cpuMs = TimeUnit.NANOSECONDS.toMillis(mx.getThreadCpuTime(progress.threadId()) - before);
            assertEquals(QpState.CONNECTED, s.lo.qpA.query().state());
            assertTrue(cpuMs < 300, "the idle progress thread used " + cpuMs + " ms of CPU in a second");
        }
    }

    /**
     * The requester gives up on a read whose request was acknowledged but whose response never comes after
     * {@code ackTimeoutMs} (6.4); no deadline is armed for that give-up, so it waits for the tick.
     */
    @Test
    void theResponseWaitGiveUpIsKeptWhateverTheTick() {
        final Configuration c = new Configuration().timerPeriodUs(1_000_000).ackTimeoutMs(50);
        try (HostileSetup s = new HostileSetup(c)) {
            s.postRead(1, 8);
            s.peer.ack(); // the read request arrived; its response never comes
            final long acked = System.nanoTime();
            final WorkCompletion wc = Tests.pollUntil(s.lo.cqA, 1, Duration.ofSeconds(10)).get(0);
            final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - acked);
            assertEquals(WcStatus.RETRY_EXCEEDED, wc.status(), wc.toString());
            assertTrue(ms < 500, "a read waited " + ms + " ms for its response with ackTimeoutMs 50: the 1 s "
                + "tick decided, not the ack timeout");
        }
    }

    /**
     * An atomic behind a read runs only once the read's response is acknowledged (6a05e74). The response's last
     * frame asks for an ack (FORCE_ACK) but the requester does not honour it on the response stream: the ack waits
     * for the delayed-ack time, or for the responder's retransmission timeout to resend the read (a duplicate is
     * acknowledged at once). So each atomic behind a read costs an RTO and a spurious resend, not a round trip.
     */
    @Test
    void anAtomicBehindAReadCostsARoundTripNotAnRto() {
        final Configuration c = new Configuration().ackDelayUs(5_000_000).minRtoUs(1_000_000).maxRtoUs(1_000_000)
            .ackTimeoutMs(20_000);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(c))) {
            final long start = System.nanoTime();
            for (int round = 0; round < 3; round++) {
                pair.qpA.read(2L * round, sge(pair.mrA, 64, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
                pair.qpA.fetchAdd(2L * round + 1, 1, new DataSegment().set(pair.mrA, 0, 8), pair.mrB.address(),
                    pair.mrB.rKey(), 0);
                final List<WorkCompletion> done = Tests.pollUntil(pair.cqA, 2, Duration.ofSeconds(20));
                assertEquals(WcStatus.SUCCESS, done.get(0).status());
                assertEquals(WcStatus.SUCCESS, done.get(1).status());
                assertEquals(round, pair.bufA.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0));
            }
            final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(ms < 1500, "three read + fetch-add pairs took " + ms + " ms ("
                + pair.nicB.counters().get("retransmit.timeouts") + " responder timeouts): each atomic waited for "
                + "the 1 s response RTO, its read's response ack being delayed");
        }
    }

    /**
     * The connection manager resends a REQUEST after max(minRtoUs, 1 ms), doubling (9.2): with a 1 s tick each
     * resend waits for the tick.
     */
    @Test
    void connectionManagerResendsKeepTheirScheduleWhateverTheTick() {
        final Configuration c = new Configuration().timerPeriodUs(1_000_000);
        try (HostileSetup s = new HostileSetup(c, false)) {
            final long start = System.nanoTime();
            final CompletableFuture<byte[]> connect = CompletableFuture.supplyAsync(
                () -> s.lo.nicA.connectionManager().connect(s.peer.address(), 7, s.lo.qpA, null, 20_000));
            for (int i = 0; i < 4; i++) { // the first and three resends: about 1 + 2 + 4 ms
                s.peer.expect(Frame.OP_CM_REQUEST);
            }
            final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            connect.cancel(true);
            assertTrue(ms < 1000, "a REQUEST was sent four times in " + ms + " ms: the 1 s tick decided, not "
                + "the 1 ms, 2 ms, 4 ms schedule");
        }
    }

    /**
     * An application thread waited on the event queue as the NIC's link waiter and got its event: the progress
     * thread, which parked off the link for a timer period while that thread held it, is not handed the link back
     * (the application is expected to drive the engine). The application then posts a write that is lost and goes
     * idle: the RTO it armed wakes nobody, since the progress thread is parked (not in the link's await, which
     * {@code link.wakeup(PROGRESS)} would end) and its recorded wake-up is stale. The resend waits for the 1 s
     * period, not the 1 ms RTO.
     */
    @Test
    void anRtoArmedAfterTheLinkWaiterGotItsEventIsKept() throws InterruptedException {
        try (HostileSetup s = new HostileSetup(ONE_MS_RTO_ONE_S_TICK)) {
            final long ms = threeLostWritesResentMs(s, () -> {
                final Thread waiter = Thread.ofPlatform().daemon().start(() -> s.lo.eventsA.waitOn(30_000_000,
                    new EventRecord()));
                sleep(20); // the waiter holds the link; the progress thread parks off it
                s.lo.eventsA.generate("wake"); // the waiter takes its event and leaves the link
                try {
                    waiter.join(10_000);
                } catch (final InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(ms < 1000, "three writes lost once, posted after a link waiter got its event, were resent "
                + ms + " ms in all after their posts, with a 1 ms RTO: the 1 s tick decided, not the RTO");
        }
    }

    /**
     * As above, with a deadline that falls after the next tick, which was not brought forward: the tick, due at
     * its regular time, is what brings such a deadline forward (6.2). The progress thread parked off the link for
     * a whole period from when the waiter took the link, past that tick; the waiter then left with its event
     * before the tick, and a write posted after it armed an RTO just past the tick. Nobody ran the tick: the RTO
     * waited for the progress thread's park to end, up to a period later. Here the tick's phase is set by a lost
     * write (the tick then runs at its RTO, and once more an RTO later, after which the next comes a full period
     * later, at about {@code resent + 1.3 s}); the waiter takes the link at {@code resent + 1.1 s} (the progress
     * thread parks until about {@code resent + 2.1 s}) and the write is posted at {@code resent + 1.15 s}, its
     * 300 ms RTO falling at about {@code resent + 1.45 s}. Kept, the resend comes 300 ms after the post; with the
     * progress thread's park past the tick, about 950 ms after.
     */
    @Test
    void aDeadlineJustPastAnUnforwardedTickIsKeptAfterTheLinkWaiterLeft() throws InterruptedException {
        final Configuration c = new Configuration().timerPeriodUs(1_000_000).minRtoUs(300_000).maxRtoUs(300_000)
            .ackTimeoutMs(20_000);
        try (HostileSetup s = new HostileSetup(c)) {
            s.lo.qpA.write(1, sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0, 0);
            final HostilePeer.Received lost = s.expectRequest(Frame.OP_WRITE);
            s.peer.expect("the write resent", r -> r.opcode() == Frame.OP_WRITE && r.seq() == lost.seq());
            final long resent = System.nanoTime();
            s.peer.ack();
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(s.lo.cqA).status());
            sleepUntil(resent + TimeUnit.MILLISECONDS.toNanos(1100));
            final Thread waiter = Thread.ofPlatform().daemon().start(() -> s.lo.eventsA.waitOn(30_000_000,
                new EventRecord()));
            sleep(20); // the waiter holds the link; the progress thread parks off it
            s.lo.eventsA.generate("wake"); // the waiter takes its event and leaves the link, before the tick
            waiter.join(10_000);
            sleepUntil(resent + TimeUnit.MILLISECONDS.toNanos(1150));
            final long posted = System.nanoTime();
            s.lo.qpA.write(2, sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0, 0);
            final HostilePeer.Received first = s.expectRequest(Frame.OP_WRITE);
            s.peer.expect("the write resent", r -> r.opcode() == Frame.OP_WRITE && r.seq() == first.seq());
            final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - posted);
            s.peer.ack();
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(s.lo.cqA).status());
            assertTrue(ms < 700, "a write lost once, posted after a link waiter left, with its 300 ms RTO just past "
                + "the next tick, was resent " + ms + " ms after its post: the progress thread's park decided");
        }
    }

    private static void sleepUntil(final long ns) {
        final long leftNs = ns - System.nanoTime();
        if (leftNs > 0) {
            sleep(TimeUnit.NANOSECONDS.toMillis(leftNs));
        }
    }

    /** A 1 s background tick, a 1 ms RTO, and an ack timeout beyond the test. */
    private static final Configuration ONE_MS_RTO_ONE_S_TICK = new Configuration().timerPeriodUs(1_000_000)
        .minRtoUs(1000).maxRtoUs(1000).ackTimeoutMs(20_000);

    /**
     * Three rounds, each after 20 ms idle and {@code beforePost}: a write the peer "loses" (only its retransmission,
     * after the 1 ms RTO, reaches it), then acknowledged and completed.
     *
     * @return the milliseconds from each post to its retransmission, summed
     */
    private static long threeLostWritesResentMs(final HostileSetup s, final Runnable beforePost) {
        long waitedNs = 0;
        for (int round = 0; round < 3; round++) {
            sleep(20);
            beforePost.run();
            final long posted = System.nanoTime();
            s.lo.qpA.write(round, sge(s.lo.mrA, 0, 8), 1, 0x1000, 0x77, 0, 0);
            final HostilePeer.Received first = s.expectRequest(Frame.OP_WRITE);
            s.peer.expect("the write resent", r -> r.opcode() == Frame.OP_WRITE && r.seq() == first.seq());
            waitedNs += System.nanoTime() - posted;
            s.peer.ack();
            assertEquals(WcStatus.SUCCESS, Tests.pollOne(s.lo.cqA).status());
        }
        return TimeUnit.NANOSECONDS.toMillis(waitedNs);
    }

    private static void sleep(final long ms) {
        try {
            Thread.sleep(ms);
        } catch (final InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
