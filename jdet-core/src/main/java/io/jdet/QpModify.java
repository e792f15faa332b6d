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
    /** The peer's start sequence numbers ({@code IBV_QP_RQ_PSN}); required to connect. */
    public static final int REMOTE_PSN = 0x20;
    /** This end's start sequence numbers ({@code IBV_QP_SQ_PSN}); optional, random by default. */
    public static final int LOCAL_PSN = 0x40;

    private int flags;
    private QpState nextState;
    private int sqSize;
    private int rqSize;
    private int maxOr;
    private int maxIr;
    private int remoteQpNum;
    private String remoteAddress;
    private long localPsn;
    private long remotePsn;

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
     * Asks to connect: state CONNECTED to the given remote queue pair. The peer's start sequence numbers are
     * needed too ({@link #connect(String, int, long)}): without them {@link QueuePair#modify} fails with EINVAL.
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
     * Asks to connect: state CONNECTED to the given remote queue pair, whose streams start where its
     * {@link QpAttributes#localPsn()} says (as ibverbs' {@code rq_psn}). Frames of an earlier connection between
     * the same queue pairs then fall outside the new connection's sequence space.
     *
     * @param address   the peer NIC's link address ({@link Nic#address()} there)
     * @param qpNum     the peer queue pair's number
     * @param remotePsn the peer's start sequence numbers, {@code peer.query().localPsn()}
     * @return this
     */
    public QpModify connect(final String address, final int qpNum, final long remotePsn) {
        this.remotePsn = remotePsn;
        flags |= REMOTE_PSN;
        return connect(address, qpNum);
    }

    /**
     * Sets this end's start sequence numbers ({@code sq_psn}) instead of the random ones the queue pair drew: the
     * request stream's in the low 32 bits, the response stream's in the high 32. Only with a connect from IDLE.
     * Choosing them predictably gives up the protection random ones give against blind injection.
     *
     * @param psn the start sequence numbers
     * @return this
     */
    public QpModify localPsn(final long psn) {
        this.localPsn = psn;
        flags |= LOCAL_PSN;
        return this;
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
     * The peer's start sequence numbers ({@link #REMOTE_PSN}).
     *
     * @return request stream in the low 32 bits, response stream in the high 32
     */
    public long remotePsn() {
        return remotePsn;
    }

    /**
     * This end's start sequence numbers ({@link #LOCAL_PSN}).
     *
     * @return request stream in the low 32 bits, response stream in the high 32
     */
    public long localPsn() {
        return localPsn;
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
