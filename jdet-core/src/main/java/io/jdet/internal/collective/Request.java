package io.jdet.internal.collective;

import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;

/** One posted collective, checked, waiting for its turn: what {@link Algorithms} builds a schedule from. */
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
}
