/**
 * The connection manager: listen, connect, accept and reject, disconnect, and its retransmitted CM frames. The top
 * layer of the engine: may use {@code verbs}, {@code protocol}, {@code wire}, {@code link} and {@code observe};
 * nothing below imports it (each NIC gets its CM through the device's factory, see {@code io.jdet.Det}).
 */
package io.jdet.internal.cm;
