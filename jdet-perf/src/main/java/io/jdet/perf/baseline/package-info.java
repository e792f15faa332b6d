/**
 * The baselines jdet is compared with in the same run: plain Java UDP ({@code DatagramChannel}) and TCP
 * ({@code SocketChannel}, TCP_NODELAY) ping-pongs and streams over the same loopback or network, busy-polling
 * non-blocking channels in poll mode and blocking in wait mode.
 */
package io.jdet.perf.baseline;
