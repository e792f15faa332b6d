package io.jdet.internal.link;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A named in-process fabric: the NICs opened on {@code "loop:<name>"} in one JVM, each with a small number.
 * Endpoints live in a copy-on-write array so that sending looks a peer up without locking or allocating.
 *
 * <p>A fabric exists while it has endpoints: the first NIC creates it and fixes its frame size, the last one to
 * close forgets it. Numbers of closed endpoints are reused, the least recently freed last, so a process that opens
 * and closes NICs for ever keeps a table as large as the most NICs it had open at once.
 */
final class Fabric {
    private static final ConcurrentHashMap<String, Fabric> FABRICS = new ConcurrentHashMap<>();

    private final String name;
    /** The frame size, and ring slot size, of every endpoint: fixed by the first NIC that opens the fabric. */
    private final int mtu;
    private volatile FabricLink[] endpoints = new FabricLink[16];
    /** Which numbers are taken (reserved or attached); guarded by this. Number 0 is never used. */
    private boolean[] taken = new boolean[16];
    /** Endpoints reserved or attached; guarded by this. */
    private int members;
    /** Where the search for a free number starts: just past the last number handed out. Guarded by this. */
    private int nextId = 1;

    private Fabric(final String name, final int mtu) {
        this.name = name;
        this.mtu = mtu;
    }

    /**
     * Reserves a number on a fabric, creating the fabric if it does not exist.
     *
     * @param name the fabric's name
     * @param mtu  the frame size, used only if this creates the fabric
     * @return the fabric and the number, to {@link #publish} or {@link #leave}
     */
    static Membership join(final String name, final int mtu) {
        final int[] id = new int[1];
        final Fabric fabric = FABRICS.compute(name, (n, existing) -> {
            final Fabric f = existing != null ? existing : new Fabric(n, mtu);
            id[0] = f.reserve();
            return f;
        });
        return new Membership(fabric, id[0]);
    }

    /** A reserved number on a fabric. */
    record Membership(Fabric fabric, int id) {
    }

    /**
     * Whether a fabric of that name exists now.
     *
     * @param name the name
     * @return true if some endpoint holds it
     */
    static boolean exists(final String name) {
        return FABRICS.containsKey(name);
    }

    /**
     * The size of a fabric's endpoint table, for tests.
     *
     * @param name the name
     * @return the table size, or 0 if there is no such fabric
     */
    static int endpointCapacity(final String name) {
        final Fabric f = FABRICS.get(name);
        return f == null ? 0 : f.endpoints.length;
    }

    int mtu() {
        return mtu;
    }

    String name() {
        return name;
    }

    private synchronized int reserve() {
        int id = -1;
        for (int k = 0; k < taken.length - 1; k++) {
            final int candidate = 1 + (nextId - 1 + k) % (taken.length - 1);
            if (!taken[candidate]) {
                id = candidate;
                break;
            }
        }
        if (id < 0) {
            id = taken.length;
            taken = Arrays.copyOf(taken, taken.length * 2);
            endpoints = Arrays.copyOf(endpoints, taken.length);
        }
        taken[id] = true;
        members++;
        nextId = id + 1 < taken.length ? id + 1 : 1;
        return id;
    }

    /**
     * Makes a reserved endpoint reachable.
     *
     * @param id   its number
     * @param link the endpoint, ready to receive
     */
    synchronized void publish(final int id, final FabricLink link) {
        final FabricLink[] current = endpoints.clone();
        current[id] = link;
        endpoints = current;
    }

    /**
     * Frees a number, reserved or published; forgets the fabric when it was the last.
     *
     * @param id the number
     */
    void leave(final int id) {
        FABRICS.computeIfPresent(name, (n, f) -> f == this && release(id) ? null : f);
    }

    /** @return true if the fabric has no endpoint left */
    private synchronized boolean release(final int id) {
        if (!taken[id]) {
            return members == 0;
        }
        final FabricLink[] current = endpoints.clone();
        current[id] = null;
        endpoints = current;
        taken[id] = false;
        members--;
        return members == 0;
    }

    /**
     * The endpoint table as it stands, for a scan; the caller must not change it.
     *
     * @return the endpoints, null where a number is free
     */
    FabricLink[] endpoints() {
        return endpoints;
    }

    FabricLink endpoint(final long id) {
        final FabricLink[] current = endpoints;
        return id > 0 && id < current.length ? current[(int) id] : null;
    }
}
