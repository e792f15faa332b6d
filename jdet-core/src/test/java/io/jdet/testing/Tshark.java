package io.jdet.testing;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs {@code tshark} with jdet's Lua dissector ({@code tools/wireshark/jdet.lua}) over a capture. Tests that
 * need it call {@link #require()}: where tshark is missing it is installed in CI (environment {@code CI=true},
 * as root, from Debian's packages, bounded in time); elsewhere the test is skipped with the reason.
 */
public final class Tshark {
    private static final long RUN_SECONDS = 60;
    private static final long INSTALL_SECONDS = 300;
    private static String executable;
    private static String missing;

    private Tshark() {
    }

    /**
     * Skips the calling test unless tshark can be had.
     *
     * @return the tshark executable
     */
    public static synchronized String require() {
        if (executable == null && missing == null) {
            executable = find();
            if (executable == null && "true".equals(System.getenv("CI")) && "root".equals(System.getProperty("user.name"))) {
                install();
                executable = find();
            }
            if (executable == null) {
                missing = "tshark not found on the PATH (install it with: apt-get install -y tshark); "
                    + "skipping the dissector checks";
            }
        }
        Assumptions.assumeTrue(executable != null, missing);
        return executable;
    }

    private static String find() {
        final String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (final String dir : (path + ":/usr/bin:/usr/sbin").split(":")) {
            final Path candidate = Path.of(dir.isEmpty() ? "." : dir, "tshark");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return null;
    }

    private static void install() {
        try {
            final ProcessBuilder pb = new ProcessBuilder("bash", "-c",
                "apt-get install -y tshark || (apt-get update && apt-get install -y tshark)");
            pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
            pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
            final Process p = pb.start();
            if (!p.waitFor(INSTALL_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (final IOException e) {
            // not installable here: the test is skipped with the reason
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The dissector script, found from the working directory up.
     *
     * @return its path
     */
    public static Path dissector() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            final Path script = dir.resolve("tools/wireshark/jdet.lua");
            if (Files.isRegularFile(script)) {
                return script;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("tools/wireshark/jdet.lua not found above " + Path.of("").toAbsolutePath());
    }

    /**
     * Runs tshark over a capture with the dissector loaded; fails the test if tshark fails or reports a Lua error.
     *
     * @param capture the capture file
     * @param args    further arguments (filters, fields)
     * @return the lines tshark printed
     */
    public static List<String> run(final Path capture, final String... args) {
        final List<String> command = new ArrayList<>(List.of(require(), "-n", "-X",
            "lua_script:" + dissector(), "-r", capture.toString()));
        command.addAll(List.of(args));
        try {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            final byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(RUN_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("tshark took longer than " + RUN_SECONDS + " s");
            }
            final String text = new String(out, StandardCharsets.UTF_8);
            final List<String> lines = new ArrayList<>();
            for (final String line : text.split("\n")) {
                if (line.startsWith("Running as user \"root\"")) {
                    continue; // tshark's warning when run as root, as in containers
                }
                if (line.contains("Lua Error") || line.contains("Lua: Error") || line.contains("[string")) {
                    fail("the dissector raised an error: " + line + "\n" + text);
                }
                if (!line.isEmpty()) {
                    lines.add(line);
                }
            }
            assertEquals(0, p.exitValue(), "tshark " + command + " failed:\n" + text);
            return lines;
        } catch (final IOException e) {
            throw new IllegalStateException("cannot run tshark", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
