package io.jdet.internal.collective;

import java.util.Arrays;

/** A growable FIFO of ints (operation indices, slots); grows only while a group warms up. */
final class IntQueue {
    private int[] items = new int[8];
    private int head;
    private int size;

    void add(final int v) {
        if (size == items.length) {
            final int[] grown = new int[items.length * 2];
            for (int i = 0; i < size; i++) {
                grown[i] = items[(head + i) % items.length];
            }
            items = grown;
            head = 0;
        }
        items[(head + size) % items.length] = v;
        size++;
    }

    int peek() {
        return items[head];
    }

    int poll() {
        final int v = items[head];
        head = (head + 1) % items.length;
        size--;
        return v;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    void clear() {
        head = 0;
        size = 0;
        Arrays.fill(items, 0);
    }
}
