package io.jdet.perf;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One message of the side channel: a verb and named text fields.
 *
 * @param verb   what it is ({@code HELLO}, {@code TEST}, {@code INFO}, {@code BARRIER}, {@code ERROR}, ...)
 * @param fields its fields, in order
 */
public record Message(String verb, Map<String, String> fields) {

    /**
     * Copies the fields.
     */
    public Message {
        fields = Map.copyOf(fields);
    }

    /**
     * Starts a message.
     *
     * @param verb what it is
     * @return a builder
     */
    public static Builder of(final String verb) {
        return new Builder(verb);
    }

    /**
     * A text field.
     *
     * @param key its name
     * @return the value
     * @throws PerfException if the peer did not send it
     */
    public String text(final String key) {
        final String value = fields.get(key);
        if (value == null) {
            throw new PerfException("side channel: " + verb + " without " + key);
        }
        return value;
    }

    /**
     * A number field.
     *
     * @param key its name
     * @return the value
     * @throws PerfException if missing or not a number
     */
    public long number(final String key) {
        try {
            return Long.parseLong(text(key));
        } catch (final NumberFormatException e) {
            throw new PerfException("side channel: " + verb + "." + key + " is not a number", e);
        }
    }

    /**
     * A decimal field.
     *
     * @param key its name
     * @return the value
     * @throws PerfException if missing or not a number
     */
    public double decimal(final String key) {
        try {
            return Double.parseDouble(text(key));
        } catch (final NumberFormatException e) {
            throw new PerfException("side channel: " + verb + "." + key + " is not a number", e);
        }
    }

    /** Builds a message field by field. */
    public static final class Builder {
        private final String verb;
        private final Map<String, String> fields = new LinkedHashMap<>();

        private Builder(final String verb) {
            this.verb = verb;
        }

        /**
         * Adds a field.
         *
         * @param key   its name
         * @param value its value, as text
         * @return this
         */
        public Builder with(final String key, final Object value) {
            fields.put(key, String.valueOf(value));
            return this;
        }

        /**
         * Adds fields.
         *
         * @param more names to values
         * @return this
         */
        public Builder with(final Map<String, ?> more) {
            more.forEach(this::with);
            return this;
        }

        /**
         * The message.
         *
         * @return it
         */
        public Message build() {
            return new Message(verb, fields);
        }
    }
}
