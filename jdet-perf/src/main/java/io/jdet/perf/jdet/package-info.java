/**
 * jdet's side of the perf tool: the device and NIC of one end ({@link io.jdet.perf.jdet.JdetPeer}), the queue pair
 * and buffers of one test ({@link io.jdet.perf.jdet.JdetQp}), the ping-pong and burst tests written with the verbs,
 * and det_perf's setup-cost measurements.
 */
package io.jdet.perf.jdet;
