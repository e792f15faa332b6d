package io.jdet.internal.verbs;

import io.jdet.Access;
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
    /** Bound by {@link #grantRemoteWrite}, for the library's own use: the region does not count it as bound. */
    private boolean granted;
    /**
     * The region's local key when the grant was made: {@code modify} re-keys the region (new rights, perhaps another
     * domain) without ending the grant, which the region does not count, so the grant lapses with that key.
     */
    private int grantedRegionKey;

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
            if (!granted) {
                mr.boundWindows--;
            }
            granted = false;
            bound = false;
            mr = null;
            address = 0;
            length = 0;
            access = 0;
            zeroBased = false;
            boundQp = null;
        }
    }

    /**
     * Binds this type 2 window, at once and without a work request, for the library's own use (a collective's
     * rendezvous): {@code qp} alone may write {@code [address, address + length)} of {@code region} through the
     * returned key until {@link #revokeGrant}. Unlike a bind it needs no {@code MW_BIND} right on the region, which
     * was checked for local write when the collective resolved it, and the region does not count it as bound, so
     * deregistering or modifying (re-keying) the region stays possible and simply makes the key fail (the collective
     * then fails, as it does when its buffer's region goes). The caller holds the engine's data-path lock and owns
     * this window outright.
     *
     * @param qp      the only queue pair that may use the key
     * @param region  the region the range lies in (the caller checked that it does)
     * @param address the first byte
     * @param length  the bytes
     * @return the key, fresh for every grant
     * @throws IllegalStateException if the window is not a type 2 window of the library's, or is bound or closed
     */
    public int grantRemoteWrite(final QpImpl qp, final MrImpl region, final long address, final long length) {
        if (type != 2 || bound || destroyed) {
            throw new IllegalStateException("window not free for a grant: " + this);
        }
        mr = region;
        this.address = address;
        this.length = length;
        access = Access.REMOTE_WRITE;
        zeroBased = false;
        boundQp = qp;
        granted = true;
        grantedRegionKey = region.lKey;
        bound = true;
        activeRKey = nextKey();
        rKey = activeRKey;
        return activeRKey;
    }

    /** Whether this is a {@link #grantRemoteWrite} grant whose region was re-keyed since: it grants nothing. */
    boolean grantLapsed() {
        return granted && mr.lKey != grantedRegionKey;
    }

    /** Ends a {@link #grantRemoteWrite} grant, if one is in force; the caller holds the engine's data-path lock. */
    public void revokeGrant() {
        if (granted) {
            unbind();
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
            return new MwAttributes(pd, type, address, length, access | (zeroBased ? Access.ZERO_BASED : 0), rKey);
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
