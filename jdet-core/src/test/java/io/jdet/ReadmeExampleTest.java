package io.jdet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The README's examples and the package documentation's keep compiling against the library and run to their end. */
@Timeout(60)
class ReadmeExampleTest {
    private static final String CLASS_NAME = "ReadmeExample";

    @Test
    void shouldCompileAndRunWhenReadmeExampleIsExtracted(@TempDir final Path work) throws Exception {
        final Method main = compile(work, CLASS_NAME, javaBlocks(readme()).get(0));
        final Thread runner = run(main, failure);
        runner.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(runner.isAlive(), "the README example did not finish within 30 s");
        rethrow("the README example");
    }

    /**
     * The README's connection manager example, server and client, compiled as written and run against each other
     * over UDP. Only the server's port is changed, to a free one, so the test cannot collide with a real 7000.
     */
    @Test
    void shouldConnectAndWriteWhenReadmeConnectionManagerExampleRuns(@TempDir final Path work) throws Exception {
        final List<String> blocks = javaBlocks(readme());
        final String server = blocks.stream().filter(b -> b.startsWith("// server")).findFirst().orElseThrow();
        final String client = blocks.stream().filter(b -> b.startsWith("// client")).findFirst().orElseThrow();
        final String port;
        try (DatagramSocket probe = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            port = Integer.toString(probe.getLocalPort());
        }
        final Method serverMain = compile(work.resolve("server"), "ReadmeServer",
            server.replace("udp:127.0.0.1:7000", "udp:127.0.0.1:" + port));
        final Method clientMain = compile(work.resolve("client"), "ReadmeClient",
            client.replace("udp:127.0.0.1:7000", "udp:127.0.0.1:" + port));
        final Thread serverThread = run(serverMain, failure);
        final AtomicReference<Throwable> clientFailure = new AtomicReference<>();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) { // the server may not listen yet: a refusal for want of a listener is retried
            clientFailure.set(null);
            final Thread clientThread = run(clientMain, clientFailure);
            clientThread.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(clientThread.isAlive(), "the README client did not finish within 30 s");
            final boolean notYet = clientFailure.get() instanceof ConnectionRejectedException e
                && e.reason() == ConnectionRejectedException.Reason.NO_LISTENER;
            if (!notYet || System.nanoTime() - deadline > 0 || failure.get() != null) {
                break;
            }
        }
        if (clientFailure.get() != null) {
            throw new AssertionError("the README client failed", clientFailure.get());
        }
        serverThread.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(serverThread.isAlive(), "the README server did not finish within 30 s");
        rethrow("the README server");
    }

    /** The worked example of the {@code io.jdet} package documentation, compiled and run the same way. */
    @Test
    void shouldCompileAndRunThePackageDocumentationExample(@TempDir final Path work) throws Exception {
        final String doc = Files.readString(findRoot().resolve("jdet-core/src/main/java/io/jdet/package-info.java"),
            StandardCharsets.UTF_8);
        final int start = doc.indexOf("<pre>{@code\n");
        final int end = doc.indexOf("}</pre>", start);
        assertTrue(start >= 0 && end > start, "package-info.java has no <pre>{@code ...}</pre> example");
        final StringBuilder example = new StringBuilder("import io.jdet.*;\nimport java.lang.foreign.*;\n");
        for (final String line : doc.substring(start + 12, end).split("\n")) {
            example.append(line.replaceFirst("^ \\* ?", "")).append('\n');
        }
        final Method main = compile(work, "PackageExample", example.toString());
        final Thread runner = run(main, failure);
        runner.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(runner.isAlive(), "the package example did not finish within 30 s");
        rethrow("the package example");
    }

    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private void rethrow(final String what) {
        if (failure.get() != null) {
            throw new AssertionError(what + " failed", failure.get());
        }
    }

    /** Wraps, compiles and loads an example; returns its main method. */
    private static Method compile(final Path work, final String className, final String example) throws Exception {
        final Path source = Files.createDirectories(work).resolve(className + ".java");
        Files.writeString(source, wrap(className, example), StandardCharsets.UTF_8);
        final Path classes = Files.createDirectories(work.resolve("classes"));
        compile(source, classes);
        @SuppressWarnings("resource") // stays open while the example runs; the JVM reclaims it
        final URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
            ReadmeExampleTest.class.getClassLoader());
        return loader.loadClass(className).getMethod("main", String[].class);
    }

    /**
     * Runs a main method on a daemon thread of its own: the examples poll in loops that no interrupt stops, so a
     * hang must not take the test JVM with it.
     */
    private static Thread run(final Method main, final AtomicReference<Throwable> failure) {
        return Thread.ofPlatform().daemon().name("readme-example").start(() -> {
            try {
                main.invoke(null, (Object) new String[0]);
            } catch (final InvocationTargetException e) {
                failure.set(e.getCause());
            } catch (final ReflectiveOperationException e) {
                failure.set(e);
            }
        });
    }

    private static String readme() throws IOException {
        return Files.readString(findRoot().resolve("README.md"), StandardCharsets.UTF_8);
    }

    /** The repository root is the nearest directory above the working directory with both a pom and the README. */
    private static Path findRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            final Path readme = dir.resolve("README.md");
            if (Files.isRegularFile(readme) && Files.isRegularFile(dir.resolve("pom.xml"))
                && Files.isDirectory(dir.resolve("jdet-core"))) {
                return dir;
            }
        }
        return fail("README.md not found above " + Path.of("").toAbsolutePath());
    }

    /** Every ```java block of the README, in order. */
    private static List<String> javaBlocks(final String readme) {
        final List<String> blocks = new ArrayList<>();
        for (int start = readme.indexOf("```java\n"); start >= 0; start = readme.indexOf("```java\n", start + 1)) {
            final int end = readme.indexOf("\n```", start + 8);
            assertTrue(end > start, "a ```java block of the README is not closed");
            blocks.add(readme.substring(start + 8, end + 1));
        }
        assertFalse(blocks.isEmpty(), "the README has no ```java block");
        return blocks;
    }

    /** Moves the imports to the top and puts the rest in a main method. */
    private static String wrap(final String className, final String example) {
        final StringBuilder imports = new StringBuilder();
        final StringBuilder body = new StringBuilder();
        for (final String line : example.split("\n", -1)) {
            if (line.startsWith("import ")) {
                imports.append(line).append('\n');
            } else {
                body.append("        ").append(line).append('\n');
            }
        }
        return imports + "\npublic class " + className + " {\n"
            + "    public static void main(String[] args) throws Exception {\n" + body + "    }\n}\n";
    }

    /**
     * Compiles with the JDK's javac through {@code java.util.spi.ToolProvider}: the same compiler as
     * {@code javax.tools}, reachable from the {@code io.jdet} module that the tests are compiled into without
     * making it read {@code java.compiler}.
     */
    private static void compile(final Path source, final Path classes) throws IOException {
        final ToolProvider javac = ToolProvider.findFirst("javac").orElse(null);
        assertNotNull(javac, "no javac: run the tests on a JDK");
        final StringWriter out = new StringWriter();
        try (PrintWriter writer = new PrintWriter(out)) {
            final int status = javac.run(writer, writer, "-classpath", libraryClasses().toString(), "-d",
                classes.toString(), "-proc:none", "-Xlint:all", "-Werror", source.toString());
            writer.flush();
            if (status != 0) {
                fail("the README example does not compile:\n" + out + "\n" + Files.readString(source));
            }
        }
    }

    /** Where the library's classes are: {@code target/classes} under Maven, or a jar. */
    private static Path libraryClasses() {
        try {
            return Path.of(Det.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (final java.net.URISyntaxException e) {
            throw new AssertionError(e);
        }
    }
}
