package io.jdet;

/**
 * A collective group ({@code struct det_co}), created by {@link ProtectionDomain#createCollective}: members on any
 * link join it with a common tag, then post collectives that complete on the group's completion queue with DET's
 * types ({@link WcType#JOIN} to {@link WcType#ALLTOALLV}, plus {@link WcType#ALLREDUCE} and {@link WcType#REDUCE})
 * and the total length (0 for a join, a barrier and a failure).
 *
 * <p><b>Progress.</b> The group advances when its completion queue is {@link CompletionQueue#poll polled}: each poll
 * first runs the group's step machine (it reaps the internal queue pairs' completions, posts the next sends as data
 * arrives, and checks the timeout), then returns the user's completions. No engine thread runs a collective, so a
 * member that waits for a completion must keep polling (a busy loop, or between other work); a member that stops
 * polling stalls every other member until the timeout fails the group. Transport-level work (acknowledgements,
 * retransmission) goes on without polling, so a member that polls late loses nothing. The join is the exception: it
 * runs on a thread of its own (it waits on the connection manager) and its completion appears on the next poll.
 * One thread may drive many members (one poll per member in turn), as the tests and {@code jdet perf --tests co-*}
 * do. Members must post the same collectives in the same order (as in MPI); a mismatch the group can detect (a
 * different collective or length) fails it.
 *
 * <p><b>Events.</b> The group's internal queue pairs (a mesh of one per other member, plus the join's control queue
 * pairs) raise no events of their own: the user's event queue sees only the group's {@link EventCode#CO_ERROR}
 * (type {@link ResourceType#CO}, this group as handle) when a collective fails, and {@link EventCode#CO_DESTROYED}
 * when the group breaks with none outstanding (another member left). Their completions never reach the group's
 * completion queue either.
 *
 * <p><b>Leaving.</b> {@link #close} tears the connections down at once; a member still finishing the last
 * collective (its frames not yet acknowledged) then fails with CO_ERROR. As with MPI_Finalize, agree on the end
 * outside the group (or with a last barrier whose completion every member reports) before closing.
 *
 * <p><b>Queueing.</b> Collectives may be posted back to back, up to {@link CollectiveTuning#depth()} outstanding
 * (the join included); they run and complete in posting order. DET allowed one.
 *
 * <p><b>Buffers.</b> Every {@link DataSegment} must name memory registered in the group's domain: LOCAL_READ for
 * what is sent, LOCAL_WRITE for what is received (both for a broadcast's destination, which the inner members of
 * its tree forward from). Each is checked when the collective is posted, before it takes a slot, so a refused post
 * leaves the group as it was (DET's stuck work request is gone). The memory must stay untouched, and its region
 * registered, until the collective completes: a region deregistered or re-keyed meanwhile is found before the
 * collective touches it again, and fails the group with {@link WcStatus#LOCAL_PROTECTION_ERR} (a deregistration
 * waits for a step under way, so the memory is never written after {@code close} returned). As in MPI, a source may
 * not overlap a destination of the same scatter, gather or all-to-all (EINVAL at post); a null source asks for in
 * place where a verb offers it.
 *
 * <p><b>What a completion says.</b> As in MPI, a member's successful completion says that its own part is done:
 * what it received is in place and its buffers may be reused. It does not say that the other members have their
 * data yet: a member that only sends (a broadcast's root, a leaf of a gather) completes once its data has left its
 * buffers, and learns of a member that failed afterwards at its next collective.
 *
 * <p><b>Errors of every post</b> besides those listed per verb: ENOTCONN if the group is not joined (no join posted,
 * or it failed) or has failed; ENOSPC if {@link CollectiveTuning#depth()} collectives are outstanding; EINVAL for
 * unknown flags (only {@link WrFlags#SUPPRESSED} is known), a root outside [0, size), a null segment where one is
 * needed, or an array whose length is not the group size; and per data segment ENXIO (unknown local key), EPERM
 * (region in another domain), ERANGE (outside its region), EACCES (region without the right).
 *
 * <p><b>Failure.</b> When a member dies, its connection fails, or a collective makes no progress for
 * {@link CollectiveTuning#timeoutMs()}, the running collective completes with an error status
 * ({@link WcStatus#RETRY_EXCEEDED} for a timeout or a lost connection, {@link WcStatus#BAD_RESPONSE} for a
 * member's message that breaks the protocol, {@link WcStatus#LOCAL_OP_ERR} when this member cannot do its part,
 * say its scratch memory cannot be registered, else the failed transfer's status), the queued ones with
 * {@link WcStatus#FLUSHED}, an {@link EventCode#CO_ERROR} event (type {@link ResourceType#CO}, this group as handle)
 * is raised, and the group tears its connections down so that every other member fails the same way. Later posts
 * raise ENOTCONN. Never a hang.
 */
