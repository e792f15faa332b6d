/**
 * The verbs objects: device, NIC, protection domains, memory regions and windows, completion queues, queue pairs
 * (each owning a {@code protocol} requester and responder, to which it lends itself as a
 * {@link io.jdet.internal.protocol.ProtocolQp}), event queues, the key table and the argument checks, data segments
 * resolved at post time and local operations (binds, invalidates); implements the {@code io.jdet} interfaces. May
 * use {@code protocol}, {@code wire}, {@code link} and {@code observe}; never {@code cm}, which registers itself
 * with each NIC through {@link io.jdet.internal.verbs.CmHandler}.
 *
 * <p>Threading, as it stands. Every object of a NIC (its domains, regions, windows, queue pairs, the protocol
 * state, the link's transmit and receive sides, the timers) is guarded by that NIC's engine lock, held briefly by
 * posts (which run the engine inline, so that a frame leaves within its post), by engine passes (receive, owed
 * acks, due timers) and by the NIC's progress thread, or by a thread blocked on an event queue that sleeps on the
 * NIC's link and runs the engine itself (the NIC's link waiter, {@link io.jdet.internal.verbs.NicImpl#claimLink};
 * the progress thread stays off the link meanwhile). The engine lock ({@link io.jdet.internal.link.LinkLock}) is
 * taken with a compare-and-set and released with a release store, not a fence: on a many-core machine the
 * atomic instructions of the data path, not its work, set its pace, so each message pays as few as it can. Two
 * parts are off that lock:
 * <ul>
 * <li><b>Completion queues.</b> Each ring has a spin lock of its own, taken by a poller as it takes. The engine
 * appends without it (one appender at a time, under the engine lock): release stores of a count of entries
 * appended and of a count of entries taken hand entries and freed slots across; an armed queue appends under the
 * ring lock. A poll that finds completions takes them without the engine lock; only a poll that finds its queue
 * empty needs an engine pass. Polling frees work-queue slots through a count the engine folds in
 * ({@link io.jdet.internal.protocol.WorkRing#retire}), written by one poller at a time (the ring lock of the one
 * queue a work queue completes on); a queue pair's epoch (reset, destroy) changes under its queues' ring locks, so
 * a poll never frees a slot of a newer epoch.</li>
 * <li><b>Engine passes combine.</b> A poll that needs a pass while another thread holds the engine does not queue
 * for the lock: it asks for a pass and waits for one that begins after it asked
 * ({@link io.jdet.internal.verbs.NicImpl#passForPoll}). The holder (a post, a poll, the link waiter) runs the pass
 * as it lets go ({@link io.jdet.internal.verbs.NicImpl#unlockDataPath}); a waiter whose request the holder missed
 * takes the free lock and runs the pass itself, so no request is stranded. One pass serves every waiting poll (one
 * receive system call instead of one per poller).</li>
 * </ul>
 * Lock order: engine lock, then a ring lock, then an event queue's lock; a thread never holds two ring locks
 * except to change a queue pair's epoch, which only the engine-lock holder does. Nothing on the data path parks on
 * a lock (spin, then yield) or allocates; control calls ({@code lock()}) park in short slices, and one that waited
 * a millisecond is let in next.
 *
 * <p>Threading, where it goes (issue 7, "threads scale"). Posts on different queue pairs still serialize on the
 * engine lock, because the engine shares per-NIC transmit scratch ({@code ProtocolNic.txHeader}/{@code txGather}),
 * plain counters, the ack list, the reorder pool and the link's batch (cork/flush) between queue pairs. The next
 * steps, in order: (1) give each queue pair its transmit scratch and its counters (summed when read), so that a
 * queue pair's requester and responder can run under a per-queue-pair lock; (2) make the link's transmit side
 * thread safe on its own (a short lock or a per-thread batch; the UDP link's staging is the bulk-path work's); (3)
 * take the per-queue-pair lock, not the engine lock, in posts, and have the receive pass take the engine lock for
 * the link and the lock of each queue pair a frame is for (engine, then queue pair); the ack list and timers move
 * to per-queue-pair deadlines walked by the pass. The key table is already read-mostly (regions are published
 * before use), but it is written under the engine lock, so lookups off that lock need it made safe for concurrent
 * readers first. Three traps for those steps, found on 2026-11-28: a post whose window is full runs an engine pass
 * ({@code windowFull}), so a post holding its queue pair's lock must not wait for the engine lock (the receive pass
 * takes engine, then queue pair): it may only try it, and a pass that finds a queue pair's lock taken must hand the
 * frame to that pair's holder (an inbox it drains before letting go) rather than wait; a completion queue fed by
 * queue pairs that run under different locks has several appenders, so its append needs a reserved slot and a
 * per-slot publication instead of the one appender's count; and over UDP one socket still serializes receiving,
 * so receive passes scale only once queue pairs spread over several sockets of the NIC (lanes, each its own port,
 * which the connection manager's handshake must name).
 */
package io.jdet.internal.verbs;
