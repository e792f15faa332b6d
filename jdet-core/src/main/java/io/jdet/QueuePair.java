package io.jdet;

/**
 * A queue pair ({@code struct det_qp}): a send queue and a receive queue connected to one remote queue pair.
 *
 * <p>Posting is allocation free and thread safe: the verbs copy the data segments they are given, so the caller
 * may reuse its {@link DataSegment} array at once (the bytes they point to must stay untouched until the work
 * request completes). Work requests run in post order; completions come in post order per queue.
 *
 * <p>Errors every post, receives included, may raise: EIO once the NIC has failed fatally (its engine died; it
 * raised {@link EventCode#NIC_FATAL}, every queue pair is in ERROR and every outstanding work request completed
 * with {@link WcStatus#FLUSHED}; only polling, querying and closing still work).
 * Errors every send-queue post may raise, besides those listed per verb: ENOTCONN if the queue pair is not
 * CONNECTED; ENOSPC if the send queue is full (slots free when completions are polled; suppressed requests free
 * theirs only with a later signaled completion of the same queue); EINVAL for unknown flags or a negative count.
 * Errors of every local data segment: E2BIG if there are more segments than the queue allows; ENXIO for an
 * unknown local key (or a window's key); EPERM if the region is in another domain; ERANGE if the segment lies
 * outside the region; EACCES if the region lacks the right (LOCAL_READ to send from, LOCAL_WRITE to receive into).
 * A failure found at the peer (a bad remote key, missing rights, bounds) completes the work request with its own
 * {@link WcStatus}, then both queue pairs go to ERROR with asynchronous events. A peer that breaks the protocol (a
 * NAK or DISCONNECT whose code is out of range, a response that matches no request or leaves its range) fails the
 * connection the same way: the request it answered completes with {@link WcStatus#BAD_RESPONSE}, the queue pair
 * goes to ERROR with a local event, and the NIC counts it in {@code rx.protocol_error}; a malformed request from the
 * peer is refused with a NAK as in the table of {@code docs/PROTOCOL.md} section 6.6.
 *
 * <p>A destroyed queue pair, or a deregistered region or destroyed window handed to a verb, raises
 * {@link IllegalStateException}, as every closed jdet object does.
 */
public interface QueuePair extends AutoCloseable {

    /**
     * This queue pair's number, for the peer to connect to.
     *
     * @return the number
     */
    int number();

    /**
     * The current state and sizes ({@code det_query_qp}).
     *
     * @return the attributes
     */
    QpAttributes query();

    /**
     * Changes the state and/or sizes ({@code det_modify_qp}) following DET's transition table (see
     * {@link QpState}). Entering ERROR flushes every outstanding work request, suppressed ones too, with
     * {@link WcStatus#FLUSHED}. Entering IDLE discards queued work and resets the protocol state.
     *
     * @param modify what to change
     * @throws DetException EPERM for an illegal transition; EINVAL for a resize on a transition other than
     *                      IDLE to IDLE or IDLE to CONNECTED, a size above the maximum, no state given with the
     *                      state flag, a connect without a peer or without the peer's start sequence numbers
     *                      ({@link QpModify#connect(String, int, long)}), or start sequence numbers of this end
     *                      given other than with a connect from IDLE; ENODEV if the peer address is not reachable
     *                      from this NIC's link; EBUSY for a size below the current depth or a max_or below the
     *                      reads and atomics in flight; EIO if the NIC failed fatally
     *                      ({@link EventCode#NIC_FATAL})
     */
    void modify(QpModify modify);

    /**
     * Posts a send ({@code det_send}). With no segments it sends a zero-length message.
     *
     * @param id        returned in the completion
     * @param segments  the data to send, gathered in order
     * @param count     how many segments to use
     * @param flags     {@link WrFlags}
     * @param immediate sent with {@link WrFlags#IMMEDIATE}; without the flag it is ignored (the receiver reads 0)
     * @throws DetException see the class description
     */
    void send(long id, DataSegment[] segments, int count, int flags, int immediate);

