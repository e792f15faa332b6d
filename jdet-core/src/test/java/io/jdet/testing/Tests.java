package io.jdet.testing;

import io.jdet.CompletionQueue;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.Nic;
import io.jdet.WorkCompletion;
import org.junit.jupiter.api.function.Executable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

/** Bounded waits and small assertions shared by the verbs tests. Every wait has a deadline; none spins forever. */
public final class Tests {
    /**
     * How long any single wait for protocol progress may take before the test fails: 10 s, or the system property
     * {@code jdet.test.timeoutMs} (the mutation profile sets 5 s, so that a mutant that stalls the protocol fails
     * its test before PIT's own limit kills the whole test JVM).
     */
    public static final Duration TIMEOUT = Duration.ofMillis(Long.getLong("jdet.test.timeoutMs", 10_000));

    /** The counter of failures the engine caught, in {@link Nic#counters()}. */
    public static final String ENGINE_ERRORS = "engine.errors";

    private static final AtomicLong FABRICS = new AtomicLong();

    private Tests() {
    }

    /**
     * A NIC name on a fabric no other test uses.
     *
     * @param hint a readable part of the name
     * @return {@code loop:<hint>-<n>}
     */
    public static String uniqueFabric(final String hint) {
        return "loop:" + hint + "-" + FABRICS.incrementAndGet() + "-" + ProcessHandle.current().pid();
    }

    /**
     * A shared-memory NIC name on a group no other test uses.
     *
     * @param hint a readable part of the name
     * @return {@code shm:<hint>-<n>-<pid>}
     */
    public static String uniqueShmGroup(final String hint) {
        return "shm:" + hint + "-" + FABRICS.incrementAndGet() + "-" + ProcessHandle.current().pid();
    }

    /**
     * Polls until {@code n} completions were taken, or fails after {@link #TIMEOUT}.
     *
     * @param cq the queue
     * @param n  how many completions to take (no more are taken)
     * @return copies of the completions, in polling order
     */
    public static List<WorkCompletion> pollUntil(final CompletionQueue cq, final int n) {
        return pollUntil(cq, n, TIMEOUT);
    }

    /**
     * Polls until {@code n} completions were taken, or fails when the time is up.
     *
     * @param cq      the queue
     * @param n       how many completions to take (no more are taken)
     * @param timeout the most to wait
     * @return copies of the completions, in polling order
     */
    public static List<WorkCompletion> pollUntil(final CompletionQueue cq, final int n, final Duration timeout) {
        final List<WorkCompletion> got = new ArrayList<>(n);
        final WorkCompletion[] batch = new WorkCompletion[Math.max(1, Math.min(n, 64))];
        for (int i = 0; i < batch.length; i++) {
            batch[i] = new WorkCompletion();
        }
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (got.size() < n) {
            final int taken = cq.poll(batch, Math.min(batch.length, n - got.size()));
            for (int i = 0; i < taken; i++) {
                got.add(copy(batch[i]));
            }
            if (taken == 0) {
                if (System.nanoTime() - deadline > 0) {
                    fail("expected " + n + " completions within " + timeout + ", got " + got.size() + ": " + got);
                }
                Thread.yield(); // the machine is shared: let the progress threads and the peer run
            }
        }
        return got;
    }

    /**
     * Polls until {@code n} completions were taken and asserts that every one succeeded.
     *
     * @param cq the queue
     * @param n  how many completions to take
     * @return copies of the completions, in polling order
     */
    public static List<WorkCompletion> expectSuccess(final CompletionQueue cq, final int n) {
        final List<WorkCompletion> got = pollUntil(cq, n);
        for (final WorkCompletion wc : got) {
            assertEquals(io.jdet.WcStatus.SUCCESS, wc.status(), wc.toString());
        }
        return got;
    }

    /**
     * Polls until one completion was taken.
     *
     * @param cq the queue
     * @return a copy of it
     */
    public static WorkCompletion pollOne(final CompletionQueue cq) {
        return pollUntil(cq, 1).get(0);
    }

