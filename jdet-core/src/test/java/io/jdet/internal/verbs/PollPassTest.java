package io.jdet.internal.verbs;

import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Field;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A poll that finds its queue empty and the engine busy waits for a pass the holder runs as it lets go
 * ({@link NicImpl#passForPoll}, {@link NicImpl#unlockDataPath}); what that pass appended is what the poll returns,
 * even though the poll returns early, without the ring lock, when the pass brought nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PollPassTest {
    private static boolean passWanted(final NicImpl nic) {
        try {
            final Field f = NicImpl.class.getDeclaredField("passWanted");
            f.setAccessible(true);
            return f.getBoolean(nic);
        } catch (final ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void shouldReturnWhatThePassRunForAWaitingPollAppended() throws Exception {
        try (Loopback pair = Loopback.open()) {
            final NicImpl b = (NicImpl) pair.nicB;
            pair.qpB.recv(7, Loopback.sge(pair.mrB, 0, 8), 1);
            final WorkCompletion[] wc = {new WorkCompletion()};
            for (int round = 0; round < 20; round++) {
                if (round > 0) {
                    pair.qpB.recv(7, Loopback.sge(pair.mrB, 0, 8), 1);
                }
                b.lockDataPath(); // nothing at B takes a frame in until this thread lets go
                boolean held = true;
                try {
                    pair.qpA.send(round, Loopback.sge(pair.mrA, 0, 8), 1, 0, 0);
                    Tests.await("the frame waits at B", b.link::inputWaiting);
                    final CompletableFuture<Integer> polled = new CompletableFuture<>();
                    Thread.ofPlatform().start(() -> {
                        try {
                            polled.complete(pair.cqB.poll(wc));
                        } catch (final Throwable t) {
                            polled.completeExceptionally(t);
                        }
                    });
                    Tests.await("the poll waits for a pass", () -> passWanted(b));
                    held = false;
                    b.unlockDataPath(); // runs the pass the poll asked for, then lets go
                    assertEquals(1, polled.get(10, TimeUnit.SECONDS),
                        "round " + round + ": the pass run for the poll received the send");
                    assertEquals(WcStatus.SUCCESS, wc[0].status());
                    assertEquals(WcType.RECV, wc[0].type());
                    assertFalse(passWanted(b), "served");
                } finally {
                    if (held) {
                        b.lock.unlock();
                    }
                }
                Tests.pollUntil(pair.cqA, 1); // the send's own completion, so that the next round starts clean
            }
        }
    }

    @Test
    void shouldRefuseAPollOfADestroyedQueueEvenWhenItsPassFindsNothing() {
        try (Loopback pair = Loopback.open(new Loopback.Options().connect(false))) {
            final io.jdet.CompletionQueue cq = pair.nicA.createCq(8, null);
            final WorkCompletion[] wc = {new WorkCompletion()};
            assertEquals(0, cq.poll(wc), "nothing: the early return");
            cq.close();
            assertThrows(IllegalStateException.class, () -> cq.poll(wc));
        }
    }
}
