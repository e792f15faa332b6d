package io.jdet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.spi.ToolProvider;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The README's usage example must keep compiling against the library and must run to its end. */
@Timeout(60)
class ReadmeExampleTest {
    private static final String CLASS_NAME = "ReadmeExample";

    @Test
    void shouldCompileAndRunWhenReadmeExampleIsExtracted(@TempDir final Path work) throws Exception {
        final String example = extractJavaBlock(Files.readString(findReadme(), StandardCharsets.UTF_8));
        final Path source = work.resolve(CLASS_NAME + ".java");
        Files.writeString(source, wrap(example), StandardCharsets.UTF_8);
        final Path classes = Files.createDirectories(work.resolve("classes"));
        compile(source, classes);

        final AtomicReference<Throwable> failure = new AtomicReference<>();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
            ReadmeExampleTest.class.getClassLoader())) {
            final Method main = loader.loadClass(CLASS_NAME).getMethod("main", String[].class);
            // A thread of its own: the example polls in a loop that no interrupt stops, so a hang must not take
            // the test JVM with it.
            final Thread runner = Thread.ofPlatform().daemon().name("readme-example").start(() -> {
                try {
                    main.invoke(null, (Object) new String[0]);
                } catch (final InvocationTargetException e) {
                    failure.set(e.getCause());
                } catch (final ReflectiveOperationException e) {
                    failure.set(e);
                }
            });
            runner.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(runner.isAlive(), "the README example did not finish within 30 s");
        }
        if (failure.get() != null) {
            throw new AssertionError("the README example failed", failure.get());
        }
    }

    /** The repository root is the nearest directory above the working directory with both a pom and the README. */
    private static Path findReadme() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            final Path readme = dir.resolve("README.md");
            if (Files.isRegularFile(readme) && Files.isRegularFile(dir.resolve("pom.xml"))
                && Files.isDirectory(dir.resolve("jdet-core"))) {
                return readme;
            }
        }
        return fail("README.md not found above " + Path.of("").toAbsolutePath());
    }

    private static String extractJavaBlock(final String readme) {
        final int start = readme.indexOf("```java\n");
        assertTrue(start >= 0, "the README has no ```java block");
        final int end = readme.indexOf("\n```", start + 8);
        assertTrue(end > start, "the README's ```java block is not closed");
        return readme.substring(start + 8, end + 1);
    }

    /** Moves the imports to the top and puts the rest in a main method. */
    private static String wrap(final String example) {
        final StringBuilder imports = new StringBuilder();
        final StringBuilder body = new StringBuilder();
        for (final String line : example.split("\n", -1)) {
            if (line.startsWith("import ")) {
                imports.append(line).append('\n');
            } else {
                body.append("        ").append(line).append('\n');
            }
        }
        return imports + "\npublic class " + CLASS_NAME + " {\n"
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
