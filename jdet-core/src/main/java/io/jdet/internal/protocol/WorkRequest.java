package io.jdet.internal.protocol;

/** What every work queue slot has: the data segments of its work request, resolved at post time. */
public abstract class WorkRequest {
    public final Scatter segments;

    public WorkRequest(final int sges) {
        segments = new Scatter(sges);
    }
}
