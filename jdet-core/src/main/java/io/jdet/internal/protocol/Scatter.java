package io.jdet.internal.protocol;

import io.jdet.Access;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The data segments of a work request, resolved to regions at post time: the scatter list of a receive, read or
 * atomic, or the gather list of a send or write. Placement copies with the last byte of each piece written last,
 * so a receiver may poll on the last byte of an RDMA-written buffer.
 */
final class Scatter {
    final MrImpl[] regions;
    final long[] offsets;
    final int[] lengths;
    int count;
    long total;

    Scatter(final int capacity) {
        regions = new MrImpl[capacity];
        offsets = new long[capacity];
        lengths = new int[capacity];
    }

    /**
     * Resolves and checks the caller's segments (det_validate_ds).
     *
     * @throws DetException E2BIG, EINVAL, ENXIO, EPERM, ERANGE, EACCES
     */
    void load(final NicImpl nic, final PdImpl pd, final DataSegment[] segments, final int n, final int access) {
        if (n < 0 || n > 0 && (segments == null || n > segments.length)) {
            throw new DetException(Errno.EINVAL, "segment count " + n + " does not fit the array");
        }
        if (n > regions.length) {
            throw new DetException(Errno.E2BIG, n + " segments; the queue allows " + regions.length);
        }
        long sum = 0;
        for (int i = 0; i < n; i++) {
            final DataSegment ds = segments[i];
            if (ds == null) {
                throw new DetException(Errno.EINVAL, "segment " + i + " is null");
            }
            final MrImpl mr = nic.localRegion(ds.lKey());
            if (mr == null) {
                throw new DetException(Errno.ENXIO, "segment " + i + ": invalid local key 0x"
                    + Integer.toHexString(ds.lKey()));
            }
            if (mr.pd != pd) {
                throw new DetException(Errno.EPERM, "segment " + i + ": region in another protection domain");
            }
            if (ds.length() < 0 || !mr.contains(ds.address(), ds.length())) {
                throw new DetException(Errno.ERANGE, "segment " + i + " lies outside its region");
            }
            if ((mr.access & access) == 0) {
                throw new DetException(Errno.EACCES, "segment " + i + ": region lacks "
                    + (access == Access.LOCAL_WRITE ? "LOCAL_WRITE" : "LOCAL_READ"));
            }
            sum += ds.length();
            if (sum > Integer.MAX_VALUE) {
                throw new DetException(Errno.EINVAL, "message longer than " + Integer.MAX_VALUE + " bytes");
            }
        }
        for (int i = 0; i < n; i++) {
            final DataSegment ds = segments[i];
            final MrImpl mr = nic.localRegion(ds.lKey());
            regions[i] = mr;
            offsets[i] = ds.address() - mr.address;
            lengths[i] = ds.length();
        }
        for (int i = n; i < count; i++) {
            regions[i] = null;
        }
        count = n;
        total = sum;
    }

    /**
     * Whether the engine may still touch every region: one may have been deregistered (or its arena closed) since
     * the post.
     */
    boolean stillValid() {
        for (int i = 0; i < count; i++) {
            if (!regions[i].usable()) {
                return false;
            }
        }
        return true;
    }

    /** Adds the pieces covering [from, from + length) of the message to a gather list. */
    void gather(final FrameGather gather, final long from, final int length) {
        long skip = from;
        int left = length;
        for (int i = 0; i < count && left > 0; i++) {
            if (skip >= lengths[i]) {
                skip -= lengths[i];
                continue;
            }
            final int n = (int) Math.min(lengths[i] - skip, left);
            regions[i].addTo(gather, offsets[i] + skip, n);
            left -= n;
            skip = 0;
        }
    }

    /** Copies {@code length} bytes of a frame into the message at offset {@code at}. */
    void place(final MemorySegment src, final long srcOffset, final long at, final int length) {
        long skip = at;
        long from = srcOffset;
        int left = length;
        for (int i = 0; i < count && left > 0; i++) {
            if (skip >= lengths[i]) {
                skip -= lengths[i];
                continue;
            }
            final int n = (int) Math.min(lengths[i] - skip, left);
            copyLastByteLast(src, from, regions[i].segment, offsets[i] + skip, n);
            from += n;
            left -= n;
            skip = 0;
        }
    }

    static void copyLastByteLast(final MemorySegment src, final long srcOffset, final MemorySegment dst,
                                 final long dstOffset, final int n) {
        if (n <= 0) {
            return;
        }
        if (n > 1) {
            MemorySegment.copy(src, srcOffset, dst, dstOffset, n - 1);
        }
        VarHandle.releaseFence(); // every earlier byte is visible before the last one
        dst.set(ValueLayout.JAVA_BYTE, dstOffset + n - 1, src.get(ValueLayout.JAVA_BYTE, srcOffset + n - 1));
    }
}
