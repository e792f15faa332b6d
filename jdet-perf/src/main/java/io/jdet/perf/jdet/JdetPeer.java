package io.jdet.perf.jdet;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.Nic;
import io.jdet.perf.PerfException;

/**
 * One end's jdet device and NIC, open for the whole run. With the loop fallback, a NIC name that does not exist
 * yet (ENODEV) opens the in-process fabric instead and says so in {@link #note()}.
 */
public final class JdetPeer implements AutoCloseable {
    /** The NIC name of the fallback: the default in-process fabric. */
    public static final String LOOP = "loop";

    private final Det det;
    private final Nic nic;
    private final String requested;
    private final String opened;
    private final String note;

    private JdetPeer(final Det det, final Nic nic, final String requested, final String opened, final String note) {
        this.det = det;
        this.nic = nic;
        this.requested = requested;
        this.opened = opened;
        this.note = note;
    }

    /**
     * Opens a device and a NIC.
     *
     * @param name          the NIC name
     * @param configuration the device's tunables (faults included)
     * @param loopFallback  whether ENODEV means "use the in-process fabric"
     * @return the peer
     * @throws PerfException if the device or NIC cannot be opened
     */
    public static JdetPeer open(final String name, final Configuration configuration, final boolean loopFallback) {
        final Det det;
        try {
            det = Det.open(configuration);
        } catch (final DetException e) {
            throw new PerfException("cannot open the jdet device: " + e.getMessage(), e);
        }
        try {
            return new JdetPeer(det, det.openNic(name, null), name, name, null);
        } catch (final DetException e) {
            if (!loopFallback || e.errno() != Errno.ENODEV) {
                det.close();
                throw new PerfException("cannot open NIC " + name + ": " + e.getMessage(), e);
            }
            try {
                final String note = name + " is not available yet (" + e.getMessage() + "): running on " + LOOP
                    + ", the in-process fabric, instead";
                return new JdetPeer(det, det.openNic(LOOP, null), name, LOOP, note);
            } catch (final DetException again) {
                det.close();
                throw new PerfException("cannot open NIC " + LOOP + ": " + again.getMessage(), again);
            }
        }
    }

    /**
     * The device.
     *
     * @return the device
     */
    public Det det() {
        return det;
    }

    /**
     * The NIC.
     *
     * @return the NIC
     */
    public Nic nic() {
        return nic;
    }

    /**
     * The NIC name asked for.
     *
     * @return the name
     */
    public String requested() {
        return requested;
    }

    /**
     * The NIC name actually opened: the one asked for, or {@link #LOOP} after a fallback.
     *
     * @return the name
     */
    public String opened() {
        return opened;
    }

    /**
     * Why the opened NIC is not the requested one.
     *
     * @return the explanation, or null without a fallback
     */
    public String note() {
        return note;
    }

    /** Closes the device and everything on it; safe from another thread to stop a stuck end. */
    @Override
    public void close() {
        det.close();
    }
}
