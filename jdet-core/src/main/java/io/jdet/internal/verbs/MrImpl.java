package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.MemoryRegion;
import io.jdet.MrAttributes;
import io.jdet.ProtectionDomain;

import io.jdet.internal.protocol.Region;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A registered region. Its keys share one table index: the local key has an even tag, the remote key the next
 * odd one, so they differ, and both die when the index is released.
 *
 * <p>Lifetime: the engine reads and writes the memory only under the engine lock, and only while the region is
 * {@link #usable()}: registered, and its arena still open. Deregistration takes the lock, so once {@link #close()}
 * returns the engine never touches the memory again; work that still refers to it fails instead (see
 * {@link MemoryRegion}).
 */
public final class MrImpl implements MemoryRegion, Region {
    /** log2 of the distance between the starts of two {@link #views}. */
    private static final int VIEW_SHIFT = 30;
    /**
     * How far a view reaches into the next one: more than any frame payload, so that every piece of a frame lies
     * in the view its first byte is in.
     */
    private static final long VIEW_OVERLAP = 1 << 17;

    final NicImpl nic;
    PdImpl pd;
    final MemorySegment segment;
    /**
     * Byte buffers over the region for CRC computation (their positions and limits are scratch): one per GiB,
     * since a byte buffer cannot cover a region of {@code Integer.MAX_VALUE} bytes.
     */
    private final ByteBuffer[] views;
    /** The memory of each view. */
    private final MemorySegment[] viewSegments;
    final long address;
    final long length;
    int access;
    int index;
    int lKey;
    int rKey;
    int boundWindows;
    volatile boolean valid; // read by collectives' progress without the engine lock

    private MrImpl(final PdImpl pd, final MemorySegment segment, final int access) {
        this.nic = pd.nic;
        this.pd = pd;
        this.segment = segment;
        final int count = (int) ((segment.byteSize() - 1) >>> VIEW_SHIFT) + 1;
        this.views = new ByteBuffer[count];
        this.viewSegments = new MemorySegment[count];
        for (int k = 0; k < count; k++) {
            final long start = (long) k << VIEW_SHIFT;
            final long end = Math.min(segment.byteSize(), start + (1L << VIEW_SHIFT) + VIEW_OVERLAP);
            viewSegments[k] = count == 1 ? segment : segment.asSlice(start, end - start);
            views[k] = viewSegments[k].asByteBuffer();
        }
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
        if (!segment.scope().isAlive()) {
            throw new DetException(Errno.EFAULT, "the segment's arena is closed: its memory is freed");
        }
        if (!segment.isAccessibleBy(pd.nic.progressThread())) {
            throw new DetException(Errno.EFAULT, "the segment is confined to its owner thread, but jdet's threads "
                + "must reach registered memory: allocate it from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
        if (segment.byteSize() == 0) {
            throw new DetException(Errno.EINVAL, "zero-length region");
        }
        checkAccess(segment, access);
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

    /** Checks rights for a segment: legal, and no write right on read-only memory (det_reg_mr, det_modify_mr). */
    private static void checkAccess(final MemorySegment segment, final int access) {
        PdImpl.checkRegionAccess(access);
        // Every write right needs LOCAL_WRITE (checked above), so this keeps remote writes and atomics off it too.
        if ((access & Access.LOCAL_WRITE) != 0 && segment.isReadOnly()) {
            throw new DetException(Errno.EINVAL, "LOCAL_WRITE on a read-only segment");
        }
    }

    /**
     * Whether the engine may touch the memory: the region is registered and its arena is open. A region whose
     * arena was closed while it was registered (a use after free the application committed) counts as
     * deregistered. Engine lock held.
     */
    @Override
    public boolean usable() {
        return valid && segment.scope().isAlive();
    }

    /**
     * Adds a piece of the region to a frame's gather list.
     *
     * @param gather the list
     * @param offset the offset of the piece in the region
     * @param length its length, at most a frame's payload
     */
    @Override
    public void addTo(final FrameGather gather, final long offset, final int length) {
        final int k = (int) (offset >>> VIEW_SHIFT);
        gather.lend(viewSegments[k], views[k], offset - ((long) k << VIEW_SHIFT), length);
    }

    private void issueKeys() {
        final int newIndex = nic.keys.allocate(this);
        if (index != 0) {
            nic.keys.release(index);
        }
        index = newIndex;
        final int tag = nic.keys.randomTag() & 0xFE; // even, so that the r_key (tag + 1) differs from the l_key
        lKey = index << 8 | tag;
        rKey = (access & Access.ANY_REMOTE) != 0 ? index << 8 | (tag + 1) : 0;
    }

    @Override
    public int currentKey() {
        return lKey;
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
            checkAccess(segment, rights);
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
            // No frame built from here on gathers from the region; frames that lent it and are still unread by
            // their receiver get their own copy now, so the memory is the application's again when this returns.
            nic.link.settle();
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
