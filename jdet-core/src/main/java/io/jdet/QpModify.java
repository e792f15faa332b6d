package io.jdet;

/**
 * What to change in a queue pair ({@code struct det_qp_mod}): each setter adds its DET modify flag.
 * Reusable; {@link #clear()} empties it.
 */
public final class QpModify {
    /** {@code DET_QP_MOD_STATE_FLAG}. */
    public static final int STATE = 0x01;
    /** {@code DET_QP_MOD_SQ_FLAG}. */
    public static final int SQ_SIZE = 0x02;
    /** {@code DET_QP_MOD_RQ_FLAG}. */
    public static final int RQ_SIZE = 0x04;
    /** {@code DET_QP_MOD_MAX_OR_FLAG}. */
    public static final int MAX_OR = 0x08;
    /** {@code DET_QP_MOD_MAX_IR_FLAG}. */
    public static final int MAX_IR = 0x10;

    private int flags;
    private QpState nextState;
    private int sqSize;
    private int rqSize;
    private int maxOr;
    private int maxIr;
    private int remoteQpNum;
    private String remoteAddress;

    /** Creates an empty modification. */
    public QpModify() {
    }

    /**
     * Asks for a state change.
     *
     * @param state the next state
     * @return this
     */
    public QpModify state(final QpState state) {
        this.nextState = state;
        flags |= STATE;
        return this;
    }

    /**
     * Asks to connect: state CONNECTED to the given remote queue pair.
     *
     * @param address the peer NIC's link address ({@link Nic#address()} there)
     * @param qpNum   the peer queue pair's number
     * @return this
     */
    public QpModify connect(final String address, final int qpNum) {
        this.remoteAddress = address;
        this.remoteQpNum = qpNum;
        return state(QpState.CONNECTED);
    }

    /**
     * Asks for a new send queue depth.
     *
     * @param size the depth
     * @return this
     */
    public QpModify sqSize(final int size) {
        this.sqSize = size;
        flags |= SQ_SIZE;
        return this;
    }

    /**
     * Asks for a new receive queue depth.
     *
     * @param size the depth
     * @return this
     */
    public QpModify rqSize(final int size) {
        this.rqSize = size;
        flags |= RQ_SIZE;
        return this;
    }

    /**
     * Asks for a new outbound read and atomic limit.
     *
     * @param value the limit
     * @return this
     */
    public QpModify maxOr(final int value) {
        this.maxOr = value;
        flags |= MAX_OR;
        return this;
    }

    /**
     * Asks for a new inbound read and atomic limit.
     *
     * @param value the limit
     * @return this
     */
    public QpModify maxIr(final int value) {
        this.maxIr = value;
        flags |= MAX_IR;
        return this;
    }

    /**
     * Empties the modification.
     *
     * @return this
     */
    public QpModify clear() {
        flags = 0;
        nextState = null;
        remoteAddress = null;
        return this;
    }

    /**
     * The modify flags set so far.
     *
     * @return the flags
     */
    public int flags() {
        return flags;
    }

    /**
     * The state asked for.
     *
     * @return the state, or null
     */
    public QpState nextState() {
        return nextState;
    }

    /**
     * The send queue depth asked for.
     *
     * @return the depth
     */
    public int sqSize() {
        return sqSize;
    }

    /**
     * The receive queue depth asked for.
     *
     * @return the depth
     */
    public int rqSize() {
        return rqSize;
    }

    /**
     * The outbound limit asked for.
     *
     * @return the limit
     */
    public int maxOr() {
        return maxOr;
    }

    /**
     * The inbound limit asked for.
     *
     * @return the limit
     */
    public int maxIr() {
        return maxIr;
    }

    /**
     * The peer queue pair number to connect to.
     *
     * @return the number
     */
    public int remoteQpNum() {
        return remoteQpNum;
    }

    /**
     * The peer NIC address to connect to.
     *
     * @return the address, or null
     */
    public String remoteAddress() {
        return remoteAddress;
    }
}
