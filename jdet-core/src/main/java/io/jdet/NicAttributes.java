package io.jdet;

/**
 * A NIC's identity and limits ({@code struct det_nic_attr}); the limits are enforced per NIC.
 *
 * @param name        the name the NIC was opened with
 * @param address     the NIC's link address, to give to peers (for example {@code loop:default/1})
 * @param vendorId    0x8086, as DET
 * @param deviceId    0
 * @param hwRev       1
 * @param fwRev       the protocol version
 * @param mtu         the largest frame the link carries, in bytes
 * @param maxPds      most protection domains
 * @param maxMrs      most memory regions
 * @param maxMrSize   largest memory region, in bytes
 * @param maxMws      most memory windows
 * @param maxCqs      most completion queues
 * @param minCqSize   smallest non-zero completion queue (sizes are rounded up to a multiple of it)
 * @param maxCqSize   largest completion queue
 * @param maxQps      most queue pairs
 * @param maxSqSize   deepest send queue
 * @param maxRqSize   deepest receive queue
 * @param maxMsgSize  longest message, in bytes
 * @param maxRdmaSize longest RDMA transfer, in bytes
 * @param minSges     fewest scatter/gather elements a queue may be limited to
 * @param maxSges     most scatter/gather elements per work request
 * @param maxOr       most outbound reads and atomics in flight per queue pair
 * @param maxIr       most inbound reads and atomics per queue pair
 * @param pageSize    the page size, in bytes
 */
public record NicAttributes(String name, String address, int vendorId, int deviceId, int hwRev, long fwRev, int mtu,
                            int maxPds, int maxMrs, long maxMrSize, int maxMws, int maxCqs, int minCqSize,
                            int maxCqSize, int maxQps, int maxSqSize, int maxRqSize, long maxMsgSize,
                            long maxRdmaSize, int minSges, int maxSges, int maxOr, int maxIr, int pageSize) {
}
