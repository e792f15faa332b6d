package io.jdet.internal.link;

import io.jdet.internal.wire.FrameGather;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The raw Ethernet link: NIC {@code eth:<interface>} sends jdet frames straight in Ethernet frames of the
 * configured EtherType ({@link Configuration#ethEtherType}) through an {@code AF_PACKET} socket bound to that
 * interface; peers are named by MAC ({@link EthAddress}). Opening needs CAP_NET_RAW in the network namespace of
 * the interface; without it the open fails with EPERM and never falls back to another link.
 *
 * <p>Frame size is the interface MTU (a jumbo MTU gives jumbo frames): layer 2 does not fragment, so the engine
 * splits messages at it. Transmit is single-copy and batched: {@link #send} stages each frame (Ethernet header,
 * jdet header, payload) in the link's own memory, never handing the kernel the address of registered memory, and
 * {@link #flush} hands every staged frame to one {@code sendmmsg}; the engine lock ({@link LinkLock}) flushes when
 * its holder lets go, and a full batch flushes at once. Receive takes up to {@value #RX_BATCH} frames per
 * {@code recvmmsg}; each is hostile until {@link EthFrame#check} and the CRC passed. Both calls go through
 * handles that do not capture errno (a capturing call allocates when the JIT does not inline it); a send that fails
 * is repeated with capture to learn why. A waiter's {@link #await} (the progress thread, or an application thread
 * waiting for an event) busy-polls the socket for {@link Configuration#ethSpinUs}, then blocks in {@code ppoll} on it
 * and the waiter's own eventfd, which {@link #wakeup} writes ({@link SocketWait}). The kernel's {@code PACKET_STATISTICS} (frames it received and dropped
 * because the socket buffer was full) are added to the link's counters.
 *
 * <p>One NIC per interface and EtherType in a network namespace: two would each receive the other's frames. An
 * abstract Unix socket named after the interface and EtherType holds the claim for as long as the NIC is open
 * (also when the process dies: the kernel releases it), so a second open fails with EADDRINUSE.
 */
public final class EthLink implements Link {
    /** Frames taken by one {@code recvmmsg}. */
    static final int RX_BATCH = 32;
    /** Frames staged before {@link #send} flushes by itself. */
    static final int TX_BATCH = 32;
    /** The largest frame the engine's 16-bit payload length and a UDP-sized buffer allow. */
    private static final int MAX_FRAME = 65_507;
    /** The smallest MTU that leaves room for a header and some payload. */
    private static final int MIN_MTU = 576;
    /** Receive buffer: 1024 frames of the kernel's per-frame charge at least, 8 MiB at least. */
    private static final int MIN_SOCKET_BUFFER = 8 << 20;
    private static final int LINUX_EAGAIN = 11;
    private static final int LINUX_EINTR = 4;
    private static final int LINUX_ENOBUFS = 105;

    private final Arena arena = Arena.ofShared();
    private final int fd;
    private final SocketWait wait;
    private final int claimFd;
    private final EthAddress local;
    private final String address;
    private final int mtu;
    private final int etherType;
    private final int slotSize;

    private final MemorySegment[] txSlots = new MemorySegment[TX_BATCH];
    private final MemorySegment txMsgs;
    /** {@code txMsgs} from each message on, made once: the data path allocates nothing. */
    private final MemorySegment[] txMsgsFrom = new MemorySegment[TX_BATCH];
    private final MemorySegment txIovs;
    private final MemorySegment txErrno;
    private int staged;

    private final MemorySegment[] rxSlots = new MemorySegment[RX_BATCH];
    private final MemorySegment[] rxFrames = new MemorySegment[RX_BATCH];
    private final ByteBuffer[] rxViews = new ByteBuffer[RX_BATCH];
    private final MemorySegment rxMsgs;
    /** Each received frame's {@code sockaddr_ll}: its packet type says whether the kernel took it as ours. */
    private final MemorySegment rxNames;
    private final FrameCrc rxCrc = new FrameCrc();

    private final MemorySegment stats;
    private final MemorySegment statsLength;
    private final MemorySegment statsErrno;
    private volatile boolean closed;

    private long rxShort;
    private long rxForeign;
    private long rxOwn;
    private long rxTruncated;
    private long rxBadCrc;
    private long txErrors;
    private long txOversize;
    private long kernelPackets;
    private long kernelDrops;

    /**
     * Opens a raw Ethernet NIC on an interface.
     *
     * @param nicName       {@code eth:<interface>}
     * @param configuration the device configuration: EtherType and spin time
     * @throws DetException EPERM if the process lacks CAP_NET_RAW (the message says how to grant it); ENODEV if
     *                      the name is not valid, the interface does not exist, is down, is no Ethernet interface
     *                      or its MTU is below 576, or the platform is not 64-bit Linux; EADDRINUSE if a NIC on
     *                      this interface and EtherType is open already in this network namespace; nothing stays
     *                      open
     */
    public EthLink(final String nicName, final Configuration configuration) {
        if (!Posix.supported()) {
            throw new DetException(Errno.ENODEV, "the raw Ethernet link needs 64-bit Linux");
        }
        final String ifName = EthAddress.parseNicName(nicName);
        this.etherType = configuration.ethEtherType();
        int socket = -1;
        SocketWait waits = null;
        int claim = -1;
        try {
            final MemorySegment errno = Posix.newErrnoState(arena);
            socket = (int) Posix.SOCKET.invokeExact(errno, PacketCalls.AF_PACKET,
                PacketCalls.SOCK_RAW | Posix.SOCK_NONBLOCK | Posix.SOCK_CLOEXEC, 0);
            if (socket < 0) {
                throw socketFailure(nicName, Posix.errno(errno));
            }
            final EthInterface nif = EthInterface.query(socket, ifName, arena, errno);
            this.local = new EthAddress(ifName, nif.mac());
            this.mtu = Math.min(nif.mtu(), MAX_FRAME);
            if (mtu < MIN_MTU) {
                throw new DetException(Errno.ENODEV, nicName + ": MTU " + nif.mtu() + " is below " + MIN_MTU);
            }
            claim = claim(nicName, nif.index(), errno);
            bind(socket, nif.index(), errno, nicName);
            waits = new SocketWait(arena, "Ethernet link",
                TimeUnit.MICROSECONDS.toNanos(configuration.ethSpinUs()));
        } catch (final Throwable t) {
            if (waits != null) {
                waits.close();
            }
            Descriptors.close(claim);
            Descriptors.close(socket);
            arena.close();
            throw t instanceof DetException e ? e : new DetException(Errno.ENODEV, "cannot open " + nicName + ": " + t);
        }
        this.fd = socket;
        this.wait = waits;
        waits.watch(socket);
        this.claimFd = claim;
        this.address = local.toString();
        this.slotSize = (EthFrame.HEADER + mtu + 63) & ~63;
        this.txMsgs = arena.allocate((long) Posix.MMSGHDR_SIZE * TX_BATCH, 8);
        this.txIovs = arena.allocate((long) Posix.IOVEC_SIZE * TX_BATCH, 8);
        this.txErrno = Posix.newErrnoState(arena);
        this.rxMsgs = arena.allocate((long) Posix.MMSGHDR_SIZE * RX_BATCH, 8);
        this.rxNames = arena.allocate((long) PacketCalls.SOCKADDR_LL_SIZE * RX_BATCH, 8);
        this.stats = arena.allocate(PacketCalls.TPACKET_STATS_SIZE, 8);
        this.statsLength = arena.allocate(ValueLayout.JAVA_INT);
        this.statsErrno = Posix.newErrnoState(arena);
        prepareBuffers();
    }

    /** Lays out the staging slots and the message headers that point at them. */
    private void prepareBuffers() {
        final MemorySegment tx = arena.allocate((long) slotSize * TX_BATCH, 64);
        for (int i = 0; i < TX_BATCH; i++) {
            txSlots[i] = tx.asSlice((long) i * slotSize, slotSize);
            EthFrame.writeHeader(txSlots[i], 0, local.mac(), etherType);
            final MemorySegment iov = txIovs.asSlice((long) i * Posix.IOVEC_SIZE, Posix.IOVEC_SIZE);
            iov.set(ValueLayout.JAVA_LONG, 0, txSlots[i].address());
            txMsgs.set(ValueLayout.ADDRESS, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_IOV, iov);
            txMsgs.set(ValueLayout.JAVA_LONG, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_IOVLEN, 1L);
            txMsgsFrom[i] = txMsgs.asSlice((long) i * Posix.MMSGHDR_SIZE);
        }
        final MemorySegment rx = arena.allocate((long) slotSize * RX_BATCH, 64);
        final MemorySegment rxIovs = arena.allocate((long) Posix.IOVEC_SIZE * RX_BATCH, 8);
        for (int i = 0; i < RX_BATCH; i++) {
            rxSlots[i] = rx.asSlice((long) i * slotSize, slotSize);
            rxFrames[i] = rxSlots[i].asSlice(EthFrame.HEADER);
            rxViews[i] = rxFrames[i].asByteBuffer();
            final MemorySegment iov = rxIovs.asSlice((long) i * Posix.IOVEC_SIZE, Posix.IOVEC_SIZE);
            iov.set(ValueLayout.JAVA_LONG, 0, rxSlots[i].address());
            iov.set(ValueLayout.JAVA_LONG, 8, slotSize);
            rxMsgs.set(ValueLayout.ADDRESS, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_IOV, iov);
            rxMsgs.set(ValueLayout.JAVA_LONG, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_IOVLEN, 1L);
            rxMsgs.set(ValueLayout.ADDRESS, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_NAME,
                rxNames.asSlice((long) i * PacketCalls.SOCKADDR_LL_SIZE, PacketCalls.SOCKADDR_LL_SIZE));
        }
    }

    /** Claims the interface and EtherType for this NIC in this network namespace (see the class comment). */
    private int claim(final String nicName, final int ifindex, final MemorySegment errno) throws Throwable {
        final int claim = (int) Posix.SOCKET.invokeExact(errno, PacketCalls.AF_UNIX,
            Posix.SOCK_DGRAM | Posix.SOCK_CLOEXEC, 0);
        if (claim < 0) {
            throw new DetException(Errno.ENODEV, "socket(AF_UNIX) failed: errno " + Posix.errno(errno));
        }
        final MemorySegment sa = arena.allocate(PacketCalls.SOCKADDR_UN_SIZE, 8);
        final int length = PacketCalls.abstractSockaddrUn(sa, "jdet-eth/" + ifindex + "/" + etherType);
        if ((int) Posix.BIND.invokeExact(errno, claim, sa, length) != 0) {
            final int value = Posix.errno(errno);
            Descriptors.close(claim);
            if (value == PacketCalls.EADDRINUSE) {
                throw new DetException(Errno.EADDRINUSE, nicName + " is open already in this network namespace "
                    + "(EtherType 0x" + Integer.toHexString(etherType) + "); one NIC per interface and EtherType: "
                    + "give the second one another Configuration.ethEtherType");
            }
            throw new DetException(Errno.ENODEV, "claiming " + nicName + " failed: errno " + value);
        }
        return claim;
    }

    /** Sizes the socket buffers for bursts, keeps the socket's own frames out, and binds it. */
    private void bind(final int socket, final int ifindex, final MemorySegment errno, final String nicName)
        throws Throwable {
        final MemorySegment value = arena.allocate(ValueLayout.JAVA_INT);
        // The kernel charges a frame its buffer's true size (a power of two above MTU plus overhead).
        final int buffer = Math.max(MIN_SOCKET_BUFFER, 1024 * Integer.highestOneBit((mtu + 1023) * 2));
        Posix.sizeBuffers(socket, buffer, value, errno);
        value.set(ValueLayout.JAVA_INT, 0, 1);
        // Linux 4.20+: the socket does not see its own frames on their way out; older kernels refuse, and the
        // receive path drops them by source MAC anyway.
        final int ignored = (int) Posix.SETSOCKOPT.invokeExact(errno, socket, PacketCalls.SOL_PACKET,
            PacketCalls.PACKET_IGNORE_OUTGOING, value, 4);
        final MemorySegment sa = arena.allocate(PacketCalls.SOCKADDR_LL_SIZE, 8);
        PacketCalls.sockaddrLl(sa, etherType, ifindex);
        if ((int) Posix.BIND.invokeExact(errno, socket, sa, PacketCalls.SOCKADDR_LL_SIZE) != 0) {
            throw new DetException(Errno.ENODEV, "binding " + nicName + " failed: errno " + Posix.errno(errno));
        }
    }

    /** EPERM (or EACCES) from {@code socket(AF_PACKET)}: the one thing a user must fix, said plainly. */
    static DetException socketFailure(final String nicName, final int errno) {
        if (errno == PacketCalls.EPERM || errno == PacketCalls.EACCES) {
            return new DetException(Errno.EPERM, "opening " + nicName + " needs CAP_NET_RAW (socket(AF_PACKET) "
                + "failed with errno " + errno + "): run as root, or grant the capability, e.g. setpriv "
                + "--inh-caps=+net_raw --ambient-caps=+net_raw java ..., systemd AmbientCapabilities=CAP_NET_RAW, "
                + "or a container with --cap-add NET_RAW; jdet does not fall back to another link");
        }
        return new DetException(Errno.ENODEV, "socket(AF_PACKET) for " + nicName + " failed: errno " + errno);
    }

    @Override
    public String address() {
        return address;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    @Override
    public long resolve(final String peerAddress) {
        // One's own MAC resolves too (a queue pair may be connected to its own NIC), but a real interface does not
        // loop raw frames back: such a connection fails with RETRY_EXC_ERR once traffic flows.
        return EthAddress.resolvePeer(peerAddress);
    }

    @Override
    public String describe(final long peer) {
        return EthAddress.describe(peer);
    }

    // ---------------------------------------------------------------- transmit

    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        final int length = headerLength + payload.totalLength();
        if (length > mtu) {
            txOversize++; // layer 2 does not fragment: lost, as EMSGSIZE would lose it
            return true;
        }
        if (staged == TX_BATCH) {
            flush();
            if (staged == TX_BATCH) {
                return false; // the kernel takes nothing now; the engine retries
            }
        }
        final MemorySegment slot = txSlots[staged];
        EthFrame.writeHeader(slot, peer, local.mac(), etherType);
        // Staged in the link's memory: a Java copy fails cleanly if a region's arena was closed meanwhile.
        MemorySegment.copy(header, 0, slot, EthFrame.HEADER, headerLength);
        payload.copyTo(slot, EthFrame.HEADER + headerLength);
        txIovs.set(ValueLayout.JAVA_LONG, (long) staged * Posix.IOVEC_SIZE + 8, EthFrame.HEADER + length);
        staged++;
        if (staged == TX_BATCH) {
            flush();
        }
        return true;
    }

    /**
     * Hands every staged frame to the kernel with {@code sendmmsg}. Frames the kernel cannot take now (its buffer
     * is full) stay staged for the next flush; a frame it refuses for good (the interface went down, say) is
     * counted and dropped, as on a wire.
     */
    @Override
    public void flush() {
        int sent = 0;
        while (sent < staged && !closed) {
            final int n = Posix.sendmmsg(fd, txMsgsFrom[sent], staged - sent, txErrno);
            if (n > 0) {
                sent += n;
                continue;
            }
            final int errno = Posix.errno(txErrno);
            if (errno == LINUX_EAGAIN || errno == LINUX_ENOBUFS) {
                break;
            }
            if (errno != LINUX_EINTR) {
                txErrors++;
                sent++;
            }
        }
        if (sent > 0) {
            keepUnsent(sent);
        }
    }

    /** What is staged leaves now, as at a flush: it waits for nothing else (this link has no batches). */
    @Override
    public void push() {
        flush();
    }

    /** Moves the frames after the first {@code sent} to the front of the staging area. */
    private void keepUnsent(final int sent) {
        for (int i = sent; i < staged; i++) {
            final long length = txIovs.get(ValueLayout.JAVA_LONG, (long) i * Posix.IOVEC_SIZE + 8);
            MemorySegment.copy(txSlots[i], 0, txSlots[i - sent], 0, length);
            txIovs.set(ValueLayout.JAVA_LONG, (long) (i - sent) * Posix.IOVEC_SIZE + 8, length);
        }
        staged -= sent;
    }

    // ---------------------------------------------------------------- receive

    @Override
    public int receive(final FrameHandler handler, final int max) {
        final int batch = Math.min(max, RX_BATCH);
        for (int i = 0; i < batch; i++) { // the kernel shortens each to what it wrote
            rxMsgs.set(ValueLayout.JAVA_INT, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_NAMELEN,
                PacketCalls.SOCKADDR_LL_SIZE);
        }
        final int got;
        try {
            // errno is not captured (see Posix.RECVMMSG_UNCAPTURED): EAGAIN, EINTR or another error all mean nothing
            // was taken, and the next poll tries again
            got = (int) Posix.RECVMMSG_UNCAPTURED.invokeExact(fd, rxMsgs, batch, Posix.MSG_DONTWAIT,
                MemorySegment.NULL);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        for (int i = 0; i < got; i++) {
            final long msg = (long) i * Posix.MMSGHDR_SIZE;
            final int length = rxMsgs.get(ValueLayout.JAVA_INT, msg + Posix.MMSG_LEN);
            if ((rxMsgs.get(ValueLayout.JAVA_INT, msg + PacketCalls.MSG_FLAGS) & PacketCalls.MSG_TRUNC) != 0) {
                rxTruncated++; // larger than this interface's MTU: not from a peer on this segment
                continue;
            }
            if (rxNames.get(ValueLayout.JAVA_BYTE, (long) i * PacketCalls.SOCKADDR_LL_SIZE
                + PacketCalls.SLL_PKTTYPE) != PacketCalls.PACKET_HOST) {
                // Not to this host as the kernel sees it: a VLAN-tagged frame (the kernel strips the tag and, with no
                // VLAN device for it, marks it OTHERHOST), or one seen in promiscuous mode. A host on another VLAN
                // of the trunk must not reach this NIC.
                rxForeign++;
                continue;
            }
            final int frame = EthFrame.check(rxSlots[i], length, local.mac(), etherType);
            if (frame >= 0) {
                if (rxCrc.verify(rxFrames[i], rxViews[i], frame)) {
                    handler.onFrame(rxFrames[i], frame, EthFrame.mac(rxSlots[i], EthFrame.SRC));
                } else {
                    rxBadCrc++;
                }
            } else {
                countDrop(frame);
            }
        }
        return Math.max(got, 0); // EAGAIN: nothing waits; another error is retried on the next call
    }

    private void countDrop(final int verdict) {
        switch (verdict) {
            case EthFrame.SHORT -> rxShort++;
            case EthFrame.OWN -> rxOwn++;
            case EthFrame.TRUNCATED -> rxTruncated++;
            default -> rxForeign++; // another EtherType, another station's, a group or bad source address
        }
    }

    @Override
    public void await(final int waiter, final long timeoutNs) {
        wait.await(waiter, timeoutNs);
    }

    @Override
    public void wakeup(final int waiter) {
        wait.wakeup(waiter);
    }

    /**
     * Adds the link's drop counts, and the kernel's {@code PACKET_STATISTICS} (which reading resets, so they are
     * accumulated here): {@code link.rx.kernel_packets} frames the socket received, {@code link.rx.kernel_drops}
     * frames it dropped because its buffer was full.
     */
    @Override
    public void addCounters(final Map<String, Long> counters) {
        readKernelStatistics();
        counters.merge("link.rx.short", rxShort, Long::sum);
        counters.merge("link.rx.foreign", rxForeign, Long::sum);
        counters.merge("link.rx.own", rxOwn, Long::sum);
        counters.merge("link.rx.truncated", rxTruncated, Long::sum);
        counters.merge("link.rx.bad_crc", rxBadCrc, Long::sum);
        counters.merge("link.tx.errors", txErrors, Long::sum);
        counters.merge("link.tx.oversize", txOversize, Long::sum);
        counters.merge("link.rx.kernel_packets", kernelPackets, Long::sum);
        counters.merge("link.rx.kernel_drops", kernelDrops, Long::sum);
    }

    private void readKernelStatistics() {
        if (closed) {
            return;
        }
        statsLength.set(ValueLayout.JAVA_INT, 0, PacketCalls.TPACKET_STATS_SIZE);
        try {
            if ((int) PacketCalls.GETSOCKOPT.invokeExact(statsErrno, fd, PacketCalls.SOL_PACKET,
                PacketCalls.PACKET_STATISTICS, stats, statsLength) == 0) {
                kernelPackets += stats.get(ValueLayout.JAVA_INT, 0) & 0xFFFF_FFFFL;
                kernelDrops += stats.get(ValueLayout.JAVA_INT, 4) & 0xFFFF_FFFFL;
            }
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** @return the threads inside {@link #await} or {@link #wakeup} now, for tests */
    int unlockedCalls() {
        return wait.unlockedCalls();
    }

    /**
     * Flushes what is staged, then closes the socket, the claim and the eventfd and frees the link's memory, once
     * no thread is inside {@link #await} or {@link #wakeup} (a thread blocked in {@code ppoll} is woken first).
     * Called by the holder of the engine lock; a second call does nothing.
     *
     * @throws IllegalStateException if a thread stays inside {@link #await} or {@link #wakeup} for 5 s: then the
     *                               descriptors and memory are left open
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        flush();
        closed = true;
        wait.close(); // throws, leaving the socket and memory open, if a waiter stays inside
        Descriptors.close(fd);
        Descriptors.close(claimFd);
        arena.close();
    }

    @Override
    public String toString() {
        return "EthLink[" + address + ", mtu " + mtu + ", EtherType 0x" + Integer.toHexString(etherType) + "]";
    }
}
