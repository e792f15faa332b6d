package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.protocol.Scatter;

/** Resolves and checks a work request's data segments at post time (det_validate_ds) into its scatter list. */
final class Segments {
    private Segments() {
    }

    /**
     * Resolves and checks the caller's segments.
     *
     * @throws DetException E2BIG, EINVAL, ENXIO, EPERM, ERANGE, EACCES
     */
    static void load(final Scatter s, final NicImpl nic, final PdImpl pd, final DataSegment[] segments, final int n,
                     final int access) {
        if (n < 0 || n > 0 && (segments == null || n > segments.length)) {
            throw new DetException(Errno.EINVAL, "segment count " + n + " does not fit the array");
        }
        if (n > s.regions.length) {
            throw new DetException(Errno.E2BIG, n + " segments; the queue allows " + s.regions.length);
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
            // Written as checked (one key lookup per segment): a post that fails later leaves only its own slot,
            // not yet posted, with these entries, and the next load of the slot overwrites or clears them.
            s.regions[i] = mr;
            s.keys[i] = mr.lKey;
            s.offsets[i] = ds.address() - mr.address;
            s.lengths[i] = ds.length();
        }
        s.finish(n, sum);
    }
}
