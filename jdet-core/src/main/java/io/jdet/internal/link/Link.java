package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;

/**
 * One NIC's frame carrier. A link sends a frame (a header plus a gather list of payload pieces) to a peer named by
 * a {@code long} it resolved earlier, and hands received frames to a handler. It checks the frame CRC on receipt
 * and drops corrupted frames; it does not retransmit, order or deduplicate: the engine's protocol does that.
 *
 * <p>Threading: {@link #send} and {@link #receive} are called by the holder of the NIC's engine lock only, so a
 * link needs no lock of its own for them. {@link #await} is called without the lock by two waiters, each at most
 * one thread at a time but both at once: the NIC's progress thread ({@link #PROGRESS}) and the application thread
 * that waits for an event and runs the engine itself when a frame arrives ({@link #APPLICATION}, see
 * {@code NicImpl}'s link waiter). {@link #wakeup} is called from any thread.
 */
public interface Link extends AutoCloseable {

    /** The waiter of {@link #await} and {@link #wakeup} that is the NIC's progress thread. */
    int PROGRESS = 0;

    /** The waiter of {@link #await} and {@link #wakeup} that is an application thread blocked on an event. */
    int APPLICATION = 1;

    /**
     * The address peers use to reach this link, as accepted by their {@link #resolve}.
     *
     * @return the address
     */
    String address();

    /**
     * The largest frame, header included, in bytes.
     *
     * @return the frame size limit
     */
    int mtu();

    /**
     * Turns a peer address into the handle {@link #send} takes and {@link FrameHandler#onFrame} reports.
     *
     * @param address a peer's {@link #address()}
     * @return the handle, or -1 if this link cannot reach that address
     */
    long resolve(String address);

    /**
     * The address of a peer handle, for people.
     *
     * @param peer a handle from {@link #resolve} or a received frame
     * @return the address
     */
    String describe(long peer);

    /**
     * Sends one frame: the first {@code headerLength} bytes of {@code header}, then the pieces of {@code payload}.
     * The link fills in the CRC field of the copy it sends.
     *
     * @param peer         the destination
     * @param header       the header bytes (the CRC field must be 0)
     * @param headerLength the header length
     * @param payload      the payload pieces, possibly none
     * @return false if the link had no room now (the caller retries later); true if the frame was sent or
     *         deliberately dropped
     */
    boolean send(long peer, MemorySegment header, int headerLength, FrameGather payload);

    /**
     * Whether frames to a peer need a CRC: the engine seals each frame it sends to {@code peer} when true. A link
     * over memory (the in-process fabric, shared memory) answers false for every peer, since nothing between the
     * copies can corrupt a frame; the UDP link answers false for a peer over the host's loopback interface, which
     * is memory too (docs/PROTOCOL.md, section 4); either answers true when fault injection corrupts frames on
     * purpose. Raises nothing.
     *
     * @param peer the destination, as {@link #resolve} gives it
     * @return true if the engine must fill in the CRC field of each frame to {@code peer}
     */
    default boolean checksummed(long peer) {
        return true;
    }

    /**
     * Makes every frame {@link #send} has sent so far independent of the payload memory it was given: a link that
     * carries a reference to lent registered memory ({@link FrameGather#lend}) instead of its bytes copies the
     * bytes of each frame not yet consumed now, or waits for its consumer to finish reading them. The engine calls
     * it, holding the NIC's engine lock, before anything lets the application reuse or free memory it lent:
     * deregistration, flushing a queue pair's work, closing. Links that copy at {@link #send} do nothing. Raises
     * nothing.
     */
    default void settle() {
    }

    /**
     * Hands every frame {@link #send} has batched to the carrier. Links that send each frame at once do nothing.
     * Called by the holder of the NIC's engine lock as it lets go ({@link LinkLock}), so no frame waits in a batch
     * while the lock is free.
     */
    default void flush() {
    }

    /**
     * Hands what a batch has staged to the carrier now, inside a batch too ({@link #cork}): for an acknowledgement
     * that a sender whose window is full may be waiting for, which would otherwise leave only when the engine pass
     * that is taking in a long run of that sender's frames ends. Links that send each frame at once do nothing.
     * Raises nothing a send would not.
     */
    default void push() {
    }

