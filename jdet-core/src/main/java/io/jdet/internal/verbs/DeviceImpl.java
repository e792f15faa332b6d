package io.jdet.internal.verbs;

import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.DeviceAttributes;
import io.jdet.Errno;
import io.jdet.EventHandler;
import io.jdet.EventQueue;
import io.jdet.Nic;
import io.jdet.internal.link.Link;
import io.jdet.internal.link.Links;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/** The device: owns NICs and event queues, the configuration and the registration quota. */
public final class DeviceImpl implements Det {
    public final Configuration configuration;
    final List<NicImpl> nics = new ArrayList<>();
    final List<EventQueueImpl> events = new ArrayList<>();
    final AtomicLong registeredBytes = new AtomicLong();
    /**
     * Threads blocked in an event wait that rely on progress threads for their frames: while any are, progress
     * threads serve frames promptly. A thread that sleeps on a NIC's link itself (the NIC's link waiter) counts
     * only if its event queue hears from other NICs as well.
     */
    public final AtomicInteger blockedWaiters = new AtomicInteger();
    private boolean closed;
    /** Makes each NIC's connection manager. */
    final Function<NicImpl, CmHandler> cmFactory;
    /** Makes collective groups. */
    final CollectiveFactory collectiveFactory;

    /**
     * Opens a device.
     *
     * @param configuration a concluded configuration owned by the device
     * @param cmFactory     makes each NIC's connection manager (the layer above verbs registers itself here, so
     *                      that verbs need not know it)
     * @param collectiveFactory makes collective groups (the same way, from the layer above)
     */
    public DeviceImpl(final Configuration configuration, final Function<NicImpl, CmHandler> cmFactory,
                      final CollectiveFactory collectiveFactory) {
        this.configuration = configuration;
        this.cmFactory = cmFactory;
        this.collectiveFactory = collectiveFactory;
    }

    @Override
    public synchronized DeviceAttributes query() {
        checkOpen();
        final long bytes = registeredBytes.get();
        return new DeviceAttributes(Math.max(1, configuration.timerPeriodUs() / 1000), configuration.ackTimeoutMs(),
            configuration.windowFrames(), configuration.maxRegisteredBytes(), bytes, (bytes + 4095) / 4096);
    }

    @Override
    public Configuration configuration() {
        return configuration.clone();
    }

    @Override
    public synchronized EventQueue createEvent(final EventHandler handler) {
        checkOpen();
        final EventQueueImpl queue = new EventQueueImpl(this, handler);
        events.add(queue);
        return queue;
    }

    @Override
    public Nic openNic(final String name, final EventQueue event) {
        final EventQueueImpl eq = event == null ? null : Checks.event(event, this);
        synchronized (this) {
            checkOpen();
            if (eq != null && eq.isClosed()) {
                throw new IllegalStateException("event queue closed");
            }
            return attach(name, Links.open(name, configuration), eq);
        }
    }

    /**
     * Makes a NIC of a link just opened and starts it; if that fails, closes the link, so that a failed open
     * leaves no socket or fabric endpoint behind. Device lock held.
     *
     * @param name the NIC name
     * @param link the link, owned by the NIC from now on
     * @param eq   the event queue, or null
     * @return the NIC
     */
    NicImpl attach(final String name, final Link link, final EventQueueImpl eq) {
        final NicImpl nic;
        try {
            nic = new NicImpl(this, name, link, eq);
            nic.start();
        } catch (final RuntimeException | Error e) {
            try {
                link.close();
            } catch (final RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        if (eq != null) {
            eq.users++;
            eq.addSource(nic);
        }
        nics.add(nic);
        if (configuration.jmx()) {
            nic.observer.publish(nic::counters);
        }
        return nic;
    }

    synchronized void removeNic(final NicImpl nic) {
        nic.observer.close();
        nics.remove(nic);
    }

    /**
     * Reserves quota for a registration.
     *
     * @param bytes the region length
     * @throws DetException EDQUOT if over the quota
     */
    void reserve(final long bytes) {
        final long total = registeredBytes.addAndGet(bytes);
        if (total > configuration.maxRegisteredBytes() || total < 0) {
            registeredBytes.addAndGet(-bytes);
            throw new DetException(Errno.EDQUOT, "registering " + bytes + " bytes exceeds the quota of "
                + configuration.maxRegisteredBytes());
        }
    }

    void release(final long bytes) {
        registeredBytes.addAndGet(-bytes);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("device closed");
        }
    }

    @Override
    public void close() {
        final List<NicImpl> toClose;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(nics);
        }
        for (final NicImpl nic : toClose) {
            nic.closeAll();
        }
        final List<EventQueueImpl> queues;
        synchronized (this) {
            queues = new ArrayList<>(events);
            for (final EventQueueImpl q : queues) {
                q.users = 0;
                q.clearSources();
            }
        }
        for (final EventQueueImpl q : queues) {
            q.close();
        }
    }
}
