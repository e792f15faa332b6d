package io.jdet;

/**
 * The tunables of collective groups ({@link Collective}), part of a {@link Configuration}. The switch points
 * default to MPICH's (Thakur, Rabenseifner, Gropp 2005), not DET's, whose zeros silently disabled two algorithms.
 *
 * @param timeoutMs          how long a running collective (or a join) may go without progress before it fails the
 *                           group: the bound on detecting a dead member
 * @param maxSize            the largest group; a larger join gets E2BIG
 * @param depth              collectives outstanding per group, the join included; one more gets ENOSPC
 * @param slotBytes          bytes per receive slot (a message travels in chunks of at most this)
 * @param slots              receive slots per peer (the credits a sender has towards it), or {@link #AUTO_SLOTS} (the
 *                           default) for {@link #slotsFor the group size's}
 * @param bcastShortMsg      below it (bytes) a broadcast is a binomial tree ({@code det_bcast_short_msg})
 * @param bcastLongMsg       below it a long broadcast's all-gather is recursive doubling when the size is a power
 *                           of two, else a ring ({@code det_bcast_long_msg})
 * @param bcastMinProcs      below this size a broadcast is always binomial ({@code det_bcast_min_procs})
 * @param allgatherShortMsg  below it (total bytes) a non power-of-two all-gather is Bruck's, else a ring
 * @param allgatherLongMsg   below it (total bytes) a power-of-two all-gather is recursive doubling
 * @param alltoallShortMsg   at most this per destination, and with at least {@code alltoallMinProcs} members, an
 *                           all-to-all is Bruck's
 * @param alltoallMediumMsg  at most this per destination an all-to-all posts every transfer at once; above it,
 *                           pairwise exchange
 * @param alltoallMinProcs   the least size for Bruck's all-to-all
 * @param allreduceShortMsg  below it (bytes), or with fewer elements than members, an all-reduce is recursive
 *                           doubling ({@code MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE}); at or above it Rabenseifner's
 *                           (a reduce-scatter by recursive halving, then an all-gather by recursive doubling) when
 *                           the size is a power of two, else a ring (reduce-scatter then all-gather around the ring)
 * @param allreduceRingMsg   at or above it (bytes) a long all-reduce is a ring even on a power-of-two group; MPICH
 *                           has no such switch (Rabenseifner's for every long message), hence the default
 *                           {@link Integer#MAX_VALUE}
 * @param rendezvousBytes    at or above it (bytes) a message between two members goes by rendezvous: the receiver
 *                           advertises its destination and the sender writes straight into it (no copy through
 *                           the receive slots, one round trip more before the data moves); below it, eager chunks
 *                           through the slots; {@link #AUTO_RENDEZVOUS} (the default) for {@link
 *                           #rendezvousBytesFor the link's}
 */