    /**
     * Hands received frames, in arrival order, to the handler: those of up to {@code max} units the link carries
     * (a datagram, an aggregate of datagrams the kernel merged, a ring slot), each of which may hold several
     * frames.
     *
     * @param handler called once per frame whose CRC is right
     * @param max     the most units to take
     * @return how many units were taken from the link, good or bad
     */
    int receive(FrameHandler handler, int max);

    /**
     * Whether {@link #receive} might hand over a frame now: false only when the link can tell without a system
     * call that nothing waits, as a memory ring can by reading its head. An application that polls an idle NIC
     * skips most engine passes on such a link. Any thread; raises nothing.
     *
     * @return false if certainly nothing waits
     */
    default boolean mayHaveInput() {
        return true;
    }

    /**
     * Whether a received frame certainly waits, known without a system call (a memory ring's head): false where the
     * link cannot tell so cheaply (a socket). The engine takes the acknowledgements a post's full window waits for
     * only then. Any thread; raises nothing.
     *
     * @return true if {@link #receive} would hand over a frame now
     */
    default boolean inputWaiting() {
        return false;
    }

    /**
     * Starts a batch of sends (a post, a progress pass): until the matching {@link #uncork}, the link may hold frames
     * back so that several bound for the same peer share a datagram (a ring slot on the in-process fabric and on
     * shared memory), as TCP does with {@code TCP_CORK}. Calls nest; a link that carries one frame per unit (raw
     * Ethernet) ignores them. Raises nothing.
     */
    default void cork() {
    }

    /**
     * Ends a batch: everything held since the outermost {@link #cork} leaves now (what the kernel refuses for lack of
     * buffer stays held, and leaves at the next send or uncork). Raises nothing a send would not.
     */
    default void uncork() {
    }

    /**
     * Ends a batch as {@link #uncork} does, but lets what the outermost batch staged wait for company: it leaves
     * with the next {@link #uncork} that ends a batch, a send outside a batch, or when the staging is full (and, on
     * UDP, whose staging refers to registered memory, at {@link #settle}; the memory links stage copies); {@link
     * #flush} leaves it staged, and {@link #mayHaveInput} answers true meanwhile, so that the next engine pass sends
     * it. For a post flagged {@code WrFlags.MORE}. A link that sends each frame at once ignores the difference.
     * Raises nothing.
     */
    default void uncorkHolding() {
        uncork();
    }

    /**
     * Blocks the progress thread until a frame may have arrived, it is woken, or the time runs out: {@code
     * await(PROGRESS, timeoutNs)}.
     *
     * @param timeoutNs the longest wait
     */
    default void await(final long timeoutNs) {
        await(PROGRESS, timeoutNs);
    }

    /**
     * Blocks a waiter until a frame may have arrived, {@link #wakeup(int)} wakes it, or the time runs out. Returns
     * at once if it was woken since its last await (a wakeup is remembered, as an eventfd counter remembers it, so
     * that one which comes between the caller's last look at its condition and this call is not lost). Spurious
     * returns are allowed: the caller looks at its condition again. Raises nothing on a closed link (it returns).
     *
     * @param waiter    {@link #PROGRESS} or {@link #APPLICATION}
     * @param timeoutNs the longest wait
     */
    void await(int waiter, long timeoutNs);

    /** Ends the {@link #await} of both waiters early (the NIC closes). */
    default void wakeup() {
        wakeup(PROGRESS);
        wakeup(APPLICATION);
    }

    /**
     * Ends one waiter's {@link #await} early, or makes its next one return at once. Any thread; raises nothing on
     * a closed link.
     *
     * @param waiter {@link #PROGRESS} or {@link #APPLICATION}
     */
    void wakeup(int waiter);

    /**
     * Counts of what the link dropped, by cause, added into the engine's counters.
     *
     * @param counters where to add them
     */
    void addCounters(java.util.Map<String, Long> counters);

    @Override
    void close();
}
