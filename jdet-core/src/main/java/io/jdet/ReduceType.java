package io.jdet;

/** The element type of a reduction: 8-byte elements in native byte order (a jdet extension). */
public enum ReduceType {
    /** Signed 64-bit integers ({@code long}). */
    INT64,
    /**
     * IEEE 754 doubles; the bitwise operations are refused. A NaN that two elements combine into is Java's canonical
     * {@link Double#NaN} whatever the NaNs combined, so every member of an all-reduce holds the same bits (a value
     * only copied, as in a group of one, keeps its own).
     */
    FLOAT64
}
