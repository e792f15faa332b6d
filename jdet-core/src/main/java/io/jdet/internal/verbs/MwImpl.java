package io.jdet.internal.verbs;

import io.jdet.MemoryWindow;
import io.jdet.MwAttributes;

/**
 * A memory window. {@link #rKey} is the key the application knows (set when a bind is posted);
 * {@link #activeRKey} is the key that grants access, switched when the bind runs in send queue order.
 */
public final class MwImpl implements MemoryWindow {
    final NicImpl nic;
    final PdImpl pd;
    final int type;
    final int index;
    int tag;
    volatile int rKey;
    int activeRKey;
    boolean bound;
    MrImpl mr;
    long address;
    long length;
    int access;
    boolean zeroBased;
    /** For type 2: the queue pair whose bind is in force; only it may use the window remotely. */
    QpImpl boundQp;
    boolean destroyed;

    MwImpl(final PdImpl pd, final int type) {
        this.nic = pd.nic;
        this.pd = pd;
        this.type = type;
        this.index = nic.keys.allocate(this);
        this.tag = nic.keys.randomTag();
        this.rKey = index << 8 | tag;
        this.activeRKey = rKey;
        pd.users++;
        nic.mwCount++;
    }

    /** A fresh key for the next type 1 bind. */
    int nextKey() {
        tag = (tag + 1) & 0xFF;
        return index << 8 | tag;
    }

    /** Ends the binding, if any. */
    void unbind() {
        if (bound) {
            mr.boundWindows--;
            bound = false;
            mr = null;
            address = 0;
            length = 0;
            access = 0;
            zeroBased = false;
            boundQp = null;
        }
    }

    @Override
    public int type() {
        return type;
    }

    @Override
    public int rKey() {
        if (destroyed) {
            throw new IllegalStateException("window destroyed"); // its key names nothing any more
        }
        return rKey;
    }

    @Override
    public MwAttributes query() {
        nic.lock.lock();
        try {
            if (destroyed) {
                throw new IllegalStateException("window destroyed");
            }
            return new MwAttributes(pd, type, address, length, access, rKey);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public void close() {
        nic.lock.lock();
        try {
            if (destroyed) {
                return;
            }
            unbind();
            destroyed = true;
            nic.keys.release(index);
            pd.users--;
            nic.mwCount--;
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "MemoryWindow[type=" + type + ", rKey=0x" + Integer.toHexString(rKey) + "]";
    }
}
