package io.jdet;

/**
 * A queue pair's state ({@code struct det_qp_attr}).
 *
 * @param pd            its protection domain
 * @param sqCq          the completion queue of its send queue
 * @param rqCq          the completion queue of its receive queue
 * @param state         its state
 * @param mtu           the largest frame of its NIC's link, in bytes
 * @param sqSize        the send queue depth
 * @param rqSize        the receive queue depth
 * @param sqSges        scatter/gather elements per send work request
 * @param rqSges        scatter/gather elements per receive work request
 * @param maxOr         outbound reads and atomics allowed in flight
 * @param maxIr         inbound reads and atomics accepted
 * @param localQpNum    its number, to give to the peer
 * @param remoteQpNum   the peer's number, when connected
 * @param localAddress  its NIC's link address, to give to the peer
 * @param remoteAddress the peer NIC's link address, when connected
 * @param localPsn      this end's start sequence numbers ({@code sq_psn}): request stream in the low 32 bits,
 *                      response stream in the high 32; random, drawn anew whenever the queue pair is (re)set to
 *                      IDLE; give it to the peer, which passes it to {@link QpModify#connect(String, int, long)}
 * @param remotePsn     the peer's start sequence numbers ({@code rq_psn}), when connected; 0 otherwise
 */
public record QpAttributes(ProtectionDomain pd, CompletionQueue sqCq, CompletionQueue rqCq, QpState state, int mtu,
                           int sqSize, int rqSize, int sqSges, int rqSges, int maxOr, int maxIr, int localQpNum,
                           int remoteQpNum, String localAddress, String remoteAddress, long localPsn,
                           long remotePsn) {

    /**
     * The state, the numbers and addresses of both ends, and the limits, for logs; the domain and the completion
     * queues are left out (their own {@code toString} names them).
     *
     * @return for example {@code QpAttributes[CONNECTED, udp:127.0.0.1:7000#5 -> udp:127.0.0.1:7001#9, mtu=65507,
     *         sq=16x1, rq=16x1, maxOr=4, maxIr=4]}
     */
    @Override
    public String toString() {
        return "QpAttributes[" + state + ", " + localAddress + "#" + localQpNum + " -> "
            + (remoteAddress == null || remoteAddress.isEmpty() ? "none" : remoteAddress + "#" + remoteQpNum)
            + ", mtu=" + mtu + ", sq=" + sqSize + "x" + sqSges + ", rq=" + rqSize + "x" + rqSges + ", maxOr=" + maxOr
            + ", maxIr=" + maxIr + "]";
    }
}
