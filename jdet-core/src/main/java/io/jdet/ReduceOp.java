package io.jdet;

/** How {@link Collective#allreduce} and {@link Collective#reduce} combine the members' elements (a jdet extension). */
public enum ReduceOp {
    /** The sum (64-bit integers wrap). */
    SUM,
    /** The smallest. */
    MIN,
    /** The largest. */
    MAX,
    /** Bitwise AND, 64-bit integers only. */
    BAND,
    /** Bitwise OR, 64-bit integers only. */
    BOR,
    /** Bitwise exclusive OR, 64-bit integers only. */
    BXOR
}
