package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The window bounds the bytes in flight: at most {@code windowFrames} unacknowledged frames of any size, four times as
 * many while each frame beyond them is a send or write of 2 KiB or less (reads keep the window). The peer never acknowledges here (every
 * frame is lost, and the first retransmission is seconds away), so the frames sent are exactly what the window let go.
 */
@Timeout(30)
class SmallFrameWindowTest {
    private static final int WINDOW = 16;

    private static Loopback blackHole() {
        final Configuration c = new Configuration().faults(new FaultPlan(1, 0, 0, 0, 1)).windowFrames(WINDOW)
            .minRtoUs(5_000_000).maxRtoUs(5_000_000);
        return Loopback.open(new Loopback.Options().configuration(c).depth(256, 16).bufferBytes(1 << 20));
    }

    private static long framesSent(final Loopback pair) {
        return pair.nicA.counters().get("frames.sent");
    }

    private static void post(final Loopback pair, final int count, final int length) {
        for (int i = 0; i < count; i++) {
            pair.qpA.send(i, Loopback.sge(pair.mrA, 0, length), 1, WrFlags.SUPPRESSED, 0);
        }
    }

    @Test
    void shouldLetFourWindowsOfSmallFramesGo() {
        try (Loopback pair = blackHole()) {
            post(pair, 200, 2048);
            Tests.await("the window's frames sent", () -> framesSent(pair) >= 4 * WINDOW);
            Tests.assertNoCompletion(pair.cqA, 50);
            assertEquals(4 * WINDOW, framesSent(pair), "four windows of small frames, no more");
        }
    }

    @Test
    void shouldHoldLargeFramesToOneWindow() {
        try (Loopback pair = blackHole()) {
            post(pair, 200, 2049);
            Tests.await("the window's frames sent", () -> framesSent(pair) >= WINDOW);
            Tests.assertNoCompletion(pair.cqA, 50);
            assertEquals(WINDOW, framesSent(pair), "one window of frames of more than 2 KiB");
        }
    }

    @Test
    void shouldSendSmallFramesBeyondTheWindowOnlyWhileEachIsSmall() {
        try (Loopback pair = blackHole()) {
            post(pair, WINDOW, 2048);
            post(pair, 1, 4096); // the first large frame beyond the window waits, and the small ones behind it
            post(pair, 100, 8);
            Tests.await("the window's frames sent", () -> framesSent(pair) >= WINDOW);
            Tests.assertNoCompletion(pair.cqA, 50);
            assertEquals(WINDOW, framesSent(pair), "frames go in order: none passes the large one");
        }
    }

    @Test
    void shouldHoldReadRequestsToOneWindow() {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(new Configuration()
            .faults(new FaultPlan(1, 0, 0, 0, 1)).windowFrames(WINDOW).minRtoUs(5_000_000).maxRtoUs(5_000_000))
            .depth(256, 16).bufferBytes(1 << 20).maxOr(128).maxIr(128))) {
            for (int i = 0; i < 100; i++) {
                pair.qpA.read(i, Loopback.sge(pair.mrA, 0, 8), 1, pair.mrB.address(), pair.mrB.rKey(), 0);
            }
            Tests.await("the window's frames sent", () -> framesSent(pair) >= WINDOW);
            Tests.assertNoCompletion(pair.cqA, 50);
            assertEquals(WINDOW, framesSent(pair), "a read request carries no bytes, its response does");
        }
    }
}
