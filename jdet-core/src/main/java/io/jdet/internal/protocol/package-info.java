/**
 * The reliable protocol: the requester (send queue, request stream out, response stream in) and the responder
 * (receive queue, request stream in, response stream out), their work queues and scatter lists, held
 * (out-of-order) frames and the reorder pool, the SACK scoreboard, the protocol counters and the peer values a
 * connection exchanges. May use {@code wire}, {@code link} and {@code observe}; what it needs of its NIC and queue
 * pair comes through types it owns and {@code verbs} implements: {@link io.jdet.internal.protocol.ProtocolNic}
 * (settings, transmit buffers, send a frame, an ack or a NAK, resolve a remote key),
 * {@link io.jdet.internal.protocol.ProtocolQp} (identity, completions, errors, local operations) and
 * {@link io.jdet.internal.protocol.Region} (a registered region's memory).
 */
package io.jdet.internal.protocol;
