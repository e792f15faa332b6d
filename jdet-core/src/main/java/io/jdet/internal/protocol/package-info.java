/**
 * The reliable protocol's parts that need no verbs object: held (out-of-order) frames and the reorder pool, the
 * SACK scoreboard, the protocol counters and the peer values a connection exchanges. May use {@code wire},
 * {@code link} and {@code observe}; what it needs of a queue pair comes through interfaces it owns
 * ({@link io.jdet.internal.protocol.Connection}, {@link io.jdet.internal.protocol.OrderedStream}).
 */
package io.jdet.internal.protocol;
