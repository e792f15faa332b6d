package io.jdet.internal.protocol;

import io.jdet.WcStatus;
import io.jdet.WcType;

/** One send queue slot: a posted work request and its protocol progress. Preallocated and reused. */
public final class SendWr extends WorkRequest {
    public static final int QUEUED = 0;
    public static final int ACTIVE = 1;
    public static final int DONE = 2;

    /** Internal kinds beyond the completion types. */
    public static final int KIND_SEND = 0;
    public static final int KIND_WRITE = 1;
    public static final int KIND_READ = 2;
    public static final int KIND_COMP_EXCH = 3;
    public static final int KIND_FETCH_ADD = 4;
    public static final int KIND_BIND = 5;
    public static final int KIND_BIND_TYPE2 = 6;
    public static final int KIND_LOCAL_INVALIDATE = 7;

    public long id;
    public int kind;
    public WcType type;
    public int flags;
    public int immediate;
    public long remoteAddress;
    public int rKey;
    public long operand1;
    public long operand2;
    /** A bind's window: opaque here, the verbs layer's to interpret. */
    public Object window;
    /** A bind's region: opaque here. */
    public Object bindRegion;
    /** The region's local key when the bind was posted: a region modified since (moved, re-keyed) is not bound. */
    public int bindRegionKey;
    public long bindAddress;
    public long bindLength;
    public int bindAccess;
    public int bindKey;
    /**
     * A type 1 bind's window key in force when it was posted: a bind flushed before it ran ends that binding only if
     * it is still the one in force (no bind of another queue pair ran meanwhile).
     */
    public int bindReplacedKey;
    /** Position in the send queue (a counter over the queue pair's life); travels as the read/atomic id. */
    public long ordinal;
    public int state;
    public WcStatus status;
    public int resultLength;
    public int startSeq;
    public int endSeq;
    public int msgId;
    public int rnrRetries;
    /** A read's response bytes placed so far: the next response frame must start here. */
    public int bytesReceived;

    public SendWr(final int sges) {
        super(sges);
    }

    public void reset(final long wrId, final int wrKind, final WcType wcType, final int wrFlags) {
        id = wrId;
        kind = wrKind;
        type = wcType;
        flags = wrFlags;
        immediate = 0;
        remoteAddress = 0;
        rKey = 0;
        operand1 = 0;
        operand2 = 0;
        window = null;
        bindRegion = null;
        state = QUEUED;
        status = WcStatus.SUCCESS;
        resultLength = 0;
        rnrRetries = 0;
        bytesReceived = 0;
        segments.count = 0;
        segments.total = 0;
    }

    public boolean isLocal() {
        return kind >= KIND_BIND;
    }

    public boolean needsResponse() {
        return kind == KIND_READ || kind == KIND_COMP_EXCH || kind == KIND_FETCH_ADD;
    }
}
