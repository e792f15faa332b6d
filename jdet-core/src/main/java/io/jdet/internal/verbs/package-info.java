/**
 * The verbs objects: device, NIC, protection domains, memory regions and windows, completion queues, queue pairs
 * (each owning a {@code protocol} requester and responder, to which it lends itself as a
 * {@link io.jdet.internal.protocol.ProtocolQp}), event queues, the key table and the argument checks, data segments
 * resolved at post time and local operations (binds, invalidates); implements the {@code io.jdet} interfaces. May
 * use {@code protocol}, {@code wire}, {@code link} and {@code observe}; never {@code cm}, which registers itself
 * with each NIC through {@link io.jdet.internal.verbs.CmHandler}.
 *
 * <p>Threading: every object of a NIC (its domains, regions, windows, queue pairs, completion queues and the
 * protocol state) is guarded by that NIC's single engine lock, held briefly by posts, polls and the NIC's
 * progress thread, or by a thread blocked on an event queue that sleeps on the NIC's link and runs the engine itself
 * (the NIC's link waiter, {@link io.jdet.internal.verbs.NicImpl#claimLink}; the progress thread stays off the link
 * meanwhile). Nothing else on the data path locks or allocates. Event queues have their own lock, always taken
 * after (never before) an engine lock.
 */
package io.jdet.internal.verbs;
