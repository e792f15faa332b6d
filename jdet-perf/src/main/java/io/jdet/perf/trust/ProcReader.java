package io.jdet.perf.trust;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads the machine's load from {@code /proc}: {@code loadavg}, {@code stat} and {@code pressure/cpu}. Where a
 * file is missing or unreadable (not Linux, a kernel without pressure stall information) its fields stay unknown;
 * reading never fails a run.
 */
public final class ProcReader {
    private final Path root;

    /**
     * A reader of a {@code /proc} tree.
     *
     * @param root the tree's root, {@code /proc} for the running system, or a folder with the same files for tests
     */
    public ProcReader(final Path root) {
        this.root = root;
    }

    /**
     * The running system's reader.
     *
     * @return a reader of {@code /proc}
     */
    public static ProcReader system() {
        return new ProcReader(Path.of("/proc"));
    }

    /**
     * Takes a sample now.
     *
     * @return the machine's load, with unknown fields where a file could not be read
     */
    public LoadSample sample() {
        final long now = System.nanoTime();
        return LoadSample.parse(now, read("loadavg"), read("stat"), read("pressure/cpu"));
    }

    private String read(final String name) {
        try {
            return Files.readString(root.resolve(name), StandardCharsets.US_ASCII);
        } catch (final IOException | RuntimeException e) {
            // No such file, or no permission (pressure/cpu is unreadable in some containers): unknown.
            return null;
        }
    }
}
