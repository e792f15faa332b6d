package io.jdet;

/**
 * A memory window's state ({@code struct det_mw_attr}); an unbound window has length 0 and access 0.
 *
 * @param pd      its protection domain
 * @param type    1 or 2
 * @param address the first byte it covers
 * @param length  its length in bytes
 * @param access  its {@link Access} rights, with {@link Access#ZERO_BASED} for a zero-based window
 * @param rKey    its current remote key
 */
public record MwAttributes(ProtectionDomain pd, int type, long address, long length, int access, int rKey) {
}
