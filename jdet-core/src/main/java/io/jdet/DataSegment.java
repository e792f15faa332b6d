package io.jdet;

/**
 * One scatter/gather element of a work request ({@code struct det_local_ds}): an address inside a registered
 * memory region, a length in bytes, and the region's local key.
 *
 * <p>Mutable and reusable: the verbs copy what they need when a work request is posted, so one array of segments
 * can serve every post and the data path allocates nothing.
 */
public final class DataSegment {
    private long address;
    private int length;
    private int lKey;

    /** Creates an empty segment (address 0, length 0, key 0). */
    public DataSegment() {
    }

    /**
     * Creates a segment.
     *
     * @param address the virtual address of the first byte (a real address, {@code segment.address() + offset})
     * @param length  the length in bytes
     * @param lKey    the local key of the region that holds the bytes
     */
    public DataSegment(final long address, final int length, final int lKey) {
        set(address, length, lKey);
    }

    /**
     * Sets every field.
     *
     * @param address the virtual address of the first byte
     * @param length  the length in bytes
     * @param lKey    the local key of the region that holds the bytes
     * @return this segment
     */
    public DataSegment set(final long address, final int length, final int lKey) {
        this.address = address;
        this.length = length;
        this.lKey = lKey;
        return this;
    }

    /**
     * Points the segment into a region.
     *
     * @param region the registered region
     * @param offset the offset of the first byte in the region
     * @param length the length in bytes
     * @return this segment
     * @throws IllegalStateException if the region is deregistered
     * @throws IllegalArgumentException if the region is null
     */
    public DataSegment set(final MemoryRegion region, final long offset, final int length) {
        if (region == null) {
            throw new IllegalArgumentException("region is null");
        }
        return set(region.address() + offset, length, region.lKey());
    }

    /**
     * The virtual address of the first byte.
     *
     * @return the address
     */
    public long address() {
        return address;
    }

    /**
     * The length in bytes.
     *
     * @return the length
     */
    public int length() {
        return length;
    }

    /**
     * The local key of the region holding the bytes.
     *
     * @return the key
     */
    public int lKey() {
        return lKey;
    }

    @Override
    public String toString() {
        return "DataSegment[address=0x" + Long.toHexString(address) + ", length=" + length + ", lKey=0x"
            + Integer.toHexString(lKey) + "]";
    }
}
