package io.jdet.internal.engine;

/** One receive queue slot. Preallocated and reused. */
final class RecvWr {
    final Scatter segments;
    long id;

    RecvWr(final int sges) {
        segments = new Scatter(sges);
    }
}
