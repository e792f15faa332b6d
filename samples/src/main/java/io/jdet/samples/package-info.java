/**
 * Programs to copy from: each sample has a server and a client end that meet through the connection manager over
 * UDP, and a README that says how to run both. {@link io.jdet.samples.Endpoint} is the setup they share (device,
 * NIC, domain, completion queue, queue pair and one registered buffer).
 */
package io.jdet.samples;
