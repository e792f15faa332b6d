package io.jdet.systest;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link PeerMain} (or another main class) in its own JVM (the same java binary and test class path as this one), optionally run through
 * a prefix such as {@code ip netns exec <ns>}. Its output lines are collected by a reader thread; closing it kills
 * it if it still runs.
 */
final class PeerProcess implements AutoCloseable {
    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuffer all = new StringBuffer();

    PeerProcess(final List<String> prefix, final String... args) throws IOException {
        this(prefix, PeerMain.class, args);
    }

    /** Runs {@code main} (a class of this class path with a main method) instead of {@link PeerMain}. */
    PeerProcess(final List<String> prefix, final Class<?> main, final String... args) throws IOException {
        final List<String> command = new ArrayList<>(prefix);
        command.add(ProcessHandle.current().info().command().orElseThrow());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-XX:+UseSerialGC");
        command.add("-Xmx256m");
        command.add("-cp");
        command.add(classPath());
        command.add(main.getName());
        command.addAll(List.of(args));
        process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Thread.ofPlatform().daemon().name("peer-output").start(() -> {
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

    static String classPath() {
        final String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    /** Waits for an output line starting with {@code prefix} and returns the rest of it. */
    String awaitLine(final String prefix, final long timeoutMs) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            final long left = deadline - System.nanoTime();
            final String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("no '" + prefix + "' from the peer within " + timeoutMs + " ms; its output:\n"
                    + all);
            }
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
    }

    /** Waits for the process to end and returns its exit code. */
    int awaitExit(final long timeoutMs) throws InterruptedException {
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the peer did not end within " + timeoutMs + " ms; its output:\n" + all);
        }
        return process.exitValue();
    }

    /**
     * Closes the process's standard input: a {@link CollectiveMain} member or a {@link PeerMain} server takes it as
     * leave to close (and must get it, or it lingers until its lifetime ends).
     */
    void closeInput() {
        try {
            process.getOutputStream().close();
        } catch (final IOException e) {
            all.append("(cannot close its input: ").append(e).append(")\n");
        }
    }

    void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    String output() {
        return all.toString();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }
}
