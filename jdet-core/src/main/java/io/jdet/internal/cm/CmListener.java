package io.jdet.internal.cm;

import io.jdet.ConnectionListener;
import io.jdet.ConnectionRequest;
import io.jdet.DetException;
import io.jdet.Errno;

import java.util.ArrayDeque;

/** A listened service id: requests queue here until the application takes them. Guarded by the engine lock. */
final class CmListener implements ConnectionListener {
    /** Requests queued beyond this are rejected as if nobody listened. */
    static final int BACKLOG = 256;

    private final CmImpl cm;
    private final int serviceId;
    final ArrayDeque<CmRequest> queue = new ArrayDeque<>();
    boolean closed;

    CmListener(final CmImpl cm, final int serviceId) {
        this.cm = cm;
        this.serviceId = serviceId;
    }

    @Override
    public int serviceId() {
        return serviceId;
    }

    @Override
    public ConnectionRequest take(final long timeoutMs) {
        if (timeoutMs < 0) {
            throw new DetException(Errno.EINVAL, "negative timeout");
        }
        return cm.take(this, timeoutMs);
    }

    @Override
    public void close() {
        cm.unlisten(this);
    }

    @Override
    public String toString() {
        return "ConnectionListener[service " + serviceId + "]";
    }
}
