package io.jdet;

/** The element type of a reduction: 8-byte elements in native byte order (a jdet extension). */
public enum ReduceType {
    /** Signed 64-bit integers ({@code long}). */
    INT64,
    /**
     * IEEE 754 doubles; the bitwise operations are refused. A NaN result is Java's canonical {@link Double#NaN}
     * whatever the NaNs reduced, so every member of an all-reduce holds the same bits.
     */
    FLOAT64
}
