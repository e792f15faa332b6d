package io.jdet.internal.protocol;

import io.jdet.WcStatus;
import io.jdet.WcType;

/** One send queue slot: a posted work request and its protocol progress. Preallocated and reused. */
final class SendWr extends WorkRequest {
    static final int QUEUED = 0;
    static final int ACTIVE = 1;
    static final int DONE = 2;

    /** Internal kinds beyond the completion types. */
    static final int KIND_SEND = 0;
    static final int KIND_WRITE = 1;
    static final int KIND_READ = 2;
    static final int KIND_COMP_EXCH = 3;
    static final int KIND_FETCH_ADD = 4;
    static final int KIND_BIND = 5;
    static final int KIND_BIND_TYPE2 = 6;
    static final int KIND_LOCAL_INVALIDATE = 7;

    long id;
    int kind;
    WcType type;
    int flags;
    int immediate;
    long remoteAddress;
    int rKey;
    long operand1;
    long operand2;
    MwImpl window;
    MrImpl bindRegion;
    long bindAddress;
    long bindLength;
    int bindAccess;
    int bindKey;
    /** Position in the send queue (a counter over the queue pair's life); travels as the read/atomic id. */
    long ordinal;
    int state;
    WcStatus status;
    int resultLength;
    int startSeq;
    int endSeq;
    int msgId;
    int rnrRetries;
    /** A read's response bytes placed so far: the next response frame must start here. */
    int bytesReceived;

    SendWr(final int sges) {
        super(sges);
    }

    void reset(final long wrId, final int wrKind, final WcType wcType, final int wrFlags) {
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

    boolean isLocal() {
        return kind >= KIND_BIND;
    }

    boolean needsResponse() {
        return kind == KIND_READ || kind == KIND_COMP_EXCH || kind == KIND_FETCH_ADD;
    }
}