    /**
     * Polls for a while and asserts that no completion appears; the only wait in the suite that runs to its end.
     *
     * @param cq     the queue
     * @param millis how long to keep polling
     */
    public static void assertNoCompletion(final CompletionQueue cq, final long millis) {
        final WorkCompletion[] one = {new WorkCompletion()};
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() - deadline < 0) {
            if (cq.poll(one) != 0) {
                fail("unexpected completion " + one[0]);
            }
            LockSupport.parkNanos(100_000);
        }
    }

    /**
     * A detached copy of a completion.
     *
     * @param wc the completion
     * @return a new completion with the same fields
     */
    public static WorkCompletion copy(final WorkCompletion wc) {
        return new WorkCompletion().set(wc.id(), wc.status(), wc.type(), wc.flags(), wc.length(), wc.immediate(),
            wc.invalidatedRKey(), wc.reapCount(), wc.queuePair());
    }

    /**
     * Waits for an event that matches, or fails after {@link #TIMEOUT}; events that do not match are kept in the
     * returned list too, before the match.
     *
     * @param events the queue
     * @param match  what to wait for
     * @return every event taken, the match last
     */
    public static List<EventRecord> awaitEvent(final EventQueue events, final Predicate<EventRecord> match) {
        final List<EventRecord> taken = new ArrayList<>();
        final long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            final long leftUs = TimeUnit.NANOSECONDS.toMicros(deadline - System.nanoTime());
            if (leftUs <= 0) {
                fail("no matching event within " + TIMEOUT + "; got " + taken);
            }
            final EventRecord record = new EventRecord();
            try {
                events.waitOn(leftUs, record);
            } catch (final DetException e) {
                if (e.errno() == Errno.ETIME) {
                    fail("no matching event within " + TIMEOUT + "; got " + taken);
                }
                throw e;
            }
            taken.add(record);
            if (match.test(record)) {
                return taken;
            }
        }
    }

    /**
     * Takes every event queued now, without waiting.
     *
     * @param events the queue
     * @return the events
     */
    public static List<EventRecord> drainEvents(final EventQueue events) {
        final List<EventRecord> taken = new ArrayList<>();
        while (events.pending() > 0) {
            final EventRecord record = new EventRecord();
            events.waitOn(0, record);
            taken.add(record);
        }
        return taken;
    }

    /**
     * Waits until a condition holds, or fails after {@link #TIMEOUT}.
     *
     * @param what      the condition, for the failure message
     * @param condition the condition
     */
    public static void await(final String what, final BooleanSupplier condition) {
        final long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting until " + what);
            }
            LockSupport.parkNanos(50_000);
        }
    }

    /**
     * How many failures a NIC's progress thread caught and survived ({@code engine.errors}): each one is a bug the
     * engine hid, since bad input from the application or the network must be answered by an errno, a completion
     * status or a counted drop, never by an exception in the engine.
     *
     * @param nic an open NIC
     * @return the count
     */
    public static long engineErrors(final Nic nic) {
        return nic.counters().get(ENGINE_ERRORS);
    }

    /**
     * Asserts that no NIC's progress thread caught a failure: the engine survived because nothing failed in it,
     * not because an exception was swallowed.
     *
     * @param nics open NICs
     */
    public static void assertEngineHealthy(final Nic... nics) {
        for (final Nic nic : nics) {
            final java.util.Map<String, Long> counters = nic.counters();
            assertEquals(0L, counters.get(ENGINE_ERRORS), () -> "the progress thread of " + nic.address()
                + " caught a failure; counters " + counters);
        }
    }

    /**
     * Asserts that a call fails with a {@link DetException} carrying an errno.
     *
     * @param errno the errno expected
     * @param call  the call
     * @return the exception
     */
    public static DetException assertErrno(final Errno errno, final Executable call) {
        return assertErrno(errno, call, "");
    }

    /**
     * Asserts that a call fails with a {@link DetException} carrying an errno.
     *
     * @param errno the errno expected
     * @param call  the call
     * @param why   what the case is, for the failure message
     * @return the exception
     */
    public static DetException assertErrno(final Errno errno, final Executable call, final String why) {
        final DetException e = assertThrows(DetException.class, call, "expected " + errno + " " + why);
        assertEquals(errno, e.errno(), why + ": " + e.getMessage());
        return e;
    }

    /**
     * Fills a segment with pseudo-random bytes.
     *
     * @param segment the memory
     * @param seed    the seed, so that the same bytes can be made again
     */
    public static void fill(final MemorySegment segment, final long seed) {
        final SplittableRandom random = new SplittableRandom(seed);
        final long n = segment.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
        for (; i < n; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
    }

    /**
     * Asserts that two ranges hold the same bytes, naming the first difference.
     *
     * @param expected the bytes expected
     * @param actual   the bytes found
     */
    public static void assertSameBytes(final MemorySegment expected, final MemorySegment actual) {
        assertEquals(expected.byteSize(), actual.byteSize(), "length");
        final long at = expected.mismatch(actual);
        if (at != -1) {
            fail("bytes differ at offset " + at + " of " + expected.byteSize() + ": expected "
                + expected.get(ValueLayout.JAVA_BYTE, at) + ", found " + actual.get(ValueLayout.JAVA_BYTE, at));
        }
    }
}
