package io.jdet.internal.engine;

import io.jdet.Access;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.MemoryRegion;
import io.jdet.MrAttributes;
import io.jdet.ProtectionDomain;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A registered region. Its keys share one table index: the local key has an even tag, the remote key the next
 * odd one, so they differ, and both die when the index is released.
 */
public final class MrImpl implements MemoryRegion {
    /** A thread that owns no arena: a segment it may not access is confined to one thread. */

    final NicImpl nic;
    PdImpl pd;
    final MemorySegment segment;
    /** A byte buffer over the whole region, for CRC computation; its position and limit are scratch. */
    final ByteBuffer view;
    final long address;
    final long length;
    int access;
    int index;
    int lKey;
    int rKey;
    int boundWindows;
    boolean valid;

    private MrImpl(final PdImpl pd, final MemorySegment segment, final int access) {
        this.nic = pd.nic;
        this.pd = pd;
        this.segment = segment;
        this.view = segment.asByteBuffer();
        this.address = segment.address();
        this.length = segment.byteSize();
        this.access = access;
    }

    static MrImpl register(final PdImpl pd, final MemorySegment segment, final int access) {
        if (segment == null) {
            throw new IllegalArgumentException("segment is null");
        }
        if (!segment.isNative()) {
            throw new DetException(Errno.EFAULT, "the segment is not native memory");
        }
        if (!segment.isAccessibleBy(pd.nic.progressThread())) {
            throw new DetException(Errno.EFAULT, "the segment is confined to its owner thread, but jdet's threads "
                + "must reach registered memory: allocate it from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
        if (segment.byteSize() == 0) {
            throw new DetException(Errno.EINVAL, "zero-length region");
        }
        PdImpl.checkRegionAccess(access);
        if ((access & (Access.LOCAL_WRITE)) != 0 && segment.isReadOnly()) {
            throw new DetException(Errno.EINVAL, "LOCAL_WRITE on a read-only segment");
        }
        if (Long.compareUnsigned(segment.address() + segment.byteSize(), segment.address()) < 0) {
            throw new DetException(Errno.ERANGE, "address plus length wraps");
        }
        if (segment.byteSize() > NicImpl.MAX_MR_SIZE) {
            throw new DetException(Errno.E2BIG, "region of " + segment.byteSize() + " bytes; the most is "
                + NicImpl.MAX_MR_SIZE);
        }
        final NicImpl nic = pd.nic;
        if (nic.mrCount >= NicImpl.MAX_MRS) {
            throw new DetException(Errno.EAGAIN, "the NIC has " + NicImpl.MAX_MRS + " regions");
        }
        nic.device.reserve(segment.byteSize());
        final MrImpl mr;
        try {
            mr = new MrImpl(pd, segment, access);
            mr.issueKeys();
        } catch (final RuntimeException e) {
            nic.device.release(segment.byteSize());
            throw e;
        }
        mr.valid = true;
        pd.users++;
        nic.mrCount++;
        return mr;
    }

    private void issueKeys() {
        final int newIndex = nic.keys.allocate(this);
        if (index != 0) {
            nic.keys.release(index);
        }
        index = newIndex;
        final int tag = (nic.keys.generation(index) * 2) & 0xFF;
        lKey = index << 8 | tag;
        rKey = (access & Access.ANY_REMOTE) != 0 ? index << 8 | (tag + 1) : 0;
    }

    @Override
    public int lKey() {
        checkValid(); // a stale key in a data segment would fail later and far from its cause
        return lKey;
    }

    @Override
    public int rKey() {
        checkValid();
        return rKey;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public MrAttributes query() {
        nic.lock.lock();
        try {
            checkValid();
            return new MrAttributes(pd, address, length, access, lKey, rKey);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public void modify(final ProtectionDomain newPd, final int newAccess) {
        nic.lock.lock();
        try {
            checkValid();
            if (boundWindows > 0) {
                throw new DetException(Errno.EBUSY, boundWindows + " window(s) bound to the region");
            }
            final PdImpl target = newPd == null ? pd : Checks.pd(newPd);
            if (target.nic != nic) {
                throw new DetException(Errno.EINVAL, "the domain belongs to another NIC");
            }
            if (target.closed) {
                throw new IllegalStateException("protection domain deallocated");
            }
            final int rights = newAccess == -1 ? access : newAccess;
            PdImpl.checkRegionAccess(rights);
            pd.users--;
            pd = target;
            pd.users++;
            access = rights;
            issueKeys();
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public MemoryRegion regShared(final ProtectionDomain newPd, final int newAccess) {
        final PdImpl target = Checks.pd(newPd);
        nic.lock.lock();
        try {
            checkValid();
            if (target.nic != nic) {
                throw new DetException(Errno.EINVAL, "the domain belongs to another NIC");
            }
            target.checkOpen();
            return register(target, segment, newAccess);
        } finally {
            nic.lock.unlock();
        }
    }

    private void checkValid() {
        if (!valid) {
            throw new IllegalStateException("region deregistered");
        }
    }

    /** Whether [address, address + len) lies in the region, overflow safe. */
    boolean contains(final long at, final long len) {
        final long offset = at - address;
        return offset >= 0 && len >= 0 && offset <= length && len <= length - offset;
    }

    @Override
    public void close() {
        nic.lock.lock();
        try {
            if (!valid) {
                return;
            }
            if (boundWindows > 0) {
                throw new DetException(Errno.EBUSY, boundWindows + " window(s) bound to the region");
            }
            valid = false;
            nic.keys.release(index);
            pd.users--;
            nic.mrCount--;
            nic.device.release(length);
        } finally {
            nic.lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "MemoryRegion[lKey=0x" + Integer.toHexString(lKey) + ", rKey=0x" + Integer.toHexString(rKey)
            + ", address=0x" + Long.toHexString(address) + ", length=" + length + "]";
    }
}
