package io.jdet.internal.verbs;

import io.jdet.DetException;
import io.jdet.Errno;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * A NIC's table of numbered objects (regions and windows, or queue pairs), found by a 24-bit handle that makes the
 * upper 24 bits of their keys or numbers; the low 8 bits are the owner's tag, as the key byte of InfiniBand keys.
 *
 * <p>Handles are a secret permutation ({@link KeyPermutation}) of a counter: a peer cannot guess the handle of an
 * object it was not told of from those it was, and a handle is issued again only after every other one of the
 * 2^24 - 1 has been (DET reused the lowest free id at once, so a stale key landed in new memory). A handle still
 * in use when the counter comes round again is skipped. Handle 0 is never issued, so keys are never 0.
 *
 * <p>Lookups are on the data path: an open-addressing table with linear probing, no allocation. Guarded by the
 * engine lock.
 */
public final class KeyTable {
    private static final int MAX_LIVE = KeyPermutation.MASK - 1;

    private final SecureRandom random = new SecureRandom();
    private final KeyPermutation permutation = new KeyPermutation(random);
    private int counter;
    private int[] handles = new int[64];
    private Object[] objects = new Object[64];
    private int size;

    /**
     * Takes a handle for an object.
     *
     * @return the handle, between 1 and 2^24 - 1
     * @throws DetException ENOMEM when every handle is in use
     */
    int allocate(final Object object) {
        if (size >= MAX_LIVE) {
            throw new DetException(Errno.ENOMEM, "no key left: " + size + " objects hold one");
        }
        int handle;
        do {
            counter = (counter + 1) & KeyPermutation.MASK;
            handle = permutation.apply(counter);
        } while (handle == 0 || slotOf(handle) >= 0);
        if ((size + 1) * 2 > handles.length) {
            grow();
        }
        insert(handle, object);
        size++;
        return handle;
    }

    /** A random 8-bit tag, the low byte of a new key. */
    int randomTag() {
        return random.nextInt(256);
    }

    /** Frees a handle; it returns only after 2^24 - 2 others. */
    void release(final int handle) {
        int hole = handle == 0 ? -1 : slotOf(handle);
        if (hole < 0) {
            return;
        }
        size--;
        // Backward-shift deletion keeps every remaining entry reachable from its home slot without tombstones.
        final int mask = handles.length - 1;
        int next = hole;
        while (true) {
            next = (next + 1) & mask;
            final int h = handles[next];
            if (h == 0) {
                break;
            }
            final int home = home(h, mask);
            // Move h into the hole unless its home lies cyclically in (hole, next].
            if (((next - home) & mask) >= ((next - hole) & mask)) {
                handles[hole] = h;
                objects[hole] = objects[next];
                hole = next;
            }
        }
        handles[hole] = 0;
        objects[hole] = null;
    }

    /** Every object in the table, for closing them all. */
    List<Object> all() {
        final List<Object> list = new ArrayList<>(size);
        for (final Object o : objects) {
            if (o != null) {
                list.add(o);
            }
        }
        return list;
    }

    /** The object whose handle is a key's upper 24 bits, or null; the caller compares the full key. */
    public Object lookup(final int key) {
        final int handle = key >>> 8;
        final int mask = handles.length - 1;
        for (int i = home(handle, mask); ; i = (i + 1) & mask) {
            final int h = handles[i];
            if (h == handle) {
                return h == 0 ? null : objects[i];
            }
            if (h == 0) {
                return null;
            }
        }
    }

    private int slotOf(final int handle) {
        final int mask = handles.length - 1;
        for (int i = home(handle, mask); ; i = (i + 1) & mask) {
            final int h = handles[i];
            if (h == handle) {
                return i;
            }
            if (h == 0) {
                return -1;
            }
        }
    }

    private void insert(final int handle, final Object object) {
        final int mask = handles.length - 1;
        int i = home(handle, mask);
        while (handles[i] != 0) {
            i = (i + 1) & mask;
        }
        handles[i] = handle;
        objects[i] = object;
    }

    private void grow() {
        final int[] oldHandles = handles;
        final Object[] oldObjects = objects;
        handles = new int[oldHandles.length * 2];
        objects = new Object[oldObjects.length * 2];
        for (int i = 0; i < oldHandles.length; i++) {
            if (oldHandles[i] != 0) {
                insert(oldHandles[i], oldObjects[i]);
            }
        }
    }

    private static int home(final int handle, final int mask) {
        return (handle * 0x9E37_79B9 >>> 7) & mask;
    }
}
