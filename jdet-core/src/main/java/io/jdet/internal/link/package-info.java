/**
 * Links: what carries frames between NICs. {@link io.jdet.internal.link.Link} is the interface the engine uses;
 * the in-process fabric is the first implementation, UDP the second, and {@link io.jdet.internal.link.FaultyLink}
 * wraps either to lose, duplicate, reorder and corrupt frames. May use {@code wire} only (to size, seal and check
 * frames); nothing of the engine above.
 */
package io.jdet.internal.link;