public record CollectiveTuning(long timeoutMs, int maxSize, int depth, int slotBytes, int slots, int bcastShortMsg,
                               int bcastLongMsg, int bcastMinProcs, int allgatherShortMsg, int allgatherLongMsg,
                               int alltoallShortMsg, int alltoallMediumMsg, int alltoallMinProcs,
                               int allreduceShortMsg, int allreduceRingMsg, long rendezvousBytes) {
    /**
     * {@link #slots} that {@link #slotsFor} picks by the group's size: {@value #SMALL_GROUP_SLOTS} per peer in a
     * group of up to {@value #SMALL_GROUP} members, {@value #LARGE_GROUP_SLOTS} in a larger one.
     */
    public static final int AUTO_SLOTS = 0;
    /** The largest group that {@link #AUTO_SLOTS} gives {@value #SMALL_GROUP_SLOTS} slots per peer. */
    public static final int SMALL_GROUP = 16;
    /** The slots per peer of {@link #AUTO_SLOTS} in a group of up to {@link #SMALL_GROUP} members. */
    public static final int SMALL_GROUP_SLOTS = 16;
    /** The slots per peer of {@link #AUTO_SLOTS} in a larger group. */
    public static final int LARGE_GROUP_SLOTS = 8;

    /**
     * {@link #rendezvousBytes} that {@link #rendezvousBytesFor} picks by the link: {@value #MEMORY_RENDEZVOUS_BYTES}
     * over memory (the in-process fabric, shared memory), {@value #NETWORK_RENDEZVOUS_BYTES} over a network link.
     */
    public static final long AUTO_RENDEZVOUS = 0;
    /** The rendezvous threshold of {@link #AUTO_RENDEZVOUS} on the in-process fabric and shared memory. */
    public static final long MEMORY_RENDEZVOUS_BYTES = 16_384;
    /** The rendezvous threshold of {@link #AUTO_RENDEZVOUS} over UDP and raw Ethernet. */
    public static final long NETWORK_RENDEZVOUS_BYTES = 32_768;

    /**
     * The defaults: 10 s timeout, 1024 members, 16 outstanding, slots of 16 KiB per peer as many as {@link
     * #AUTO_SLOTS} picks, MPICH's switches, rendezvous from where {@link #AUTO_RENDEZVOUS} says.
     */
    public static final CollectiveTuning DEFAULT = new CollectiveTuning(10_000, 1024, 16, 16_384, AUTO_SLOTS, 12_288,
        524_288,
        8, 81_920, 524_288, 256, 32_768, 8, 2048, Integer.MAX_VALUE, AUTO_RENDEZVOUS);

    /**
     * Checks the values.
     *
     * @throws DetException EINVAL if a value is out of range
     */
    public CollectiveTuning {
        if (timeoutMs < 1 || maxSize < 2 || depth < 1 || slotBytes < 64
            || slots != AUTO_SLOTS && (slots < 2 || slots > 4096)
            || bcastShortMsg < 0 || bcastLongMsg < 0 || bcastMinProcs < 2 || allgatherShortMsg < 0
            || allgatherLongMsg < 0 || alltoallShortMsg < 0 || alltoallMediumMsg < 0 || alltoallMinProcs < 2
            || allreduceShortMsg < 0 || allreduceRingMsg < 0 || rendezvousBytes < 0) {
            throw new DetException(Errno.EINVAL, "collective tunables out of range: " + this);
        }
    }

    /**
     * The tunables before {@link #rendezvousBytes} existed, with its default {@link #AUTO_RENDEZVOUS}.
     *
     * @param timeoutMs         see {@link #timeoutMs()}
     * @param maxSize           see {@link #maxSize()}
     * @param depth             see {@link #depth()}
     * @param slotBytes         see {@link #slotBytes()}
     * @param slots             see {@link #slots()}
     * @param bcastShortMsg     see {@link #bcastShortMsg()}
     * @param bcastLongMsg      see {@link #bcastLongMsg()}
     * @param bcastMinProcs     see {@link #bcastMinProcs()}
     * @param allgatherShortMsg see {@link #allgatherShortMsg()}
     * @param allgatherLongMsg  see {@link #allgatherLongMsg()}
     * @param alltoallShortMsg  see {@link #alltoallShortMsg()}
     * @param alltoallMediumMsg see {@link #alltoallMediumMsg()}
     * @param alltoallMinProcs  see {@link #alltoallMinProcs()}
     * @param allreduceShortMsg see {@link #allreduceShortMsg()}
     * @param allreduceRingMsg  see {@link #allreduceRingMsg()}
     * @throws DetException EINVAL if a value is out of range
     */
    public CollectiveTuning(final long timeoutMs, final int maxSize, final int depth, final int slotBytes,
                            final int slots, final int bcastShortMsg, final int bcastLongMsg, final int bcastMinProcs,
                            final int allgatherShortMsg, final int allgatherLongMsg, final int alltoallShortMsg,
                            final int alltoallMediumMsg, final int alltoallMinProcs, final int allreduceShortMsg,
                            final int allreduceRingMsg) {
        this(timeoutMs, maxSize, depth, slotBytes, slots, bcastShortMsg, bcastLongMsg, bcastMinProcs,
            allgatherShortMsg, allgatherLongMsg, alltoallShortMsg, alltoallMediumMsg, alltoallMinProcs,
            allreduceShortMsg, allreduceRingMsg, AUTO_RENDEZVOUS);
    }

    /**
     * A copy with another timeout.
     *
     * @param value the timeout in milliseconds, at least 1
     * @return the copy
     */
    public CollectiveTuning withTimeoutMs(final long value) {
        return new CollectiveTuning(value, maxSize, depth, slotBytes, slots, bcastShortMsg, bcastLongMsg,
            bcastMinProcs, allgatherShortMsg, allgatherLongMsg, alltoallShortMsg, alltoallMediumMsg,
            alltoallMinProcs, allreduceShortMsg, allreduceRingMsg, rendezvousBytes);
    }

    /**
     * A copy with another rendezvous threshold.
     *
     * @param bytes the least message that goes by rendezvous, at least 1 ({@link Long#MAX_VALUE}: never), or {@link
     *              #AUTO_RENDEZVOUS}
     * @return the copy
     * @throws DetException EINVAL if {@code bytes} is negative
     */
    public CollectiveTuning withRendezvousBytes(final long bytes) {
        return new CollectiveTuning(timeoutMs, maxSize, depth, slotBytes, slots, bcastShortMsg, bcastLongMsg,
            bcastMinProcs, allgatherShortMsg, allgatherLongMsg, alltoallShortMsg, alltoallMediumMsg,
            alltoallMinProcs, allreduceShortMsg, allreduceRingMsg, bytes);
    }

    /**
     * The receive slots per peer in a group of {@code groupSize} members: {@link #slots}, or for {@link #AUTO_SLOTS}
     * {@value #SMALL_GROUP_SLOTS} up to {@value #SMALL_GROUP} members and {@value #LARGE_GROUP_SLOTS} above. A
     * sender spends a credit per message into a peer's slots and the peer hands them back when half are spent, in a
     * send of its own if nothing flows its way (a broadcast's leaves): more slots, fewer such sends (a 4-member
     * 8-byte broadcast over UDP: 4.4 datagrams each with 8, 3.9 with 16), each slot costing its bytes twice per
     * peer (receive and bounce: 576 KiB per peer with 16 of 16 KiB and the 4 spare receives, 320 KiB with 8). Raises
     * nothing.
     *
     * @param groupSize the group's members
     * @return the slots per peer
     */
    public int slotsFor(final int groupSize) {
        if (slots != AUTO_SLOTS) {
            return slots;
        }
        return groupSize <= SMALL_GROUP ? SMALL_GROUP_SLOTS : LARGE_GROUP_SLOTS;
    }

    /**
     * The rendezvous threshold of a group whose members meet over the NIC at {@code nicAddress}: {@link
     * #rendezvousBytes}, or for {@link #AUTO_RENDEZVOUS} {@value #MEMORY_RENDEZVOUS_BYTES} on the in-process fabric
     * ({@code loop:}) and shared memory ({@code shm:}), where a copy through the slots costs more than the
     * rendezvous's round trip sooner (a 4-member 24 KiB all-to-all on the fabric: 58 µs eager, 27 by rendezvous),
     * and {@value #NETWORK_RENDEZVOUS_BYTES} over UDP and raw Ethernet (a 4-member 32 KiB all-to-all over UDP
     * loopback: 150 µs eager, 109 by rendezvous; at 16 KiB a 2-member exchange lost a third).
     *
     * @param nicAddress the address of the member's NIC ({@link Nic#address})
     * @return the least message that goes by rendezvous
     * @throws NullPointerException if {@code nicAddress} is null
     */
    public long rendezvousBytesFor(final String nicAddress) {
        java.util.Objects.requireNonNull(nicAddress, "nicAddress");
        if (rendezvousBytes != AUTO_RENDEZVOUS) {
            return rendezvousBytes;
        }
        return nicAddress.startsWith("loop:") || nicAddress.startsWith("shm:") ? MEMORY_RENDEZVOUS_BYTES
            : NETWORK_RENDEZVOUS_BYTES;
    }

    /**
     * A copy with other receive slots.
     *
     * @param bytes bytes per slot, at least 64
     * @param count slots per peer, in [2, 4096], or {@link #AUTO_SLOTS}
     * @return the copy
     */
    public CollectiveTuning withSlots(final int bytes, final int count) {
        return new CollectiveTuning(timeoutMs, maxSize, depth, bytes, count, bcastShortMsg, bcastLongMsg,
            bcastMinProcs, allgatherShortMsg, allgatherLongMsg, alltoallShortMsg, alltoallMediumMsg,
            alltoallMinProcs, allreduceShortMsg, allreduceRingMsg, rendezvousBytes);
    }
}
