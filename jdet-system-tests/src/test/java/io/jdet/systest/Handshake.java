package io.jdet.systest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** The private data the tests' servers accept with: their buffer's address and remote key. */
final class Handshake {
    private Handshake() {
    }

    static byte[] describe(final Endpoint e) {
        return ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putLong(e.region.address())
            .putInt(e.region.rKey()).array();
    }

    /** @return {address, rKey} */
    static long[] parse(final byte[] privateData) {
        if (privateData.length != 12) {
            throw new AssertionError("private data of " + privateData.length + " bytes");
        }
        final ByteBuffer b = ByteBuffer.wrap(privateData).order(ByteOrder.LITTLE_ENDIAN);
        return new long[] {b.getLong(), b.getInt()};
    }
}
