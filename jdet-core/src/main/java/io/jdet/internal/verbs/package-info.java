/**
 * The verbs engine: implementations of the {@code io.jdet} interfaces and the reliable protocol that runs between
 * queue pairs over any {@link io.jdet.internal.link.Link}.
 *
 * <p>Threading: every object of a NIC (its domains, regions, windows, queue pairs, completion queues and the
 * protocol state) is guarded by that NIC's single engine lock, held briefly by posts, polls and the NIC's
 * progress thread. Nothing else on the data path locks or allocates. Event queues have their own lock, always
 * taken after (never before) an engine lock.
 */
package io.jdet.internal.verbs;
