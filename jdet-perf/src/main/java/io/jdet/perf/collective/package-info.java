/**
 * {@code jdet perf --tests co-*}: the collectives' latency per size, OSU style, with the α–β model's prediction of
 * the algorithm jdet chose beside each figure.
 */
package io.jdet.perf.collective;
