package io.jdet.internal.collective;

import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;

/**
 * One posted collective, checked, waiting for its turn: what {@link Algorithms} builds a schedule from. A group
 * reuses its requests (and their bufs) once their collectives complete.
 */
final class Request {
    WcType type;
    long id;
    int flags;
    int root;
    ReduceOp op;
    ReduceType reduceType;
    Buf src;
    Buf dst;
    Buf[] srcV;
    Buf[] dstV;
    /** The length its completion reports. */
    long length;

    /** What {@link #src} and {@link #dst} point at when set. */
    final Buf srcHeld = new Buf();
    final Buf dstHeld = new Buf();
    /** What {@link #srcV} and {@link #dstV} are when set, a buf per member, made at the first vector post. */
    private Buf[] srcVHeld;
    private Buf[] dstVHeld;
    private Buf[] srcVBufs;
    private Buf[] dstVBufs;

    /** Clears what the last collective set. */
    Request reset(final WcType kind, final long wrId, final int wrFlags) {
        type = kind;
        id = wrId;
        flags = wrFlags;
        root = 0;
        op = null;
        reduceType = null;
        src = null;
        dst = null;
        srcV = null;
        dstV = null;
        length = 0;
        return this;
    }

    /** The array {@link #srcV} is set to: {@code size} entries, each null or one of {@link #srcBuf}'s. */
    Buf[] srcVector(final int size) {
        if (srcVHeld == null || srcVHeld.length != size) {
            srcVHeld = new Buf[size];
            srcVBufs = bufs(size);
        }
        return srcVHeld;
    }

    /** The array {@link #dstV} is set to. */
    Buf[] dstVector(final int size) {
        if (dstVHeld == null || dstVHeld.length != size) {
            dstVHeld = new Buf[size];
            dstVBufs = bufs(size);
        }
        return dstVHeld;
    }

    /** Member {@code i}'s buf of the source vector (after {@link #srcVector}). */
    Buf srcBuf(final int i) {
        return srcVBufs[i];
    }

    /** Member {@code i}'s buf of the destination vector (after {@link #dstVector}). */
    Buf dstBuf(final int i) {
        return dstVBufs[i];
    }

    /** Whether every buffer of this collective may still be touched (see {@link Buf#stillValid}). */
    boolean buffersValid() {
        return valid(src) && valid(dst) && valid(srcV) && valid(dstV);
    }

    private static boolean valid(final Buf b) {
        return b == null || b.stillValid();
    }

    private static boolean valid(final Buf[] bufs) {
        if (bufs != null) {
            for (final Buf b : bufs) {
                if (!valid(b)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static Buf[] bufs(final int size) {
        final Buf[] b = new Buf[size];
        for (int i = 0; i < size; i++) {
            b[i] = new Buf();
        }
        return b;
    }
}
