/**
 * Observability off the data path: the NIC counters as JMX MBeans ({@link io.jdet.internal.observe.NicMBean}),
 * JFR events for connection up and down, retransmission timeouts, receiver-not-ready NAKs and error completions,
 * and {@code System.Logger} logging under the name {@code io.jdet}, all raised through one
 * {@link io.jdet.internal.observe.NicObserver} per NIC from the engine's control and error paths only. Uses nothing
 * else of jdet's internals.
 */
package io.jdet.internal.observe;
