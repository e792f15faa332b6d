package io.jdet.perf.jdet;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one end tells the other over the side channel before a test, as det_perf's {@code connect_info}: the queue
 * pair to connect to, its NIC's address, both buffers with their remote keys, and the inbound read limit.
 *
 * @param qpNumber   the queue pair's number
 * @param nicAddress its NIC's link address
 * @param sendAddr   the send buffer's address (the target of the peer's reads)
 * @param sendKey    its remote key
 * @param recvAddr   the receive buffer's address (the target of the peer's writes and atomics)
 * @param recvKey    its remote key
 * @param maxIr      inbound reads and atomics accepted
 * @param psn        the queue pair's start sequence numbers ({@code QpAttributes.localPsn()})
 */
public record ConnectInfo(int qpNumber, String nicAddress, long sendAddr, int sendKey, long recvAddr, int recvKey,
                          int maxIr, long psn) {

    /**
     * The fields as side-channel text.
     *
     * @return key to value
     */
    public Map<String, String> toFields() {
        final Map<String, String> fields = new LinkedHashMap<>();
        fields.put("qp", Integer.toString(qpNumber));
        fields.put("nic", nicAddress);
        fields.put("saddr", Long.toString(sendAddr));
        fields.put("skey", Integer.toString(sendKey));
        fields.put("raddr", Long.toString(recvAddr));
        fields.put("rkey", Integer.toString(recvKey));
        fields.put("maxir", Integer.toString(maxIr));
        fields.put("psn", Long.toString(psn));
        return fields;
    }

    /**
     * Reads the fields back.
     *
     * @param fields what {@link #toFields()} wrote
     * @return the info
     * @throws IllegalArgumentException if a field is missing or not a number
     */
    public static ConnectInfo fromFields(final Map<String, String> fields) {
        return new ConnectInfo(Integer.parseInt(need(fields, "qp")), need(fields, "nic"),
            Long.parseLong(need(fields, "saddr")), Integer.parseInt(need(fields, "skey")),
            Long.parseLong(need(fields, "raddr")), Integer.parseInt(need(fields, "rkey")),
            Integer.parseInt(need(fields, "maxir")), Long.parseLong(need(fields, "psn")));
    }

    private static String need(final Map<String, String> fields, final String key) {
        final String value = fields.get(key);
        if (value == null) {
            throw new IllegalArgumentException("connect info without " + key);
        }
        return value;
    }

    /**
     * This info with a wildcard UDP address ({@code udp:0.0.0.0:port}, {@code udp:[::]:port}) replaced by the host
     * the side channel reached, so that a server listening on every interface can be connected to.
     *
     * @param host the peer's host as the side channel saw it
     * @return the info to connect with
     */
    public ConnectInfo reachableFrom(final String host) {
        for (final String wildcard : new String[] {"udp:0.0.0.0:", "udp:[::]:"}) {
            if (nicAddress.startsWith(wildcard)) {
                final String literal = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
                return new ConnectInfo(qpNumber, "udp:" + literal + ":" + nicAddress.substring(wildcard.length()),
                    sendAddr, sendKey, recvAddr, recvKey, maxIr, psn);
            }
        }
        return this;
    }
}
