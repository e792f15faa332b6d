package io.jdet.perf.report;

import io.jdet.FaultPlan;

import java.util.List;

/**
 * The conditions every figure of a run was measured under.
 *
 * @param role          embedded, client
 * @param nicRequested  the NIC name asked for
 * @param nicUsed       the NIC name opened (loop after a fallback)
 * @param localAddress  this end's NIC address
 * @param peerAddress   the other end's NIC address
 * @param note          why the NIC differs from the one asked for, or null
 * @param mode          {@code busy-poll} or {@code wait}
 * @param verify        whether the bytes received were checked ({@code --verify})
 * @param secure        the protection of jdet's connections: {@code none}, {@code auth} or {@code encrypt}
 * @param faults        the faults jdet's links injected
 * @param maxRd         reads and atomics in flight
 * @param burst         the burst asked for
 * @param baselineHost  where the baselines ran (the side channel's host)
 * @param sizes         the sizes
 * @param tests         the jdet tests
 * @param java          the JVM
 * @param os            the operating system and architecture
 * @param cpus          available processors
 * @param startedAt     ISO-8601 start time
 */
public record RunInfo(String role, String nicRequested, String nicUsed, String localAddress, String peerAddress,
                      String note, String mode, boolean verify, String secure, FaultPlan faults, int maxRd, int burst,
                      String baselineHost, List<Integer> sizes, List<String> tests, String java, String os, int cpus,
                      String startedAt) {

    /**
     * The transport label of jdet figures: {@code jdet/} and the NIC's kind.
     *
     * @return for example {@code jdet/loop}
     */
    public String jdetTransport() {
        final int colon = nicUsed.indexOf(':');
        return "jdet/" + (colon < 0 ? nicUsed : nicUsed.substring(0, colon));
    }

    /**
     * Whether jdet ran on the in-process fabric.
     *
     * @return true for loop
     */
    public boolean onLoop() {
        return nicUsed.startsWith("loop");
    }

    /**
     * Whether jdet ran over UDP, the link its targets against the UDP and TCP baselines are about.
     *
     * @return true for a {@code udp:} NIC
     */
    public boolean onUdp() {
        return nicUsed.startsWith("udp");
    }
}
