package io.jdet;

import java.nio.ByteBuffer;

/**
 * What a peer needs to reach a region (or a bound window) one-sided: its address, its length and its remote key.
 * The connection manager's private data is the usual way to hand it over: {@link #encode()} on one side,
 * {@link #decode(byte[])} on the other, so no side packs addresses and keys by hand.
 *
 * <pre>{@code
 * request.accept(qp, RemoteRegion.of(table).encode(), 10_000);                         // server
 * RemoteRegion table = RemoteRegion.decode(cm.connect(server, 42, qp, null, 10_000));  // client
 * qp.read(1, into, 1, table.address() + offset, table.rKey(), 0);
 * }</pre>
 *
 * @param address the virtual address of the first byte, as the peer's verbs take it
 * @param length  the length in bytes
 * @param rKey    the remote key
 */
public record RemoteRegion(long address, long length, int rKey) {
    /** Bytes {@link #encode()} produces: the address and the length (8 bytes each), then the key (4), big-endian. */
    public static final int ENCODED_LENGTH = 20;

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException if the length is negative
     */
    public RemoteRegion {
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
    }

    /**
     * Describes a whole registered region.
     *
     * @param region the region; it should grant a remote right, else its remote key is 0 and every remote access
     *               fails
     * @return its address, length and remote key
     * @throws IllegalStateException if the region is deregistered
     * @throws IllegalArgumentException if the region is null
     */
    public static RemoteRegion of(final MemoryRegion region) {
        if (region == null) {
            throw new IllegalArgumentException("region is null");
        }
        return new RemoteRegion(region.address(), region.length(), region.rKey());
    }

    /**
     * The {@link #ENCODED_LENGTH} bytes that {@link #decode} turns back into this record.
     *
     * @return a new array
     */
    public byte[] encode() {
        return ByteBuffer.allocate(ENCODED_LENGTH).putLong(address).putLong(length).putInt(rKey).array();
    }

    /**
     * Reads what {@link #encode()} wrote, from the first {@link #ENCODED_LENGTH} bytes (more may follow, for the
     * application's own use).
     *
     * @param data the encoded bytes, typically a peer's private data
     * @return the description
     * @throws IllegalArgumentException if the data is null, shorter than {@link #ENCODED_LENGTH}, or holds a
     *                                  negative length
     */
    public static RemoteRegion decode(final byte[] data) {
        if (data == null || data.length < ENCODED_LENGTH) {
            throw new IllegalArgumentException((data == null ? "no" : data.length + " bytes of")
                + " data; a RemoteRegion takes " + ENCODED_LENGTH);
        }
        final ByteBuffer b = ByteBuffer.wrap(data);
        return new RemoteRegion(b.getLong(), b.getLong(), b.getInt());
    }

    @Override
    public String toString() {
        return "RemoteRegion[address=0x" + Long.toHexString(address) + ", length=" + length + ", rKey=0x"
            + Integer.toHexString(rKey) + "]";
    }
}
