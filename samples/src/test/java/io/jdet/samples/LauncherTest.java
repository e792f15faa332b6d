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

    private static Result launch(final String... args) throws IOException, InterruptedException {
        final Path launcher = root().resolve("jdet");
        final String[] command = new String[args.length + 1];
        command[0] = launcher.toString();
        System.arraycopy(args, 0, command, 1, args.length);
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
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
