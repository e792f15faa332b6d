package io.jdet;

import java.lang.foreign.MemorySegment;

/**
 * A registered memory region ({@code struct det_mr}). Its local key names it in local data segments; its remote
 * key, non-zero only with a remote right, lets a peer read, write or run atomics on it.
 *
 * <p><b>Lifetime of the memory.</b> The memory must stay alive (its arena open) until the region is deregistered
 * with {@link #close()}. Deregistration is immediate and final: when {@code close} returns, jdet never reads or
 * writes the memory again, and the arena may be closed. Work that still refers to the region fails instead of
 * touching it: a send or write not yet fully sent completes with {@link WcStatus#LOCAL_PROTECTION_ERR}, a read or
 * atomic result or a receive with {@link WcStatus#LOCAL_PROTECTION_ERR}, and a peer's read whose response is still
 * being sent from the region completes at the peer with {@link WcStatus#PROTECTION_ERR}; each time the queue pair
 * enters ERROR. A region whose arena is closed while it is still registered (a use after free) counts as
 * deregistered from that moment: the same failures follow, and jdet never hands freed memory to the kernel.
 */
public interface MemoryRegion extends AutoCloseable {

    /**
     * The local key. Never 0, never equal to the remote key.
     *
     * @return the key
     * @throws IllegalStateException if the region is deregistered: its key names nothing any more
     */
    int lKey();

    /**
     * The remote key, or 0 if the region grants no remote right.
     *
     * @return the key
     * @throws IllegalStateException if the region is deregistered: its key names nothing any more
     */
    int rKey();

    /**
     * The virtual address of the first byte: the segment's real address.
     *
     * @return the address
     */
    long address();

    /**
     * The length in bytes.
     *
     * @return the length
     */
    long length();

    /**
     * The registered memory.
     *
     * @return the segment
     */
    MemorySegment segment();

    /**
     * The current state ({@code det_query_mr}).
     *
     * @return the attributes
     * @throws IllegalStateException if deregistered
     */
    MrAttributes query();

    /**
     * Changes the domain and/or the rights ({@code det_modify_mr}) and always issues new keys; the old ones stop
     * working at once. Read the new keys with {@link #lKey()} and {@link #rKey()}.
     *
     * @param pd     the new domain, or null to keep the current one
     * @param access the new rights, or -1 to keep the current ones
     * @throws DetException EBUSY while windows are bound to the region; EINVAL for an illegal combination of
     *                      rights, LOCAL_WRITE on a read-only segment, or a domain of another NIC
     * @throws IllegalStateException if the region is deregistered or the domain deallocated
     */
    void modify(ProtectionDomain pd, int access);

    /**
     * Registers the same memory again, with its own domain, rights and keys ({@code det_reg_shared}).
     *
     * @param pd     the domain of the new region
     * @param access its rights
     * @return the new region
     * @throws DetException the errors of {@link ProtectionDomain#regMr}
     */
    MemoryRegion regShared(ProtectionDomain pd, int access);

    /**
     * Deregisters the region ({@code det_dereg_mr}); its keys stop working at once, and jdet never touches the
     * memory again (work still referring to it fails, see above), so its arena may be closed when this returns.
     *
     * @throws DetException EBUSY while windows are bound to it
     */
    @Override
    void close();
}
