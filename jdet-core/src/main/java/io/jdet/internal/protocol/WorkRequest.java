package io.jdet.internal.protocol;

/** What every work queue slot has: the data segments of its work request, resolved at post time. */
abstract class WorkRequest {
    final Scatter segments;

    WorkRequest(final int sges) {
        segments = new Scatter(sges);
    }
}
