package io.jdet.samples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The {@code ./jdet} launcher's usage: what a new user types first. These paths run no JVM and no build. */
@Timeout(60)
class LauncherTest {

    private record Result(int exit, String output) {
    }

    @Test
    void shouldPrintUsageAndFailWhenGivenNoCommand() throws Exception {
        final Result r = launch();
        assertEquals(2, r.exit());
        assertTrue(r.output().startsWith("usage: ./jdet <command>"), r.output());
    }

    @Test
    void shouldPrintUsageAndSucceedWhenAskedForHelp() throws Exception {
        for (final String help : new String[] {"--help", "-h", "help"}) {
            final Result r = launch(help);
            assertEquals(0, r.exit(), help);
            assertTrue(r.output().contains("perf [options]") && r.output().contains("test [maven args]"), r.output());
        }
    }

    @Test
    void shouldNameTheUnknownCommand() throws Exception {
        final Result r = launch("prf");
        assertEquals(2, r.exit());
        assertTrue(r.output().startsWith("jdet: unknown command 'prf'\nusage: ./jdet"), r.output());
    }

    @Test
    void shouldAcceptEveryCommandItsUsageLists() throws Exception {
        // The launcher refuses unknown commands before it looks for a JDK: a command the usage lists but that list
        // leaves out is refused too (./jdet stat was). JDET_CHECK_ONLY stops right after that check.
        final String usage = launch("--help").output();
        final String commands = usage.substring(usage.indexOf("commands:\n") + "commands:\n".length(),
            usage.indexOf("\n\n", usage.indexOf("commands:")));
        int checked = 0;
        for (final String line : commands.split("\n")) {
            final String command = line.trim().split(" ")[0];
            if (command.equals("help")) {
                continue;
            }
            assertEquals(0, launchChecking(command).exit(), "./jdet " + command + " is refused");
            checked++;
        }
        assertTrue(checked >= 8, checked + " commands in: " + commands);
        assertEquals(2, launchChecking("prf").exit());
    }

    @Test
    void shouldRunMavenWithTheJdkItFound() throws Exception {
        final Result r = launch("mvn", "-v");
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("Java version: 25"), r.output());
    }

    private static Result launchChecking(final String command) throws IOException, InterruptedException {
        return run(java.util.Map.of("JDET_CHECK_ONLY", "1"), command);
    }

    private static Result launch(final String... args) throws IOException, InterruptedException {
        return run(java.util.Map.of(), args);
    }

    private static Result run(final java.util.Map<String, String> env, final String... args)
        throws IOException, InterruptedException {
        final Path launcher = root().resolve("jdet");
        final String[] command = new String[args.length + 1];
        command[0] = launcher.toString();
        System.arraycopy(args, 0, command, 1, args.length);
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(env);
        final Process p = builder.start();
        final byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("./jdet did not end within 30 s");
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    private static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("jdet")) && Files.isRegularFile(dir.resolve("mvnw"))) {
                return dir;
            }
        }
        return fail("the jdet launcher not found above " + Path.of("").toAbsolutePath());
    }
}