    /**
     * Posts a send that also invalidates a type 2 window's remote key at the peer ({@code IBV_WR_SEND_WITH_INV}).
     * If the peer cannot invalidate it, this work request completes with {@link WcStatus#INVALID_REQUEST}.
     *
     * @param id         returned in the completion
     * @param segments   the data to send
     * @param count      how many segments to use
     * @param flags      {@link WrFlags}, without IMMEDIATE
     * @param rKey       the peer's window key to invalidate
     * @throws DetException EINVAL with {@link WrFlags#IMMEDIATE}; see the class description
     */
    void sendInvalidate(long id, DataSegment[] segments, int count, int flags, int rKey);

    /**
     * Posts a receive ({@code det_recv}); allowed in IDLE and CONNECTED.
     *
     * @param id       returned in the completion
     * @param segments where to scatter the message
     * @param count    how many segments to use
     * @throws DetException ENOTCONN in DISCONNECT or ERROR; ENOSPC if the receive queue is full; E2BIG, ENXIO,
     *                      EPERM, ERANGE, EACCES for a bad segment (see the class description)
     */
    void recv(long id, DataSegment[] segments, int count);

    /**
     * Posts an RDMA read ({@code det_read}) of {@code sum(segment lengths)} bytes from the peer.
     *
     * @param id            returned in the completion
     * @param segments      where to scatter what is read
     * @param count         how many segments to use, at least 1
     * @param remoteAddress the peer's virtual address (an offset for a zero-based window)
     * @param rKey          the peer's remote key
     * @param flags         {@link WrFlags}
     * @throws DetException ENOBUFS if max_or is 0; EINVAL for count 0; see the class description
     */
    void read(long id, DataSegment[] segments, int count, long remoteAddress, int rKey, int flags);

    /**
     * Posts an RDMA write ({@code det_write}). With {@link WrFlags#IMMEDIATE} it also consumes a receive at the
     * peer, which completes with the immediate value and the byte count.
     *
     * @param id            returned in the completion
     * @param segments      the data to write
     * @param count         how many segments to use
     * @param remoteAddress the peer's virtual address (an offset for a zero-based window)
     * @param rKey          the peer's remote key
     * @param flags         {@link WrFlags}
     * @param immediate     sent with {@link WrFlags#IMMEDIATE}; without the flag it is ignored (the receiver reads 0)
     * @throws DetException see the class description
     */
    void write(long id, DataSegment[] segments, int count, long remoteAddress, int rKey, int flags, int immediate);

    /**
     * Posts a 64-bit compare-and-swap ({@code det_comp_exch}); the original value lands in {@code local}
     * (8 bytes, little-endian).
     *
     * @param id            returned in the completion
     * @param compare       the value expected
     * @param exchange      the value stored if the expected value was found
     * @param local         where the original value goes
     * @param remoteAddress the peer's 8-byte aligned address
     * @param rKey          the peer's remote key
     * @param flags         {@link WrFlags}
     * @throws DetException EINVAL if the remote address is not 8-byte aligned; EOVERFLOW if {@code local} is
     *                      shorter than 8 bytes; ENOBUFS if max_or is 0; see the class description
     */
    void compExch(long id, long compare, long exchange, DataSegment local, long remoteAddress, int rKey, int flags);

    /**
     * Posts a 64-bit fetch-and-add ({@code det_fetch_add}); the original value lands in {@code local}.
     *
     * @param id            returned in the completion
     * @param add           the value to add
     * @param local         where the original value goes
     * @param remoteAddress the peer's 8-byte aligned address
     * @param rKey          the peer's remote key
     * @param flags         {@link WrFlags}
     * @throws DetException the errors of {@link #compExch}
     */
    void fetchAdd(long id, long add, DataSegment local, long remoteAddress, int rKey, int flags);

