/**
 * Collective groups ({@code det_co}): a join through the connection manager, a credit-based eager transport over
 * one queue pair per peer, and schedules of rounds (sends, receives, then local copies and reductions) built per
 * collective by the algorithm chosen for its size. Built on the public verbs; the engine only lends a poll hook,
 * the completion of a collective on its queue and segment resolution.
 */
package io.jdet.internal.collective;
