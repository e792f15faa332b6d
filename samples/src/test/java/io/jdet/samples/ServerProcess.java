package io.jdet.samples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A sample's server end in a JVM of its own, as a user starts it, with its output collected. */
final class ServerProcess implements AutoCloseable {
    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuffer all = new StringBuffer();
    private final Thread reader;

    ServerProcess(final Class<?> main, final String... args) throws IOException {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED", "-cp", classPath(), main.getName()));
        command.addAll(List.of(args));
        process = new ProcessBuilder(command).redirectErrorStream(true).start();
        reader = Thread.ofPlatform().daemon().name("sample-server-output").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    all.append(line).append('\n');
                    lines.add(line);
                }
            } catch (final IOException e) {
                all.append("(output lost: ").append(e).append(")\n");
            }
        });
    }

    private static String classPath() {
        final String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /** Waits for the server's {@code listening on <address>} line and returns the address. */
    String awaitAddress() throws InterruptedException {
        final String prefix = "listening on ";
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            final long left = deadline - System.nanoTime();
            final String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("the server printed no address within 20 s; its output:\n" + all);
            }
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
    }

    /** Waits for the server to end and returns its whole output, failing unless it exited with 0. */
    String awaitSuccess() throws InterruptedException {
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            throw new AssertionError("the server did not end within 20 s; its output:\n" + all);
        }
        reader.join(TimeUnit.SECONDS.toMillis(5));
        if (process.exitValue() != 0) {
            throw new AssertionError("the server exited with " + process.exitValue() + "; its output:\n" + all);
        }
        return all.toString();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
