package io.jdet.perf;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Checks the files a run will write ({@code --json}, {@code --plot}) before it starts, so that a two-minute run
 * does not end in "cannot write".
 */
final class OutputFiles {
    private OutputFiles() {
    }

    /**
     * Checks that a file can be written: its folder exists and is writable, and the file, if it exists, is a
     * writable regular file.
     *
     * @param option the option that names it, for the message
     * @param file   the file, or null for none
     * @throws IllegalArgumentException with the reason, if it cannot be written
     */
    static void check(final String option, final Path file) {
        if (file == null) {
            return;
        }
        final Path absolute = file.toAbsolutePath();
        final Path folder = absolute.getParent();
        if (Files.isDirectory(absolute)) {
            throw new IllegalArgumentException(option + " " + file + " is a folder, not a file");
        }
        if (folder == null || !Files.isDirectory(folder)) {
            throw new IllegalArgumentException(option + " " + file + ": no folder " + folder);
        }
        if (Files.exists(absolute)) {
            if (!Files.isRegularFile(absolute) || !Files.isWritable(absolute)) {
                throw new IllegalArgumentException(option + " " + file + " exists and cannot be written");
            }
        } else if (!Files.isWritable(folder)) {
            throw new IllegalArgumentException(option + " " + file + ": cannot create files in " + folder);
        }
    }

    /**
     * Checks both outputs of a run, and that they are not one file.
     *
     * @param json the JSON report's file, or null
     * @param plot the plot's file, or null
     * @throws IllegalArgumentException with the reason, if one cannot be written
     */
    static void check(final Path json, final Path plot) {
        check("--json", json);
        check("--plot", plot);
        if (json != null && plot != null && json.toAbsolutePath().normalize().equals(plot.toAbsolutePath().normalize())) {
            throw new IllegalArgumentException("--json and --plot name the same file " + json);
        }
    }
}
