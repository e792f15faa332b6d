package io.jdet.internal.link;

import java.util.concurrent.ConcurrentHashMap;

/**
 * A named in-process fabric: the NICs opened on {@code "loop:<name>"} in one JVM, each with a small number.
 * Endpoints live in a copy-on-write array so that sending looks a peer up without locking or allocating.
 */
final class Fabric {
    private static final ConcurrentHashMap<String, Fabric> FABRICS = new ConcurrentHashMap<>();

    private final String name;
    /** The frame size of every endpoint: fixed by the first NIC that opens the fabric. */
    private final int mtu;
    private volatile FabricLink[] endpoints = new FabricLink[16];
    private int nextId = 1;

    private Fabric(final String name, final int mtu) {
        this.name = name;
        this.mtu = mtu;
    }

    static Fabric named(final String name, final int mtu) {
        return FABRICS.computeIfAbsent(name, n -> new Fabric(n, mtu));
    }

    int mtu() {
        return mtu;
    }

    String name() {
        return name;
    }

    synchronized int attach(final FabricLink link) {
        final int id = nextId++;
        FabricLink[] current = endpoints;
        if (id >= current.length) {
            current = java.util.Arrays.copyOf(current, current.length * 2);
        } else {
            current = current.clone();
        }
        current[id] = link;
        endpoints = current;
        return id;
    }

    synchronized void detach(final int id) {
        final FabricLink[] current = endpoints.clone();
        current[id] = null;
        endpoints = current;
    }

    FabricLink endpoint(final long id) {
        final FabricLink[] current = endpoints;
        return id > 0 && id < current.length ? current[(int) id] : null;
    }
}
