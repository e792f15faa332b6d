package io.jdet.internal.verbs;

import io.jdet.Access;
import io.jdet.WcStatus;
import io.jdet.internal.protocol.SendWr;

/**
 * Local work requests, run when they reach the head of the send queue's admission: window binds and local
 * invalidates. Checks that may have changed since the post (a region deregistered, or modified: moved to another
 * domain, its rights changed, which re-keys it; a type 2 window already bound) are made again here and fail the
 * work request rather than the post.
 */
final class LocalOps {
    private LocalOps() {
    }

    static WcStatus run(final QpImpl qp, final SendWr w) {
        final WcStatus status = switch (w.kind) {
            case SendWr.KIND_BIND -> bindType1(w);
            case SendWr.KIND_BIND_TYPE2 -> bindType2(qp, w);
            default -> invalidate(qp, w.rKey, false) ? WcStatus.SUCCESS : WcStatus.LOCAL_OP_ERR;
        };
        if (status != WcStatus.SUCCESS) {
            keyInForce(w);
        }
        return status;
    }

    /**
     * A bind that failed or was taken back: the window's key as the application reads it ({@code mw.rKey()}, set
     * when the bind was posted) goes back to the key in force, unless a later bind was posted meanwhile.
     */
    private static void keyInForce(final SendWr w) {
        if ((w.kind == SendWr.KIND_BIND || w.kind == SendWr.KIND_BIND_TYPE2) && w.window instanceof MwImpl mw
            && mw.rKey == w.bindKey) {
            mw.rKey = mw.activeRKey;
        }
    }

    private static WcStatus bindType1(final SendWr w) {
        final MwImpl mw = (MwImpl) w.window;
        if (mw.destroyed) {
            return WcStatus.BIND_ERR;
        }
        if (w.bindLength == 0) {
            mw.unbind();
            mw.activeRKey = w.bindKey;
            return WcStatus.SUCCESS;
        }
        mw.unbind(); // a rebind that fails ends the binding too: neither key grants access (QueuePair.bind)
        if (!regionAsPosted(mw, w)) {
            return WcStatus.BIND_ERR;
        }
        apply(mw, w, null);
        return WcStatus.SUCCESS;
    }

    private static WcStatus bindType2(final QpImpl qp, final SendWr w) {
        final MwImpl mw = (MwImpl) w.window;
        if (mw.destroyed || mw.bound || !regionAsPosted(mw, w)) {
            return WcStatus.BIND_ERR;
        }
        apply(mw, w, qp);
        return WcStatus.SUCCESS;
    }

    /**
     * Whether the region is still what the post checked: registered and usable, under the same key (a modify
     * re-keys it, so a move to another domain or a change of its rights is seen), in the window's domain and with
     * MW_BIND (asserted again: cheap, and the key rule is what makes them hold).
     */
    private static boolean regionAsPosted(final MwImpl mw, final SendWr w) {
        final MrImpl mr = (MrImpl) w.bindRegion;
        return mr.usable() && mr.currentKey() == w.bindRegionKey && mr.pd == mw.pd
            && (mr.access & Access.MW_BIND) != 0;
    }

    /**
     * Takes back a bind that completes FLUSHED. One that ran: if the window is still bound by it, it is unbound,
     * so that neither its new key nor (already replaced) the old one grants access; a bind that failed or was since
     * replaced is left alone. A type 1 bind that never ran: the binding it was to replace ends, if it is still the
     * one in force, and the window's key as the application reads it goes back to the key in force (which then
     * grants nothing), as after a bind that failed; a type 2 bind replaces no binding. A local invalidate cannot be
     * taken back (the key is gone), which only withholds access the application believes it still grants. Raises
     * nothing.
     *
     * @param w   the flushed work request
     * @param ran whether it was admitted (ran) before the flush
     */
    static void undo(final SendWr w, final boolean ran) {
        if ((w.kind != SendWr.KIND_BIND && w.kind != SendWr.KIND_BIND_TYPE2) || !(w.window instanceof MwImpl mw)) {
            return;
        }
        if (ran) {
            if (w.status == WcStatus.SUCCESS && !mw.destroyed && mw.bound && mw.activeRKey == w.bindKey) {
                mw.unbind(); // its key, still mw.rKey unless a later bind was posted, now grants nothing
            }
            return;
        }
        if (w.kind == SendWr.KIND_BIND && !mw.destroyed && mw.activeRKey == w.bindReplacedKey) {
            mw.unbind();
        }
        keyInForce(w);
    }

    private static void apply(final MwImpl mw, final SendWr w, final QpImpl boundQp) {
        final MrImpl mr = (MrImpl) w.bindRegion;
        mw.mr = mr;
        mr.boundWindows++;
        mw.bound = true;
        mw.address = w.bindAddress;
        mw.length = w.bindLength;
        mw.access = w.bindAccess & ~Access.ZERO_BASED;
        mw.zeroBased = (w.bindAccess & Access.ZERO_BASED) != 0;
        mw.activeRKey = w.bindKey;
        mw.boundQp = boundQp;
    }

    /**
     * Invalidates a type 2 window key (local invalidate, or a peer's send with invalidate).
     *
     * @param qp        the queue pair it arrives on
     * @param rKey      the key
     * @param remote    whether a peer asked: then the window must also be bound to this queue pair, as every
     *                  remote access to a type 2 window must come through it (a peer of another connection of
     *                  the domain must not unbind another client's window)
     * @return true if the key named a bound type 2 window and it is now unbound
     */
    static boolean invalidate(final QpImpl qp, final int rKey, final boolean remote) {
        final Object o = qp.nic.keys.lookup(rKey);
        if (!(o instanceof MwImpl mw) || mw.type != 2 || !mw.bound || mw.activeRKey != rKey || mw.pd != qp.pd
            || remote && mw.boundQp != qp) {
            return false;
        }
        mw.unbind();
        return true;
    }
}
