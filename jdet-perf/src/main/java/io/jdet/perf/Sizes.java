package io.jdet.perf;

import java.util.Locale;

/** Message sizes as people write them: {@code 8}, {@code 4K}, {@code 64K}, {@code 1M} (binary multiples). */
public final class Sizes {
    /** The largest message the tool accepts: 64 MiB. */
    public static final int MAX = 64 << 20;

    private Sizes() {
    }

    /**
     * Parses one size.
     *
     * @param text for example {@code 4K}
     * @return the size in bytes
     * @throws IllegalArgumentException if it is not a size in [1, {@link #MAX}]
     */
    public static int parse(final String text) {
        final String t = text.trim().toUpperCase(Locale.ROOT);
        if (t.isEmpty()) {
            throw new IllegalArgumentException("empty size");
        }
        long multiplier = 1;
        String digits = t;
        final char last = t.charAt(t.length() - 1);
        if (last == 'K' || last == 'M' || last == 'G') {
            multiplier = last == 'K' ? 1L << 10 : last == 'M' ? 1L << 20 : 1L << 30;
            digits = t.substring(0, t.length() - 1);
        }
        final long value;
        try {
            value = Long.parseLong(digits) * multiplier;
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("not a size: '" + text + "'", e);
        }
        if (value < 1 || value > MAX) {
            throw new IllegalArgumentException("size " + text + " is outside [1, 64M]");
        }
        return (int) value;
    }

    /**
     * Parses a comma-separated list of sizes.
     *
     * @param text for example {@code 8,64,4K}
     * @return the sizes, in the order given
     * @throws IllegalArgumentException if one is not a size
     */
    public static int[] parseList(final String text) {
        final String[] parts = text.split(",");
        final int[] sizes = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            sizes[i] = parse(parts[i]);
        }
        return sizes;
    }

    /**
     * Formats a size the way it is written on the command line when it is a whole multiple.
     *
     * @param size bytes
     * @return for example {@code 64K}
     */
    public static String format(final long size) {
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return size / (1 << 20) + "M";
        }
        if (size >= 1 << 10 && size % (1 << 10) == 0) {
            return size / (1 << 10) + "K";
        }
        return Long.toString(size);
    }
}
