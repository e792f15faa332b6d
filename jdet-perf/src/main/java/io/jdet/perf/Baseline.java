package io.jdet.perf;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The baselines {@code --baselines} selects, measured beside jdet at the same sizes in the same run: plain Java
 * UDP and TCP sockets, and Aeron (UDP, or IPC when jdet runs on the in-process fabric) with an embedded media
 * driver.
 */
public enum Baseline {
    /** {@code DatagramChannel} ping-pong and credit-windowed stream. */
    UDP,
    /** {@code SocketChannel} (TCP_NODELAY) ping-pong and stream. */
    TCP,
    /** Aeron publications and subscriptions through an embedded media driver. */
    AERON;

    /** What runs without {@code --baselines}: UDP and TCP (Aeron adds a third of the run's time; see README). */
    public static final Set<Baseline> DEFAULT = Set.copyOf(EnumSet.of(UDP, TCP));

    /**
     * The name on the command line.
     *
     * @return for example {@code aeron}
     */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a comma-separated list: {@code udp,tcp,aeron}, or {@code none} for no baseline.
     *
     * @param text the list
     * @return the baselines named, without repeats
     * @throws IllegalArgumentException for an unknown name, an empty list, or {@code none} beside a name
     */
    public static Set<Baseline> parseList(final String text) {
        final EnumSet<Baseline> chosen = EnumSet.noneOf(Baseline.class);
        boolean none = false;
        for (final String part : text.split(",", -1)) {
            final String name = part.trim().toLowerCase(Locale.ROOT);
            if (name.equals("none")) {
                none = true;
                continue;
            }
            final Baseline baseline = of(name);
            if (!chosen.add(baseline)) {
                throw new IllegalArgumentException("--baselines names " + name + " twice");
            }
        }
        if (none && !chosen.isEmpty()) {
            throw new IllegalArgumentException("--baselines none excludes naming a baseline");
        }
        return Set.copyOf(chosen);
    }

    private static Baseline of(final String name) {
        for (final Baseline b : values()) {
            if (b.label().equals(name)) {
                return b;
            }
        }
        throw new IllegalArgumentException("unknown baseline '" + name + "': udp, tcp, aeron or none");
    }

    /**
     * Formats a set the way {@link #parseList} reads it, in declaration order.
     *
     * @param baselines the set
     * @return for example {@code udp,tcp}, or {@code none}
     */
    public static String format(final Set<Baseline> baselines) {
        final StringBuilder text = new StringBuilder();
        for (final Baseline b : values()) {
            if (baselines.contains(b)) {
                text.append(text.isEmpty() ? "" : ",").append(b.label());
            }
        }
        return text.isEmpty() ? "none" : text.toString();
    }
}
