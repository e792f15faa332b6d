package io.jdet.internal.protocol;

/** One receive queue slot. Preallocated and reused. */
final class RecvWr extends WorkRequest {
    long id;

    RecvWr(final int sges) {
        super(sges);
    }
}
