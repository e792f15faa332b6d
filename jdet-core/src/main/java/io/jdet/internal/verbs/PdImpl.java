package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.MemoryRegion;
import io.jdet.MemoryWindow;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QueuePair;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** A protection domain: a scope shared by regions, windows and queue pairs, counted so it cannot go while used. */
public final class PdImpl implements ProtectionDomain {
    final NicImpl nic;
    /** Regions, windows, queue pairs and collective groups in the domain. */
    int users;
    boolean closed;
    /** The collective groups made in this domain and not closed yet: a device close closes them (NIC lock). */
    final List<Collective> groups = new ArrayList<>();

    PdImpl(final NicImpl nic) {
        this.nic = nic;
    }

    @Override
    public Nic nic() {
        return nic;
    }

    @Override
    public MemoryRegion regMr(final MemorySegment segment, final int access) {
        nic.lock.lock();
        try {
            checkOpen();
            return MrImpl.register(this, segment, access);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public MemoryWindow createMw(final int type) {
        nic.lock.lock();
        try {
            checkOpen();
            if (type != 1 && type != 2) {
                throw new DetException(Errno.EINVAL, "window type must be 1 or 2, not " + type);
            }
            if (nic.mwCount >= NicImpl.MAX_MWS) {
                throw new DetException(Errno.EAGAIN, "the NIC has " + NicImpl.MAX_MWS + " windows");
            }
            return new MwImpl(this, type);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public QueuePair createQp(final QpCreate create) {
        nic.lock.lock();
        try {
            checkOpen();
            return QpImpl.create(this, create);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public Collective createCollective(final CompletionQueue cq) {
        final CqImpl impl = Checks.cq(cq);
        if (impl == null || impl.nic != nic) {
            throw new DetException(Errno.EINVAL, "the completion queue is null or belongs to another NIC");
        }
        nic.lock.lock();
        try {
            checkOpen();
            if (impl.closed) {
                throw new IllegalStateException("completion queue destroyed");
            }
            users++; // the group's queue pairs and regions will live here: the domain stays until it closes
        } finally {
            nic.lock.unlock();
        }
        final Collective co;
        try {
            co = nic.device.collectiveFactory.create(this, impl, nic.device.configuration.collectives());
        } catch (final RuntimeException | Error e) {
            releaseGroup(null);
            throw e;
        }
        nic.lock.lock();
        try {
            groups.add(co);
        } finally {
            nic.lock.unlock();
        }
        return co;
    }

    /**
     * A collective group of this domain closed (once): the domain may go when nothing else remains in it.
     *
     * @param group the group, or null for one whose creation failed
     */
    public void releaseGroup(final Collective group) {
        nic.lock.lock();
        try {
            groups.remove(group);
            if (!closed && users > 0) { // a device close zeroed the count and deallocated the domain already
                users--;
            }
        } finally {
            nic.lock.unlock();
        }
    }

    /**
     * Checks one caller segment as a post does and finds the region it lies in (for the collectives of
     * {@code io.jdet.internal.collective}, which validate every segment before a work request takes a slot, and
     * keep the region's memory and the segment's offset in it rather than a slice, so that a post allocates
     * nothing).
     *
     * @param ds     the segment
     * @param access LOCAL_READ to read from it, LOCAL_WRITE to write into it, or both
     * @param name   names the segment in the error message
     * @param index  the segment's place in a vector of them, named in the message too, or -1
     * @return the region; the segment starts {@code ds.address() - region.address()} bytes into its memory
     * @throws DetException ENXIO for an unknown key; EPERM for a region in another domain; ERANGE outside the
     *                      region; EACCES without the right
     */
    public MrImpl region(final DataSegment ds, final int access, final String name, final int index) {
        nic.lock.lock();
        try {
            final MrImpl mr = nic.localRegion(ds.lKey());
            if (mr == null) {
                throw new DetException(Errno.ENXIO, named(name, index) + ": invalid local key 0x"
                    + Integer.toHexString(ds.lKey()));
            }
            if (mr.pd != this) {
                throw new DetException(Errno.EPERM, named(name, index) + ": region in another protection domain");
            }
            if (ds.length() < 0 || !mr.contains(ds.address(), ds.length())) {
                throw new DetException(Errno.ERANGE, named(name, index) + " lies outside its region");
            }
            final int missing = access & ~mr.access;
            if (missing != 0) {
                throw new DetException(Errno.EACCES, named(name, index) + ": region lacks "
                    + ((missing & Access.LOCAL_READ) != 0 ? "LOCAL_READ" : "LOCAL_WRITE"));
            }
            return mr;
        } finally {
            nic.lock.unlock();
        }
    }

    /** A segment's name in a message, built only when one is thrown. */
    private static String named(final String name, final int index) {
        return index < 0 ? name : name + "[" + index + "]";
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("protection domain deallocated");
        }
        nic.checkOpen();
    }

    /** Checks an access mask for a region, as det_reg_mr does. */
    static void checkRegionAccess(final int access) {
        if ((access & ~Access.ALL_REGION) != 0) {
            throw new DetException(Errno.EINVAL, "unknown access bits 0x" + Integer.toHexString(access));
        }
        if ((access & Access.REMOTE_READ) != 0 && (access & Access.LOCAL_READ) == 0) {
            throw new DetException(Errno.EINVAL, "REMOTE_READ needs LOCAL_READ");
        }
        if ((access & (Access.REMOTE_WRITE | Access.REMOTE_ATOMIC)) != 0 && (access & Access.LOCAL_WRITE) == 0) {
            throw new DetException(Errno.EINVAL, "REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE");
        }
    }

    @Override
    public void close() {
        nic.lock.lock();
        try {
            if (closed) {
                return;
            }
            if (users > 0) {
                throw new DetException(Errno.EBUSY, users
                    + " region(s), window(s), queue pair(s) or collective group(s) remain");
            }
            closed = true;
            nic.pds.remove(this);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "ProtectionDomain@" + Integer.toHexString(System.identityHashCode(this)) + "[" + nic.address() + "]";
    }
}
