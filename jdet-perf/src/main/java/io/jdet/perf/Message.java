package io.jdet.perf;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One message of the side channel: a verb and named scalar fields (text, whole numbers, decimals, booleans). On
 * the wire it is one JSON object, {@code {"verb": "TEST", "fields": {"kind": "lat-send", "size": 64, ...}}}.
 *
 * @param verb   what it is ({@code HELLO}, {@code TEST}, {@code INFO}, {@code BARRIER}, {@code ERROR}, ...)
 * @param fields its fields, in order: each a {@link String}, {@link Long}, {@link Double} or {@link Boolean}
 */
public record Message(String verb, Map<String, Object> fields) {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * Copies the fields, keeping their order.
     *
     * @throws IllegalArgumentException if a value is not a String, Long, Double or Boolean
     */
    public Message {
        final Map<String, Object> copy = new LinkedHashMap<>();
        fields.forEach((key, value) -> {
            if (!(value instanceof String || value instanceof Long || value instanceof Double
                || value instanceof Boolean)) {
                throw new IllegalArgumentException("side channel: " + verb + "." + key + " is a "
                    + (value == null ? "null" : value.getClass().getSimpleName()));
            }
            copy.put(key, value);
        });
        fields = Collections.unmodifiableMap(copy);
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
     * @throws PerfException if the peer did not send it, or sent something else than text
     */
    public String text(final String key) {
        if (!(need(key) instanceof String value)) {
            throw new PerfException("side channel: " + verb + "." + key + " is not text");
        }
        return value;
    }

    /**
     * A whole-number field.
     *
     * @param key its name
     * @return the value
     * @throws PerfException if missing or not a whole number
     */
    public long number(final String key) {
        if (!(need(key) instanceof Long value)) {
            throw new PerfException("side channel: " + verb + "." + key + " is not a whole number");
        }
        return value;
    }

    /**
     * A decimal field (a whole number is one too).
     *
     * @param key its name
     * @return the value
     * @throws PerfException if missing or not a number
     */
    public double decimal(final String key) {
        return switch (need(key)) {
            case Double value -> value;
            case Long value -> value;
            default -> throw new PerfException("side channel: " + verb + "." + key + " is not a number");
        };
    }

    /**
     * A boolean field.
     *
     * @param key its name
     * @return the value
     * @throws PerfException if missing or not a boolean
     */
    public boolean flag(final String key) {
        if (!(need(key) instanceof Boolean value)) {
            throw new PerfException("side channel: " + verb + "." + key + " is not true or false");
        }
        return value;
    }

    /**
     * Every field as text, for records that read their fields from text.
     *
     * @return key to the value's text
     */
    public Map<String, String> texts() {
        final Map<String, String> texts = new LinkedHashMap<>();
        fields.forEach((key, value) -> texts.put(key, String.valueOf(value)));
        return texts;
    }

    private Object need(final String key) {
        final Object value = fields.get(key);
        if (value == null) {
            throw new PerfException("side channel: " + verb + " without " + key);
        }
        return value;
    }

    /**
     * The message as one line of JSON (no line break inside).
     *
     * @return UTF-8 JSON
     */
    byte[] toJson() {
        final ObjectNode root = MAPPER.createObjectNode().put("verb", verb);
        final ObjectNode object = root.putObject("fields");
        fields.forEach((key, value) -> {
            switch (value) {
                case String text -> object.put(key, text);
                case Long number -> object.put(key, number);
                case Double number -> object.put(key, number);
                case Boolean flag -> object.put(key, flag);
                default -> throw new IllegalStateException("checked in the constructor");
            }
        });
        try {
            return MAPPER.writeValueAsBytes(root);
        } catch (final JsonProcessingException e) {
            throw new IllegalStateException("a tree of scalars always serializes", e);
        }
    }

    /**
     * Reads a message the peer sent.
     *
     * @param json UTF-8 JSON, as {@link #toJson()} writes it
     * @return the message
     * @throws PerfException if it is not such a JSON object
     */
    static Message fromJson(final byte[] json) {
        final JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (final JsonProcessingException e) {
            throw new PerfException("side channel: the peer sent malformed JSON: " + e.getOriginalMessage(), e);
        } catch (final java.io.IOException e) {
            throw new PerfException("side channel: the peer sent malformed JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject() || !root.path("verb").isTextual() || !root.path("fields").isObject()) {
            throw new PerfException("side channel: the peer sent a message without a verb and fields");
        }
        final String verb = root.get("verb").asText();
        final Map<String, Object> fields = new LinkedHashMap<>();
        root.get("fields").properties().forEach(field -> {
            final JsonNode value = field.getValue();
            if (value.isTextual()) {
                fields.put(field.getKey(), value.asText());
            } else if (value.isIntegralNumber() && value.canConvertToLong()) {
                fields.put(field.getKey(), value.asLong());
            } else if (value.isFloatingPointNumber()) {
                fields.put(field.getKey(), value.asDouble());
            } else if (value.isBoolean()) {
                fields.put(field.getKey(), value.asBoolean());
            } else {
                throw new PerfException("side channel: " + verb + "." + field.getKey() + " is not a scalar");
            }
        });
        return new Message(verb, fields);
    }

    /** Builds a message field by field. */
    public static final class Builder {
        private final String verb;
        private final Map<String, Object> fields = new LinkedHashMap<>();

        private Builder(final String verb) {
            this.verb = verb;
        }

        /**
         * Adds a field: whole numbers become {@link Long}, other numbers {@link Double}, booleans stay, anything
         * else becomes its text.
         *
         * @param key   its name
         * @param value its value
         * @return this
         */
        public Builder with(final String key, final Object value) {
            fields.put(key, switch (value) {
                case Long n -> n;
                case Integer n -> (long) n;
                case Short n -> (long) n;
                case Byte n -> (long) n;
                case Double n -> n;
                case Float n -> (double) n;
                case Boolean b -> b;
                case null -> throw new IllegalArgumentException("side channel: " + verb + "." + key + " is null");
                default -> String.valueOf(value);
            });
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