    /**
     * Binds a type 1 window to a range of a region ({@code det_bind}, {@code ibv_bind_mw}) and returns its new
     * remote key; every bind gives a key other than the window's last 255 (its low 8 bits count the window's
     * binds, as InfiniBand's key does: a peer that may still hold a key from 256 binds ago must be given a new
     * window instead), and the old one stops working. A length of 0 unbinds (region, address and access are then
     * ignored) and returns the window's now-unbound key. The bind runs in send queue order: work requests posted
     * after it see the new binding, and it completes with {@link WcType#BIND}. The region is checked again as the
     * bind runs: one deregistered or modified since the post (moved to another domain, its rights changed) fails
     * the bind with {@link WcStatus#BIND_ERR}. A bind that completes with an error or FLUSHED leaves the window
     * unbound: neither its key nor the one before grants access (do not hand out a key before its successful
     * completion).
     *
     * @param id      returned in the completion
     * @param window  a type 1 window
     * @param region  the region to bind to
     * @param address the first byte of the window, inside the region
     * @param length  the length in bytes, at most 2^31
     * @param access  {@link Access}: REMOTE_READ and/or REMOTE_WRITE and/or REMOTE_ATOMIC
     * @param flags   {@link WrFlags}
     * @return the new remote key
     * @throws DetException EPERM if the queue pair, window and region are not in one domain (a window or region of
     *                      another NIC is in another domain); EINVAL for a type 2
     *                      window, a length above 2^31, unknown bits, or ZERO_BASED; ERANGE if the range leaves the
     *                      region; EACCES if the window grants no remote right (as det_bind), the region lacks
     *                      MW_BIND, or the window asks for REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE on the
     *                      region or REMOTE_READ without LOCAL_READ; ENOTCONN and ENOSPC as for every post (checked
     *                      before anything changes)
     * @throws IllegalStateException if the queue pair or window is destroyed, or the region deregistered
     */
    int bind(long id, MemoryWindow window, MemoryRegion region, long address, long length, int access, int flags);

    /**
     * Posts a bind of a type 2 window ({@code IBV_WR_BIND_MW}) with the caller's key: the window's index with a
     * new 8-bit tag, normally {@code (window.rKey() & ~0xff) | ((window.rKey() + 1) & 0xff)}. The window must be
     * unbound (fresh, or invalidated) when the bind runs, else it completes with {@link WcStatus#BIND_ERR} and the
     * queue pair goes to ERROR. A type 2 window may be used remotely only through this queue pair.
     *
     * @param id      returned in the completion
     * @param window  a type 2 window
     * @param rKey    the new key
     * @param region  the region to bind to
     * @param address the first byte of the window inside the region
     * @param length  the length in bytes, 1 to 2^31
     * @param access  {@link Access}: remote rights, or none (ibv_bind_mw allows 0: the window then grants nothing),
     *                optionally ZERO_BASED
     * @param flags   {@link WrFlags}
     * @throws DetException EINVAL for a type 1 window, length 0, or a key of another window; the other errors of
     *                      {@link #bind}, except that a window granting no remote right is allowed
     */
    void bindType2(long id, MemoryWindow window, int rKey, MemoryRegion region, long address, long length,
                   int access, int flags);

    /**
     * Posts a local invalidate of a type 2 window key ({@code IBV_WR_LOCAL_INV}); it runs in send queue order and
     * completes with {@link WcType#LOCAL_INVALIDATE}, or with {@link WcStatus#LOCAL_OP_ERR} (and the queue pair to
     * ERROR) if the key names no bound type 2 window.
     *
     * @param id    returned in the completion
     * @param rKey  the key to invalidate
     * @param flags {@link WrFlags}
     * @throws DetException ENOTCONN, ENOSPC, EINVAL as for every post
     */
    void localInvalidate(long id, int rKey, int flags);

    /**
     * Destroys the queue pair ({@code det_destroy_qp}): tells a connected peer, flushes outstanding work to the
     * completion queues, and frees the number.
     */
    @Override
    void close();
}
