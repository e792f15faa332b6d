/**
 * The measuring rig and its small SPI: a {@link io.jdet.perf.rig.PingPong} or a {@link io.jdet.perf.rig.Stream}
 * is one way of moving messages between the two ends (jdet verbs, a UDP or TCP baseline, or a test double); the
 * rigs time them into HdrHistograms and totals, and the helpers bound every wait.
 */
package io.jdet.perf.rig;
