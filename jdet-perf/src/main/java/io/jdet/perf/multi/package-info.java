/**
 * perftest's multi-QP bandwidth runs ({@code --qps N --threads T}): a {@link io.jdet.perf.multi.Crew} of T
 * threads at each end, each a {@link io.jdet.perf.multi.Lane} driving N/T queue pairs, run phase by phase with
 * per-thread and aggregate figures.
 */
package io.jdet.perf.multi;