public interface Collective extends AutoCloseable {

    /**
     * Joins the group ({@code det_join}): completes with {@link WcType#JOIN} once every member has joined. Rank 0 is
     * the root and listens on the connection manager service derived from the tag; the others connect to it at
     * {@code rootAddress}, so the members find each other by address and tag (DET's broadcast join needs an L2
     * broadcast that UDP lacks, and its single join frame capped a group at 357). Every member must run with the
     * same {@link CollectiveTuning} in what decides how messages travel (slot size and count, the rendezvous threshold
     * its link resolves, the algorithm switch points): the root refuses a member that differs, whose JOIN then
     * completes at once with {@link WcStatus#REMOTE_OP_ERR} (a later post's ENOTCONN says why), while the root goes
     * on waiting for a member that agrees.
     *
     * @param id          returned in the completion
     * @param tag         the group's tag, the same on every member and unique among groups
     * @param size        the number of members
     * @param rank        this member's rank in [0, size)
     * @param rootAddress rank 0's {@link Nic#address()} (ignored on rank 0)
     * @param flags       {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL for size below 2, a rank outside [0, size), a null root address or unknown flags;
     *                      E2BIG for a size above {@link CollectiveTuning#maxSize()}, or one whose mesh (a completion
     *                      queue entry per send and receive slot, a region of every peer's slots) would exceed the
     *                      NIC's largest completion queue or region ({@link NicAttributes}); EBUSY if this group has
     *                      already joined or is joining; EEXIST if a group of this process joined the tag with another
     *                      size, or with this rank
     */
    void join(long id, long tag, int size, int rank, String rootAddress, int flags);

    /**
     * This member's rank, or -1 before {@link #join}.
     *
     * @return the rank
     */
    int rank();

    /**
     * The group size, or 0 before {@link #join}.
     *
     * @return the size
     */
    int size();

    /**
     * A barrier ({@code det_barrier}): completes once every member entered it; dissemination, ⌈lg p⌉ rounds.
     *
     * @param id    returned in the completion
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException the errors of every post (see the class description)
     */
    void barrier(long id, int flags);

    /**
     * A broadcast ({@code det_bcast}): the root's segment is copied into every other member's segment, which must
     * have the same length.
     *
     * @param id      returned in the completion
     * @param root    the rank that sends
     * @param segment the source at the root (LOCAL_READ), the destination elsewhere (LOCAL_WRITE and LOCAL_READ)
     * @param flags   {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL for a bad root or a null segment; the errors of every post
     */
    void bcast(long id, int root, DataSegment segment, int flags);

    /**
     * A scatter ({@code det_scatter}): the root's source is cut into size equal blocks, block i to rank i.
     *
     * @param id    returned in the completion
     * @param root  the rank that sends
     * @param src   the root's source of size times the block length; ignored elsewhere (may be null)
     * @param dst   one block; may be null at the root (its block is then not copied)
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if the source length does not divide by the size (DET's man page says EIO; its
     *                      code and jdet return EINVAL), if the destination is not one block long, or is null away
     *                      from the root; the errors of every post
     */
    void scatter(long id, int root, DataSegment src, DataSegment dst, int flags);

    /**
     * A scatter of per-member lengths ({@code det_scatterv}): {@code src[i]} goes to rank i.
     *
     * @param id    returned in the completion
     * @param root  the rank that sends
     * @param src   at the root, one segment per rank (its own may be null); ignored elsewhere
     * @param dst   where this member's part lands; its length must equal the root's {@code src[rank]} (a
     *              mismatch fails the group); may be null at the root
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if the root's array is null or not size long, dst is null away from the root, or
     *                      the root gives both its own block and dst and their lengths differ; the errors of every
     *                      post
     */
    void scatterv(long id, int root, DataSegment[] src, DataSegment dst, int flags);

    /**
     * A gather ({@code det_gather}): rank i's block lands at block i of the root's destination.
     *
     * @param id    returned in the completion
     * @param root  the rank that receives
     * @param src   one block; may be null at the root (its block is then left as is)
     * @param dst   the root's destination of size times the block length; ignored elsewhere
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if the destination length does not divide by the size (DET's man page: EIO), the
     *                      source is not one block, or is null away from the root; the errors of every post
     */
    void gather(long id, int root, DataSegment src, DataSegment dst, int flags);

