package io.jdet.perf.report;

/**
 * A small streaming JSON writer: objects, arrays, strings escaped per RFC 8259, numbers (non-finite ones as
 * {@code null}), with commas and two-space indentation handled here so callers only say what to write.
 */
final class JsonWriter {
    private final StringBuilder out = new StringBuilder();
    /** True while the current container has no element yet. */
    private boolean empty = true;
    /** True right after a member name: its value goes on the same line, without a comma. */
    private boolean afterName;
    private int depth;

    JsonWriter beginObject() {
        element();
        out.append('{');
        depth++;
        empty = true;
        return this;
    }

    JsonWriter endObject() {
        return end('}');
    }

    JsonWriter beginArray() {
        element();
        out.append('[');
        depth++;
        empty = true;
        return this;
    }

    JsonWriter endArray() {
        return end(']');
    }

    JsonWriter name(final String name) {
        element();
        string(name);
        out.append(": ");
        afterName = true;
        return this;
    }

    JsonWriter value(final String value) {
        element();
        if (value == null) {
            out.append("null");
        } else {
            string(value);
        }
        return this;
    }

    JsonWriter value(final long value) {
        element();
        out.append(value);
        return this;
    }

    JsonWriter value(final double value) {
        element();
        out.append(Double.isFinite(value) ? Double.toString(value) : "null");
        return this;
    }

    JsonWriter value(final boolean value) {
        element();
        out.append(value);
        return this;
    }

    JsonWriter field(final String name, final String value) {
        return name(name).value(value);
    }

    JsonWriter field(final String name, final long value) {
        return name(name).value(value);
    }

    JsonWriter field(final String name, final double value) {
        return name(name).value(value);
    }

    JsonWriter field(final String name, final boolean value) {
        return name(name).value(value);
    }

    private void element() {
        if (afterName) {
            afterName = false;
            return;
        }
        if (!empty) {
            out.append(',');
        }
        if (depth > 0) {
            newline();
        }
        empty = false;
    }

    private JsonWriter end(final char bracket) {
        depth--;
        if (!empty) {
            newline();
        }
        out.append(bracket);
        empty = false;
        return this;
    }

    private void newline() {
        out.append('\n').append("  ".repeat(depth));
    }

    private void string(final String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            final char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /**
     * The document, with a final newline.
     *
     * @return the JSON text
     */
    String text() {
        return out + "\n";
    }
}
