package io.jdet.internal;

import io.jdet.internal.verbs.NicImpl;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine's packages import one way only (each package-info says what it may use): every compiled class of
 * {@code io.jdet.internal} is read with the class-file API, and each class its constant pool names in another
 * internal package must come from a package below its own.
 */
class LayeringTest {
    /** Each internal package and the internal packages it may use; any other internal package is an error. */
    private static final Map<String, Set<String>> MAY_USE = Map.of(
        "wire", Set.of(),
        "observe", Set.of(),
        "link", Set.of("wire"),
        "protocol", Set.of("wire", "link", "observe"),
        "verbs", Set.of("protocol", "wire", "link", "observe"),
        "cm", Set.of("verbs", "protocol", "wire", "link", "observe"),
        "collective", Set.of("verbs", "protocol", "wire", "link", "observe"));

    private static final String PREFIX = "io/jdet/internal/";

    @Test
    void importsRunOneWay() throws IOException, URISyntaxException {
        final Path classes = Path.of(NicImpl.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        final Path root = classes.resolve(PREFIX);
        final List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(p -> p.toString().endsWith(".class")).toList();
        }
        assertTrue(files.size() > 50, "found only " + files.size() + " classes under " + root);
        final Set<String> backArrows = new TreeSet<>();
        final Set<String> seen = new TreeSet<>();
        for (final Path file : files) {
            final String from = layer(root.relativize(file).toString().replace('\\', '/'));
            seen.add(from);
            final Set<String> allowed = MAY_USE.get(from);
            if (allowed == null) {
                backArrows.add(file + ": package " + from + " has no place in the layering");
                continue;
            }
            for (final String target : referencedInternalClasses(file)) {
                final String to = layer(target.substring(PREFIX.length()));
                if (!to.equals(from) && !allowed.contains(to)) {
                    backArrows.add(from + " -> " + to + ": " + file.getFileName() + " uses " + target);
                }
            }
        }
        assertEquals(MAY_USE.keySet(), seen, "every layer has classes, and no other package exists");
        assertEquals(new ArrayList<>(), new ArrayList<>(backArrows), "imports that run back up");
    }

    private static String layer(final String relative) {
        final int slash = relative.indexOf('/');
        return slash < 0 ? "" : relative.substring(0, slash);
    }

    private static List<String> referencedInternalClasses(final Path file) throws IOException {
        final List<String> out = new ArrayList<>();
        for (final PoolEntry e : ClassFile.of().parse(file).constantPool()) {
            if (e instanceof ClassEntry c) {
                String name = c.asInternalName();
                while (name.startsWith("[")) {
                    name = name.substring(1);
                }
                if (name.startsWith("L")) {
                    name = name.substring(1, name.length() - 1);
                }
                if (name.startsWith(PREFIX)) {
                    out.add(name);
                }
            }
        }
        return out;
    }
}