    /**
     * A gather of per-member lengths ({@code det_gatherv}): rank i's source lands in the root's {@code dst[i]}.
     *
     * @param id    returned in the completion
     * @param root  the rank that receives
     * @param src   this member's part (may be null at the root)
     * @param dst   at the root, one segment per rank, each as long as that rank's source; ignored elsewhere
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if the root's array is null or not size long, src is null away from the root, or
     *                      the root gives both src and its own {@code dst[root]} and their lengths differ; the
     *                      errors of every post
     */
    void gatherv(long id, int root, DataSegment src, DataSegment[] dst, int flags);

    /**
     * An all-gather ({@code det_allgather}): every member gets every member's block, in rank order.
     *
     * @param id    returned in the completion
     * @param src   this member's block, or null if it is already in place at block {@code rank} of dst
     * @param dst   size times the block length
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if dst is null, its length does not divide by the size (man page: EIO), or the
     *                      source is not one block long; the errors of every post
     */
    void allgather(long id, DataSegment src, DataSegment dst, int flags);

    /**
     * An all-gather of per-member lengths ({@code det_allgatherv}): rank i's block lands in every {@code dst[i]}.
     *
     * @param id    returned in the completion
     * @param src   this member's block, or null if it is already in {@code dst[rank]}; as long as {@code dst[rank]}
     * @param dst   one segment per rank
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if dst is null or not size long, a segment of it is null, or the source length
     *                      differs from {@code dst[rank]}; the errors of every post
     */
    void allgatherv(long id, DataSegment src, DataSegment[] dst, int flags);

    /**
     * An all-to-all ({@code det_alltoall}): block j of rank i's source lands at block i of rank j's destination.
     *
     * @param id    returned in the completion
     * @param src   size blocks
     * @param dst   size blocks of the same length
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if a segment is null, the lengths differ or do not divide by the size (man
     *                      page: EIO); the errors of every post
     */
    void alltoall(long id, DataSegment src, DataSegment dst, int flags);

    /**
     * An all-to-all of per-pair lengths ({@code det_alltoallv}): {@code src[j]} of rank i lands in {@code dst[i]} of
     * rank j, whose lengths must agree (a mismatch fails the group).
     *
     * @param id    returned in the completion
     * @param src   one segment per rank
     * @param dst   one segment per rank
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if an array is null, not size long, or holds a null, or if this member's own
     *                      {@code src[rank]} and {@code dst[rank]} differ in length; the errors of every post
     */
    void alltoallv(long id, DataSegment[] src, DataSegment[] dst, int flags);

    /**
     * An all-reduce (jdet extension): every member's destination gets the element-wise reduction of every
     * member's source.
     *
     * @param id    returned in the completion
     * @param src   the elements, or null for in place (dst holds them)
     * @param dst   where the result lands, as long as the source
     * @param op    how elements combine
     * @param type  the element type
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException EINVAL if dst, op or type is null, a length is not a multiple of 8, the lengths differ,
     *                      or a bitwise op is asked of {@link ReduceType#FLOAT64}; E2BIG above half the NIC's largest
     *                      region ({@link NicAttributes#maxMrSize()}: the scratch memory of a reduction holds two such
     *                      buffers); the errors of every post
     */
    void allreduce(long id, DataSegment src, DataSegment dst, ReduceOp op, ReduceType type, int flags);

    /**
     * A reduce (jdet extension): the root's destination gets the element-wise reduction of every member's source.
     *
     * @param id    returned in the completion
     * @param root  the rank that receives
     * @param src   the elements (may be null at the root for in place: dst holds them)
     * @param dst   the root's destination, as long as the source; ignored elsewhere
     * @param op    how elements combine
     * @param type  the element type
     * @param flags {@link WrFlags#SUPPRESSED} or 0
     * @throws DetException the errors of {@link #allreduce}, with src required away from the root
     */
    void reduce(long id, int root, DataSegment src, DataSegment dst, ReduceOp op, ReduceType type, int flags);

    /**
     * Destroys the group ({@code det_destroy_co}): outstanding collectives complete with {@link WcStatus#FLUSHED},
     * the connections to the other members close (they see {@link EventCode#CO_ERROR} if a collective was still
     * running), and the internal queue pairs and regions are freed. Closing twice does nothing.
     */
    @Override
    void close();
}
