package io.jdet.internal.protocol;

/** One receive queue slot. Preallocated and reused. */
public final class RecvWr extends WorkRequest {
    public long id;

    public RecvWr(final int sges) {
        super(sges);
    }
}
