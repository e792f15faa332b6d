package io.jdet.internal.engine;

import io.jdet.DetException;
import io.jdet.Errno;

/**
 * A NIC's table of numbered objects (regions and windows, or queue pairs): a 24-bit index plus an 8-bit tag make
 * a key, as InfiniBand keys do. Freed indexes are reused oldest-first and each reuse advances the slot's
 * generation, so a stale key is not handed out again soon (DET reused the lowest free id at once).
 * Index 0 is never used, so keys are never 0. Guarded by the engine lock.
 */
final class KeyTable {
    private static final int MAX_INDEX = (1 << 24) - 1;

    private Object[] objects = new Object[64];
    private int[] generations = new int[64];
    private int[] free = new int[64];
    private int freeHead;
    private int freeCount;
    private int nextUnused = 1;

    /**
     * Takes an index for an object.
     *
     * @return the index, at least 1
     * @throws DetException ENOMEM when every index is taken
     */
    int allocate(final Object object) {
        final int index;
        if (freeCount > 0 && (nextUnused > MAX_INDEX || freeCount > 16)) {
            index = free[freeHead];
            freeHead = (freeHead + 1) % free.length;
            freeCount--;
        } else if (nextUnused <= MAX_INDEX) {
            index = nextUnused++;
        } else {
            throw new DetException(Errno.ENOMEM, "no key left");
        }
        if (index >= objects.length) {
            final int n = Math.max(objects.length * 2, index + 1);
            objects = java.util.Arrays.copyOf(objects, n);
            generations = java.util.Arrays.copyOf(generations, n);
        }
        objects[index] = object;
        return index;
    }

    /** The 8-bit tag base of an index's current generation. */
    int generation(final int index) {
        return generations[index];
    }

    void release(final int index) {
        objects[index] = null;
        generations[index]++;
        if (freeCount == free.length) {
            final int[] grown = new int[free.length * 2];
            for (int i = 0; i < freeCount; i++) {
                grown[i] = free[(freeHead + i) % free.length];
            }
            free = grown;
            freeHead = 0;
        }
        free[(freeHead + freeCount) % free.length] = index;
        freeCount++;
    }

    /** Every object in the table, for closing them all. */
    java.util.List<Object> all() {
        final java.util.List<Object> list = new java.util.ArrayList<>();
        for (final Object o : objects) {
            if (o != null) {
                list.add(o);
            }
        }
        return list;
    }

    /** The object at a key's index, or null; the caller compares the full key. */
    Object lookup(final int key) {
        final int index = key >>> 8;
        return index < objects.length ? objects[index] : null;
    }
}
