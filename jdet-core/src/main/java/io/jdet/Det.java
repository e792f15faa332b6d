package io.jdet;

import io.jdet.internal.cm.CmImpl;
import io.jdet.internal.collective.CollectiveImpl;
import io.jdet.internal.verbs.DeviceImpl;

/**
 * The jdet device ({@code det_open}): the root of every other object. Closing it closes everything opened
 * through it, in DET's order (queue pairs, completion queues, windows, regions, domains, NICs, event queues).
 *
 * <pre>{@code
 * try (Det det = Det.open()) {
 *     EventQueue events = det.createEvent(null);
 *     Nic nic = det.openNic("loop", events);
 *     ...
 * }
 * }</pre>
 */
public interface Det extends AutoCloseable {

    /**
     * Opens a device with the default {@link Configuration} ({@code det_open}).
     *
     * @return the device
     * @throws DetException EINVAL if a tunable's system property is malformed or out of range
     */
    static Det open() {
        return open(new Configuration());
    }

    /**
     * Opens a device.
     *
     * @param configuration the tunables; the device keeps a copy
     * @return the device
     * @throws DetException EINVAL if a tunable is out of range
     * @throws IllegalArgumentException if the configuration is null
     */
    static Det open(final Configuration configuration) {
        if (configuration == null) {
            throw new IllegalArgumentException("configuration is null");
        }
        return new DeviceImpl(configuration.clone().conclude(), CmImpl::new, CollectiveImpl::create);
    }

    /**
     * Settings and statistics ({@code det_query}).
     *
     * @return the attributes
     * @throws IllegalStateException if the device is closed
     */
    DeviceAttributes query();

    /**
     * The configuration the device runs with.
     *
     * @return a copy of it
     */
    Configuration configuration();

    /**
     * Creates an event queue ({@code det_create_event}).
     *
     * @param handler called on the waiting thread for every event it takes, or null
     * @return the event queue
     * @throws IllegalStateException if the device is closed
     */
    EventQueue createEvent(EventHandler handler);

    /**
     * Opens a NIC ({@code det_open_nic}). Names: {@code "loop"} or {@code "loop:<fabric>"} for the in-process
     * fabric (NICs on the same fabric name reach each other), {@code "shm:<group>"} for shared memory between
     * processes of one user on one host (NICs on the same group reach each other; see
     * {@link Configuration#shmDirectory()}), {@code "eth:<interface>"} for jdet frames straight in Ethernet frames
     * (needs CAP_NET_RAW; peers are named {@code eth:<interface>/<mac>}; see {@link Configuration#ethEtherType()}),
     * {@code "udp:<address>[:<port>]"} for UDP, or an interface name such as {@code "lo"}.
     *
     * @param name  the NIC name
     * @param event where asynchronous events of the NIC and its resources go; may be null to drop them
     * @return the NIC
     * @throws DetException ENODEV if the name names no usable link; EADDRINUSE if another socket is bound to the
     *                      UDP address and port, or another NIC has the {@code eth:} interface and EtherType in
     *                      this network namespace; EACCES if the UDP port is privileged (below 1024); EPERM if an
     *                      {@code eth:} NIC lacks CAP_NET_RAW (the message says how to grant it); EINVAL for an
     *                      event queue of another device
     * @throws IllegalStateException if the device or the event queue is closed
     */
    Nic openNic(String name, EventQueue event);

    /**
     * Closes the device and everything opened through it ({@code det_close}); closing twice does nothing.
     */
    @Override
    void close();
}
