package io.jdet;

/**
 * A memory region's state ({@code struct det_mr_attr}).
 *
 * @param pd      its protection domain
 * @param address its virtual address (the segment's real address)
 * @param length  its length in bytes
 * @param access  its {@link Access} rights
 * @param lKey    its local key
 * @param rKey    its remote key, 0 without remote access
 */
public record MrAttributes(ProtectionDomain pd, long address, long length, int access, int lKey, int rKey) {
}
