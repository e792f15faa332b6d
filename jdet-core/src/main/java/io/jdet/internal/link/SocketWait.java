package io.jdet.internal.link;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The blocking wait of the socket links ({@link UdpLink}, {@link EthLink}): {@link Link#await} and
 * {@link Link#wakeup} for their two waiters. Each waiter ({@link Link#PROGRESS}, {@link Link#APPLICATION}) has an
 * eventfd of its own and its own {@code ppoll} set (the socket and that eventfd) and timeout, so both may block on
 * the socket at once, and a wakeup meant for one is never taken by the other. An eventfd keeps its count until
 * read, so a wakeup that comes before the waiter blocks makes its next wait return at once: none is lost.
 * Optionally a wait busy-polls the set (a zero-timeout {@code ppoll}) for a while before it blocks.
 *
 * <p>{@link #close} waits for the threads inside {@link #await} and {@link #wakeup} (it wakes the former) before it
 * closes the eventfds, so neither can touch a descriptor number the process has reused since; the link closes its
 * socket after that. Nothing here allocates after construction.
 */
final class SocketWait {
    /** The longest {@link #close} waits for a thread to leave {@link #await} or {@link #wakeup}. */
    private static final long CLOSE_WAIT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final int WAITERS = 2;

    private final String what;
    private final int[] eventFds = {-1, -1};
    private final MemorySegment[] pollFds = new MemorySegment[WAITERS];
    private final MemorySegment[] timeouts = new MemorySegment[WAITERS];
    private final MemorySegment[] drains = new MemorySegment[WAITERS];
    private final MemorySegment wakeValue;
    /** How long each waiter ({@link Link#PROGRESS}, {@link Link#APPLICATION}) busy-polls before it blocks. */
    private final long[] spinNs;
    private volatile boolean closed;
    /** Threads inside {@link #await} or {@link #wakeup}, which use the descriptors without the engine lock. */
    private final AtomicInteger unlockedCalls = new AtomicInteger();

    /**
     * Opens the eventfds and lays out the poll sets in the link's memory. If it fails, nothing stays open.
     *
     * @param arena  the link's memory, freed by the link after {@link #close}
     * @param what   the link, for the message of a failed close
     * @param spinNs how long a wait busy-polls before it blocks (0: never)
     * @throws IllegalStateException naming the errno if an eventfd cannot be made
     */
    SocketWait(final Arena arena, final String what, final long spinNs) {
        this(arena, what, spinNs, spinNs);
    }

    /**
     * Opens the eventfds and lays out the poll sets, with a spin of each waiter's own.
     *
     * @param arena             the link's memory, freed by the link after {@link #close}
     * @param what              the link, for the message of a failed close
     * @param progressSpinNs    how long the progress thread's wait busy-polls before it blocks (0: never)
     * @param applicationSpinNs how long an application thread's wait busy-polls before it blocks (0: never)
     * @throws IllegalStateException naming the errno if an eventfd cannot be made
     */
    SocketWait(final Arena arena, final String what, final long progressSpinNs, final long applicationSpinNs) {
        this.what = what;
        this.spinNs = new long[WAITERS];
        this.spinNs[Link.PROGRESS] = progressSpinNs;
        this.spinNs[Link.APPLICATION] = applicationSpinNs;
        this.wakeValue = arena.allocate(8, 8);
        wakeValue.set(ValueLayout.JAVA_LONG, 0, 1L);
        final MemorySegment errno = Posix.newErrnoState(arena);
        try {
            for (int w = 0; w < WAITERS; w++) {
                final int fd = (int) Posix.EVENTFD.invokeExact(errno, 0, Posix.EFD_NONBLOCK | Posix.EFD_CLOEXEC);
                if (fd < 0) {
                    throw new IllegalStateException("eventfd failed: errno " + Posix.errno(errno));
                }
                eventFds[w] = fd;
                pollFds[w] = arena.allocate(2L * Posix.POLLFD_SIZE, 8);
                timeouts[w] = arena.allocate(Posix.TIMESPEC_SIZE, 8);
                drains[w] = arena.allocate(8, 8);
            }
        } catch (final Throwable t) {
            closeEventFds();
            throw t instanceof IllegalStateException e ? e : new IllegalStateException("eventfd failed: " + t);
        }
    }

    /**
     * Points both poll sets at the socket, once the link has it.
     *
     * @param socket the link's socket
     */
    void watch(final int socket) {
        for (int w = 0; w < WAITERS; w++) {
            pollFds[w].set(ValueLayout.JAVA_INT, 0, socket);
            pollFds[w].set(ValueLayout.JAVA_SHORT, 4, Posix.POLLIN);
            pollFds[w].set(ValueLayout.JAVA_INT, Posix.POLLFD_SIZE, eventFds[w]);
            pollFds[w].set(ValueLayout.JAVA_SHORT, Posix.POLLFD_SIZE + 4, Posix.POLLIN);
        }
    }

    /**
     * {@link Link#await}: blocks until the socket is readable, the waiter's eventfd was written, or the time runs
     * out; returns at once once closed.
     *
     * @param waiter    {@link Link#PROGRESS} or {@link Link#APPLICATION}
     * @param timeoutNs the longest wait
     */
    void await(final int waiter, final long timeoutNs) {
        unlockedCalls.incrementAndGet(); // before the closed check, which close() makes after setting closed
        try {
            if (!closed && !spin(waiter, Math.min(spinNs[waiter], Math.max(0, timeoutNs)))) {
                poll(waiter, timeoutNs);
            }
        } finally {
            unlockedCalls.decrementAndGet();
        }
    }

    /** Busy-polls the set (a zero-timeout {@code ppoll}) for a while; true once something is ready. */
    private boolean spin(final int waiter, final long ns) {
        if (ns <= 0) {
            return false;
        }
        final long deadline = System.nanoTime() + ns;
        do {
            if (poll(waiter, 0) > 0) {
                return true;
            }
            Thread.onSpinWait();
        } while (System.nanoTime() - deadline < 0 && !closed);
        return false;
    }

    /** One {@code ppoll}; drains the waiter's eventfd if it was written. @return what ppoll returned */
    private int poll(final int waiter, final long timeoutNs) {
        final long ns = Math.max(0, timeoutNs);
        final MemorySegment fds = pollFds[waiter];
        final MemorySegment timeout = timeouts[waiter];
        timeout.set(ValueLayout.JAVA_LONG, 0, ns / 1_000_000_000L);
        timeout.set(ValueLayout.JAVA_LONG, 8, ns % 1_000_000_000L);
        fds.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        fds.set(ValueLayout.JAVA_SHORT, Posix.POLLFD_SIZE + 6, (short) 0);
        try {
            // errno is not captured (it would allocate when not inlined): EINTR and the rest all mean "look again"
            final int ready = (int) Posix.PPOLL_UNCAPTURED.invokeExact(fds, 2L, timeout, MemorySegment.NULL);
            if (ready > 0 && fds.get(ValueLayout.JAVA_SHORT, Posix.POLLFD_SIZE + 6) != 0) {
                final long ignored = (long) Posix.READ.invokeExact(eventFds[waiter], drains[waiter], 8L);
            }
            return ready;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * {@link Link#wakeup}: writes the waiter's eventfd; nothing once closed.
     *
     * @param waiter {@link Link#PROGRESS} or {@link Link#APPLICATION}
     */
    void wakeup(final int waiter) {
        unlockedCalls.incrementAndGet(); // as in await: close() waits for this call to end
        try {
            if (!closed) {
                write(eventFds[waiter]);
            }
        } finally {
            unlockedCalls.decrementAndGet();
        }
    }

    private void write(final int eventFd) {
        try {
            final long ignored = (long) Posix.WRITE.invokeExact(eventFd, wakeValue, 8L);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** @return the threads inside {@link #await} or {@link #wakeup} now, for tests */
    int unlockedCalls() {
        return unlockedCalls.get();
    }

    /** @return whether {@link #close} has begun */
    boolean closed() {
        return closed;
    }

    /**
     * Wakes both waiters and waits until no thread is inside {@link #await} or {@link #wakeup}, then closes the
     * eventfds. The link then closes its socket and frees its memory. A second call does nothing.
     *
     * @throws IllegalStateException if a thread stays inside for 5 s (stopped, say, by a debugger): the eventfds
     *                               are left open, and the link must leave its socket and memory open too
     */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (final int fd : eventFds) {
            write(fd); // ppoll returns at once, now or when it starts, since nothing reads the eventfd any more
        }
        final long deadline = System.nanoTime() + CLOSE_WAIT_NS;
        while (unlockedCalls.get() > 0) {
            if (System.nanoTime() - deadline > 0) {
                // Leak rather than let that thread, when it runs again, poll or read a descriptor number the
                // process may have reused by then.
                throw new IllegalStateException("a thread stayed in the " + what + "'s await or wakeup for 5 s; "
                    + "its socket and memory are left open");
            }
            LockSupport.parkNanos(10_000);
        }
        closeEventFds();
    }

    private void closeEventFds() {
        for (int w = 0; w < WAITERS; w++) {
            Descriptors.close(eventFds[w]);
            eventFds[w] = -1;
        }
    }
}
