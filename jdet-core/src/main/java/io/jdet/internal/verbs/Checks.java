package io.jdet.internal.verbs;

import io.jdet.CompletionQueue;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.MemoryWindow;
import io.jdet.ProtectionDomain;

/** Casts API objects to their implementations, rejecting foreign implementations with a clear message. */
final class Checks {
    private Checks() {
    }

    /**
     * An event queue of the given device: one of another device is refused, since the two devices lock, count
     * and close their objects apart (the other device's close would close the queue under this one's NIC).
     *
     * @throws DetException EINVAL for an event queue of another device
     */
    static EventQueueImpl event(final EventQueue q, final DeviceImpl device) {
        if (q instanceof EventQueueImpl impl) {
            if (impl.device() != device) {
                throw new DetException(Errno.EINVAL, "an event queue of another device");
            }
            return impl;
        }
        throw new IllegalArgumentException("not a jdet event queue: " + q);
    }

    static PdImpl pd(final ProtectionDomain pd) {
        if (pd instanceof PdImpl impl) {
            return impl;
        }
        throw new IllegalArgumentException("not a jdet protection domain: " + pd);
    }

    static MrImpl mr(final MemoryRegion mr) {
        if (mr instanceof MrImpl impl) {
            return impl;
        }
        throw new IllegalArgumentException("not a jdet memory region: " + mr);
    }

    static MwImpl mw(final MemoryWindow mw) {
        if (mw instanceof MwImpl impl) {
            return impl;
        }
        throw new IllegalArgumentException("not a jdet memory window: " + mw);
    }

    static CqImpl cq(final CompletionQueue cq) {
        if (cq == null) {
            return null;
        }
        if (cq instanceof CqImpl impl) {
            return impl;
        }
        throw new IllegalArgumentException("not a jdet completion queue: " + cq);
    }
}
