package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;

import java.util.regex.Pattern;

/**
 * Raw Ethernet link addresses: an interface and its MAC, written {@code eth:<interface>/<mac>} (the MAC as six
 * colon-separated hex pairs, say {@code eth:veth0/02:1a:2b:3c:4d:5e}). A peer handle is the peer's MAC as a 48-bit
 * non-negative {@code long}, most significant byte first, so the receive path names a sender without allocating.
 * Only the MAC matters to reach a peer: the interface half of a peer's address names the peer's own interface,
 * and frames leave through this NIC's.
 *
 * @param interfaceName the interface name
 * @param mac           the MAC, 48 bits
 */
record EthAddress(String interfaceName, long mac) {
    /** The NIC name prefix. */
    static final String PREFIX = "eth:";
    /** Interface names: what Linux allows, less what could confuse a NIC name (at most 15 bytes, IFNAMSIZ - 1). */
    private static final Pattern INTERFACE = Pattern.compile("[A-Za-z0-9_.-]{1,15}");
    private static final long MAC_MASK = 0xFFFF_FFFF_FFFFL;
    /** The group bit (multicast and broadcast) of a MAC's first octet. */
    private static final long GROUP_BIT = 1L << 40;

    /**
     * Parses a NIC name {@code eth:<interface>}.
     *
     * @param nicName the NIC name
     * @return the interface name
     * @throws DetException ENODEV if the name is not {@code eth:} and a valid interface name
     */
    static String parseNicName(final String nicName) {
        final String name = nicName.startsWith(PREFIX) ? nicName.substring(PREFIX.length()) : "";
        if (!INTERFACE.matcher(name).matches()) {
            throw new DetException(Errno.ENODEV, "cannot use " + nicName + ": need eth:<interface>, the interface "
                + "name 1-15 of [A-Za-z0-9_.-]");
        }
        return name;
    }

    /**
     * Parses a peer address: {@code eth:<interface>/<mac>} as {@link EthLink#address()} gives it, {@code eth:<mac>}
     * as {@link #describe} gives it, or a bare MAC.
     *
     * @param address the address
     * @return the peer handle, or -1 if it names no unicast MAC
     */
    static long resolvePeer(final String address) {
        if (address == null) {
            return -1;
        }
        String mac = address.startsWith(PREFIX) ? address.substring(PREFIX.length()) : address;
        final int slash = mac.lastIndexOf('/');
        if (slash >= 0) {
            if (!INTERFACE.matcher(mac.substring(0, slash)).matches()) {
                return -1;
            }
            mac = mac.substring(slash + 1);
        }
        final long value = parseMac(mac);
        return value < 0 || !unicast(value) ? -1 : value;
    }

    /**
     * Parses six colon-separated hex pairs.
     *
     * @param text the MAC text
     * @return the MAC, or -1 if the text is not one
     */
    static long parseMac(final String text) {
        if (text.length() != 17) {
            return -1;
        }
        long value = 0;
        for (int i = 0; i < 6; i++) {
            if (i > 0 && text.charAt(i * 3 - 1) != ':') {
                return -1;
            }
            final int hi = hexDigit(text.charAt(i * 3));
            final int lo = hexDigit(text.charAt(i * 3 + 1));
            if (hi < 0 || lo < 0) {
                return -1;
            }
            value = value << 8 | hi << 4 | lo;
        }
        return value;
    }

    /** An ASCII hex digit's value, or -1 (not {@code Character.digit}, which takes every script's digits). */
    private static int hexDigit(final char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        final char lower = (char) (c | 0x20);
        return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
    }

    /**
     * Whether a MAC can name one station: not zero, not a group (multicast or broadcast) address.
     *
     * @param mac the MAC
     * @return true for a unicast MAC
     */
    static boolean unicast(final long mac) {
        return mac != 0 && (mac & GROUP_BIT) == 0 && (mac & ~MAC_MASK) == 0;
    }

    /**
     * Formats a MAC as six lower-case hex pairs.
     *
     * @param mac the MAC
     * @return the text
     */
    static String formatMac(final long mac) {
        final StringBuilder b = new StringBuilder(17);
        for (int shift = 40; shift >= 0; shift -= 8) {
            if (shift < 40) {
                b.append(':');
            }
            final int octet = (int) (mac >>> shift & 0xFF);
            b.append(Character.forDigit(octet >>> 4, 16)).append(Character.forDigit(octet & 0xF, 16));
        }
        return b.toString();
    }

    /**
     * A peer handle's address, for people and for {@link #resolvePeer}.
     *
     * @param peer the handle
     * @return {@code eth:<mac>}
     */
    static String describe(final long peer) {
        return PREFIX + formatMac(peer);
    }

    /** @return {@code eth:<interface>/<mac>} */
    @Override
    public String toString() {
        return PREFIX + interfaceName + "/" + formatMac(mac);
    }
}
