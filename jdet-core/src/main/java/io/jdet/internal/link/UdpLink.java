package io.jdet.internal.link;

import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * The UDP link: one non-blocking IPv4 datagram socket per NIC, driven through {@link Posix} calls.
 *
 * <p>Transmit is single-copy: the header and the payload pieces are staged in the link's own memory, and
 * {@code sendmsg} sends that. The kernel never gets the address of registered memory: a region's arena may be
 * closed by another thread at any moment, and a copy in Java fails cleanly then, where the kernel would read freed
 * memory. Receive is single-copy: {@code recvmmsg} lands up to 16 datagrams in the link's
 * receive buffers with one system call, where the CRC is checked before anything else looks at it, and the engine copies the payload once, into
 * the target memory, while the handler runs (a corrupted frame must never reach that memory, so the kernel cannot
 * write into it directly). Neither path allocates: the message header, iovecs, socket addresses and errno slots
 * are preallocated, and a peer is a {@code long} ({@link UdpAddress#handle}).
 *
 * <p>Between {@link #cork} and {@link #uncork} (a post, a progress pass of the engine), frames bound for the same
 * peer are appended to one staged datagram up to the frame size limit, and up to 16 staged datagrams leave with
 * one {@code sendmmsg}; outside a batch a frame leaves at once, so a lone message never waits. The receiver splits
 * each datagram into its frames by their payload-length fields, checking every length against what is left of the
 * datagram before it reads further, and checks each frame's CRC on its own.
 *
 * <p>{@link #await} blocks in {@code ppoll} on the socket and the waiter's own eventfd, which {@link #wakeup}
 * writes ({@link SocketWait}), so a blocked waiter (the progress thread, or an application thread waiting for an
 * event) burns no core and wakes when a datagram arrives.
 *
 * <p>{@link #close} waits for the threads inside {@link #await} and {@link #wakeup} (it wakes the former) before it
 * frees their memory and descriptors, so neither can touch a descriptor number the process has reused since.
 */
public final class UdpLink implements Link {
    /** A receive buffer: larger than any UDP payload, so no datagram is ever truncated. */
    private static final int RX_BUFFER = 65_536;
    /** Datagrams taken by one {@code recvmmsg}: one system call per poll, however many frames wait. */
    private static final int RX_BATCH = 16;
    /** Socket buffers asked for: large, so bursts of 64 KiB frames are not dropped by the kernel. */
    private static final int SOCKET_BUFFER = 8 << 20;
    /** Datagrams staged while corked and sent by one {@code sendmmsg}. */
    private static final int TX_BATCH = 16;
    /** Where a frame's payload length lies in its header (little-endian u16). */
    private static final int PAYLOAD_LENGTH_OFFSET = 6;
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED
        .withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private final Arena arena = Arena.ofShared();
    private final int fd;
    private final SocketWait wait;
    private final int localIp;
    private final int localPort;
    private final int mtu;
    private final String address;

    private final MemorySegment txMsg;
    private final MemorySegment txIov;
    private final MemorySegment txName;
    private final MemorySegment txErrno;
    private final MemorySegment txStage;
    private long txNamePeer = -1;

    /** Batches open ({@link #cork} depth): frames are staged while it is positive. */
    private int corked;
    /** The staged datagrams, one 64 KiB slot each, with their message headers (one per first index, for a resend). */
    private final MemorySegment txBatch;
    private final MemorySegment txMsgs;
    private final MemorySegment[] txMsgFrom = new MemorySegment[TX_BATCH];
    private final MemorySegment[] txNameSlots = new MemorySegment[TX_BATCH];
    /** The peer each slot's name holds, so that it is rewritten only when the peer changes. */
    private final long[] txNamePeers = new long[TX_BATCH];
    private final MemorySegment txNames;
    private final MemorySegment txIovs;
    private final long[] txPeers = new long[TX_BATCH];
    private final int[] txLengths = new int[TX_BATCH];
    /** Staged datagrams: [txFirst, txCount) are waiting; the last may still take frames. */
    private int txFirst;
    private int txCount;
    private long coalesced;

    private final MemorySegment[] rxBuffers = new MemorySegment[RX_BATCH];
    private final ByteBuffer[] rxViews = new ByteBuffer[RX_BATCH];
    private final MemorySegment rxMsgs;
    private final MemorySegment rxNames;
    private final FrameCrc rxCrc = new FrameCrc();
    /** A frame after the first of a datagram is checked and handed up from here, at offset 0. */
    private final MemorySegment rxFrame;
    private final ByteBuffer rxFrameView;

    private volatile boolean closed;

    private long badCrc;
    private long truncated;
    private long notIpv4;
    private long sendErrors;

    /**
     * Opens a socket bound to the address a NIC name gives.
     *
     * @param nicName {@code udp:<address>[:<port>]} or an interface name
     * @throws DetException ENODEV if the name is no usable address or interface, or the socket cannot be opened;
     *                      EADDRINUSE if another socket is bound to the address and port; EACCES if the port is
     *                      privileged; nothing stays open
     */
    public UdpLink(final String nicName) {
        this(nicName, () -> { });
    }

    /**
     * Opens a socket, running a step between opening the descriptors and binding: where tests inject a failure
     * to show that a failed open leaves no descriptor and no memory behind.
     *
     * @param nicName    {@code udp:<address>[:<port>]} or an interface name
     * @param beforeBind runs once both descriptors are open
     * @throws DetException ENODEV as {@link #UdpLink(String)} says, or if the step fails
     */
    UdpLink(final String nicName, final Runnable beforeBind) {
        if (!Posix.supported()) {
            throw new DetException(Errno.ENODEV, "the UDP link needs 64-bit Linux");
        }
        final UdpAddress bindTo = UdpAddress.parseNicName(nicName);
        this.mtu = bindTo.frameLimit();
        int socket = -1;
        SocketWait waits = null;
        try {
            this.txMsg = arena.allocate(Posix.MSGHDR_SIZE, 8);
            this.txIov = arena.allocate(Posix.IOVEC_SIZE, 8);
            this.txName = arena.allocate(Posix.SOCKADDR_IN_SIZE, 8);
            this.txErrno = Posix.newErrnoState(arena);
            this.txStage = arena.allocate(RX_BUFFER, 64);
            this.txBatch = arena.allocate((long) RX_BUFFER * TX_BATCH, 64);
            this.txMsgs = arena.allocate((long) Posix.MMSGHDR_SIZE * TX_BATCH, 8);
            this.txNames = arena.allocate((long) Posix.SOCKADDR_IN_SIZE * TX_BATCH, 8);
            this.txIovs = arena.allocate((long) Posix.IOVEC_SIZE * TX_BATCH, 8);
            this.rxFrame = arena.allocate(RX_BUFFER, 64);
            this.rxFrameView = rxFrame.asByteBuffer();
            this.rxMsgs = arena.allocate((long) Posix.MMSGHDR_SIZE * RX_BATCH, 8);
            this.rxNames = arena.allocate((long) Posix.SOCKADDR_IN_SIZE * RX_BATCH, 8);
            prepareBuffers();
            final MemorySegment errno = Posix.newErrnoState(arena);
            socket = (int) Posix.SOCKET.invokeExact(errno, Posix.AF_INET,
                Posix.SOCK_DGRAM | Posix.SOCK_NONBLOCK | Posix.SOCK_CLOEXEC, 0);
            if (socket < 0) {
                throw failure("socket", errno);
            }
            waits = new SocketWait(arena, "UDP link", 0);
            beforeBind.run();
            final int[] bound = bind(socket, bindTo, errno);
            this.localIp = bound[0];
            this.localPort = bound[1];
        } catch (final Throwable t) {
            // Whatever failed, close what was opened: a failed open must not cost the process descriptors.
            if (waits != null) {
                waits.close();
            }
            Descriptors.close(socket);
            arena.close();
            throw t instanceof DetException e ? e : new DetException(Errno.ENODEV, "cannot open a UDP socket: " + t);
        }
        this.fd = socket;
        this.wait = waits;
        waits.watch(socket);
        this.address = "udp:" + UdpAddress.format(localIp) + ":" + localPort;
    }

    /** Points the receive headers at their buffers and names, and the transmit header at its name and iovecs. */
    private void prepareBuffers() {
        final MemorySegment buffers = arena.allocate((long) RX_BUFFER * RX_BATCH, 64);
        final MemorySegment iovs = arena.allocate((long) Posix.IOVEC_SIZE * RX_BATCH, 8);
        for (int i = 0; i < RX_BATCH; i++) {
            rxBuffers[i] = buffers.asSlice((long) i * RX_BUFFER, RX_BUFFER);
            rxViews[i] = rxBuffers[i].asByteBuffer();
            final MemorySegment iov = iovs.asSlice((long) i * Posix.IOVEC_SIZE, Posix.IOVEC_SIZE);
            iov.set(ValueLayout.JAVA_LONG, 0, rxBuffers[i].address());
            iov.set(ValueLayout.JAVA_LONG, 8, RX_BUFFER);
            final long msg = (long) i * Posix.MMSGHDR_SIZE;
            rxMsgs.set(ValueLayout.ADDRESS, msg + Posix.MSG_NAME, rxNames.asSlice((long) i * Posix.SOCKADDR_IN_SIZE,
                Posix.SOCKADDR_IN_SIZE));
            rxMsgs.set(ValueLayout.ADDRESS, msg + Posix.MSG_IOV, iov);
            rxMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_IOVLEN, 1L);
        }
        for (int k = 0; k < TX_BATCH; k++) {
            final long msg = (long) k * Posix.MMSGHDR_SIZE;
            final MemorySegment iov = txIovs.asSlice((long) k * Posix.IOVEC_SIZE, Posix.IOVEC_SIZE);
            iov.set(ValueLayout.JAVA_LONG, 0, txBatch.address() + (long) k * RX_BUFFER);
            txNameSlots[k] = txNames.asSlice((long) k * Posix.SOCKADDR_IN_SIZE, Posix.SOCKADDR_IN_SIZE);
            txNamePeers[k] = -1;
            txMsgs.set(ValueLayout.ADDRESS, msg + Posix.MSG_NAME, txNameSlots[k]);
            txMsgs.set(ValueLayout.JAVA_INT, msg + Posix.MSG_NAMELEN, Posix.SOCKADDR_IN_SIZE);
            txMsgs.set(ValueLayout.ADDRESS, msg + Posix.MSG_IOV, iov);
            txMsgs.set(ValueLayout.JAVA_LONG, msg + Posix.MSG_IOVLEN, 1L);
            txMsgFrom[k] = txMsgs.asSlice(msg);
        }
        txMsg.set(ValueLayout.ADDRESS, Posix.MSG_NAME, txName);
        txMsg.set(ValueLayout.JAVA_INT, Posix.MSG_NAMELEN, Posix.SOCKADDR_IN_SIZE);
        txMsg.set(ValueLayout.ADDRESS, Posix.MSG_IOV, txIov);
    }

    private int[] bind(final int socket, final UdpAddress bindTo, final MemorySegment errno) throws Throwable {
        final MemorySegment value = arena.allocate(ValueLayout.JAVA_INT);
        Posix.sizeBuffers(socket, SOCKET_BUFFER, value, errno);
        final MemorySegment sa = arena.allocate(Posix.SOCKADDR_IN_SIZE, 8);
        Posix.sockaddr(sa, bindTo.ip(), bindTo.port());
        if ((int) Posix.BIND.invokeExact(errno, socket, sa, Posix.SOCKADDR_IN_SIZE) != 0) {
            // EADDRINUSE among others; still ENODEV (issue 11 asks for EADDRINUSE of its own later).
            throw failure("bind to " + UdpAddress.format(bindTo.ip()) + ":" + bindTo.port(), errno);
        }
        final MemorySegment length = arena.allocate(ValueLayout.JAVA_INT);
        length.set(ValueLayout.JAVA_INT, 0, Posix.SOCKADDR_IN_SIZE);
        if ((int) Posix.GETSOCKNAME.invokeExact(errno, socket, sa, length) != 0) {
            throw failure("getsockname", errno);
        }
        return new int[] {sa.get(Posix.NET_INT, Posix.SIN_ADDR), sa.get(Posix.NET_SHORT, Posix.SIN_PORT) & 0xFFFF};
    }

    /** Linux's {@code EACCES}: a port below 1024 without the capability to bind it. */
    private static final int LINUX_EACCES = 13;
    /** Linux's {@code EADDRINUSE}: another socket holds the address and port. */
    private static final int LINUX_EADDRINUSE = 98;
    /** Linux's {@code EADDRNOTAVAIL}: the address is not one of this host's. */
    private static final int LINUX_EADDRNOTAVAIL = 99;

    /** Names the socket call's failure with the errno a user can act on, and its number for the record. */
    private static DetException failure(final String what, final MemorySegment errno) {
        final int value = Posix.errno(errno);
        return switch (value) {
            case LINUX_EADDRINUSE -> new DetException(Errno.EADDRINUSE, what + " failed: address in use (errno "
                + value + "); another socket is bound to it, pick another port or 0 for any free one");
            case LINUX_EACCES -> new DetException(Errno.EACCES, what + " failed: permission denied (errno " + value
                + "); ports below 1024 need CAP_NET_BIND_SERVICE");
            case LINUX_EADDRNOTAVAIL -> new DetException(Errno.ENODEV, what + " failed: address not available (errno "
                + value + "); it is no address of this host");
            default -> new DetException(Errno.ENODEV, what + " failed: errno " + value);
        };
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
        return UdpAddress.resolvePeer(peerAddress);
    }

    @Override
    public String describe(final long peer) {
        return UdpAddress.describe(peer);
    }

    // ---------------------------------------------------------------- transmit

    @Override
    public void cork() {
        corked++;
    }

    @Override
    public void uncork() {
        if (corked > 0 && --corked == 0) {
            sendStaged();
        }
    }

    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        if (corked > 0) {
            return stage(peer, header, headerLength, payload);
        }
        if (txFirst < txCount && !sendStaged()) {
            return false; // what is staged leaves first, in order; the kernel has no room for more now
        }
        if (peer != txNamePeer) {
            Posix.sockaddr(txName, UdpAddress.handleIp(peer), UdpAddress.handlePort(peer));
            txNamePeer = peer;
        }
        if (headerLength + payload.totalLength() > RX_BUFFER) {
            sendErrors++; // larger than any datagram: lost, as EMSGSIZE would lose it
            return true;
        }
        // The frame is staged in the link's own memory, never handed to the kernel by the address of registered
        // memory: the copy is a Java access, which fails (IllegalStateException) if the application has closed a
        // region's arena, where sendmsg would read freed memory and send it to the peer.
        MemorySegment.copy(header, 0, txStage, 0, headerLength);
        payload.copyTo(txStage, headerLength);
        txIov.set(ValueLayout.JAVA_LONG, 0, txStage.address());
        txIov.set(ValueLayout.JAVA_LONG, 8, headerLength + payload.totalLength());
        txMsg.set(ValueLayout.JAVA_LONG, Posix.MSG_IOVLEN, 1L);
        try {
            if ((long) Posix.SENDMSG_UNCAPTURED.invokeExact(fd, txMsg, 0) >= 0) {
                return true;
            }
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        // It sent nothing: again with errno captured, to learn why (off the data path's steady state)
        for (int attempt = 0; attempt < 2; attempt++) {
            final long n;
            try {
                n = (long) Posix.SENDMSG.invokeExact(txErrno, fd, txMsg, 0);
            } catch (final Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n >= 0) {
                return true;
            }
            final int errno = Posix.errno(txErrno);
            if (errno == Posix.EAGAIN || errno == Posix.ENOBUFS) {
                return false;
            }
            if (errno != Posix.EINTR) {
                break;
            }
        }
        // Unreachable or refused peer, message too long, a closed socket: the datagram is lost, as on a wire.
        sendErrors++;
        return true;
    }

    /**
     * Appends a frame to the staged datagram for its peer, or starts a new one.
     *
     * @return false if every slot is staged and the kernel takes none of them now
     */
    private boolean stage(final long peer, final MemorySegment header, final int headerLength,
                          final FrameGather payload) {
        final int length = headerLength + payload.totalLength();
        if (length > RX_BUFFER) {
            sendErrors++; // larger than any datagram: lost, as EMSGSIZE would lose it
            return true;
        }
        int k = txCount - 1;
        if (k < txFirst || txPeers[k] != peer || txLengths[k] + length > mtu) {
            if (txCount == TX_BATCH && !sendStaged()) {
                return false;
            }
            k = txCount++;
            txPeers[k] = peer;
            txLengths[k] = 0;
            if (txNamePeers[k] != peer) {
                Posix.sockaddr(txNameSlots[k], UdpAddress.handleIp(peer), UdpAddress.handlePort(peer));
                txNamePeers[k] = peer;
            }
        } else {
            coalesced++;
        }
        // Copied now, as an unstaged frame is: a Java access that fails cleanly if a region's arena was closed.
        final long at = (long) k * RX_BUFFER + txLengths[k];
        MemorySegment.copy(header, 0, txBatch, at, headerLength);
        payload.copyTo(txBatch, at + headerLength);
        txLengths[k] += length;
        return true;
    }

    /**
     * Sends the staged datagrams, as many per {@code sendmmsg} as there are.
     *
     * @return true if none is left staged; false if the kernel had no room (they stay, and go at the next call)
     */
    private boolean sendStaged() {
        while (txFirst < txCount) {
            for (int k = txFirst; k < txCount; k++) {
                txIovs.set(ValueLayout.JAVA_LONG, (long) k * Posix.IOVEC_SIZE + 8, txLengths[k]);
            }
            final int n = Posix.sendmmsg(fd, txMsgFrom[txFirst], txCount - txFirst, txErrno);
            if (n > 0) {
                txFirst += n;
                continue;
            }
            final int errno = Posix.errno(txErrno);
            if (errno == Posix.EAGAIN || errno == Posix.ENOBUFS) {
                return false;
            }
            if (errno != Posix.EINTR) {
                // Unreachable or refused peer, a closed socket: that datagram is lost, as on a wire.
                sendErrors++;
                txFirst++;
            }
        }
        txFirst = txCount = 0;
        return true;
    }

    // ---------------------------------------------------------------- receive

    @Override
    public int receive(final FrameHandler handler, final int max) {
        final int batch = Math.min(max, RX_BATCH);
        for (int i = 0; i < batch; i++) {
            rxMsgs.set(ValueLayout.JAVA_INT, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_NAMELEN,
                Posix.SOCKADDR_IN_SIZE);
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
            final int length = rxMsgs.get(ValueLayout.JAVA_INT, (long) i * Posix.MMSGHDR_SIZE + Posix.MMSG_LEN);
            final long name = (long) i * Posix.SOCKADDR_IN_SIZE;
            if (rxNames.get(ValueLayout.JAVA_SHORT, name) != Posix.AF_INET) {
                notIpv4++;
            } else {
                final long peer = UdpAddress.handle(rxNames.get(Posix.NET_INT, name + Posix.SIN_ADDR),
                    rxNames.get(Posix.NET_SHORT, name + Posix.SIN_PORT) & 0xFFFF);
                split(handler, rxBuffers[i], rxViews[i], length, peer);
            }
        }
        return Math.max(got, 0); // EAGAIN: nothing waits; another error is retried on the next call
    }

    /**
     * Hands each frame of a datagram up. A frame spans its header and the payload length the header states, or
     * the rest of the datagram if that is shorter (the engine then finds the length wrong and drops it); the next
     * frame starts where it ends. Less than a header left over is counted as truncated. Every length is checked
     * against the datagram before anything is read at it; each frame's CRC is checked on its own, and a frame that
     * fails it ends the datagram.
     */
    private void split(final FrameHandler handler, final MemorySegment datagram, final ByteBuffer view,
                       final int length, final long peer) {
        final int header = io.jdet.internal.wire.Frame.HEADER_LENGTH;
        int at = 0;
        while (true) {
            final int left = length - at;
            if (left < header) {
                if (left > 0 || at == 0) {
                    truncated++;
                }
                return;
            }
            final boolean sealed = (datagram.get(LE_SHORT, at + io.jdet.internal.wire.Frame.FLAGS_OFFSET)
                & io.jdet.internal.wire.Frame.FLAG_PROTECTED) != 0;
            final int stated = header + (datagram.get(LE_SHORT, at + PAYLOAD_LENGTH_OFFSET) & 0xFFFF)
                + (sealed ? io.jdet.internal.wire.Frame.PROTECTED_TRAILER_LENGTH : 0);
            final int frameLength = Math.min(stated, left);
            final MemorySegment frame;
            final ByteBuffer frameView;
            if (at == 0) {
                frame = datagram;
                frameView = view;
            } else {
                MemorySegment.copy(datagram, at, rxFrame, 0, frameLength);
                frame = rxFrame;
                frameView = rxFrameView;
            }
            if (!rxCrc.verify(frame, frameView, frameLength)) {
                badCrc++;
                return; // the length that delimited it is as untrustworthy as the rest: drop the datagram's rest
            }
            handler.onFrame(frame, frameLength, peer);
            at += frameLength;
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

    /** @return the threads inside {@link #await} or {@link #wakeup} now, for tests */
    int unlockedCalls() {
        return wait.unlockedCalls();
    }

    @Override
    public void addCounters(final Map<String, Long> counters) {
        counters.merge("link.rx.bad_crc", badCrc, Long::sum);
        counters.merge("link.rx.truncated", truncated, Long::sum);
        counters.merge("link.rx.not_ipv4", notIpv4, Long::sum);
        counters.merge("link.tx.errors", sendErrors, Long::sum);
        counters.merge("link.tx.coalesced", coalesced, Long::sum);
    }

    /**
     * Closes the socket and frees the link's memory, once no thread is inside {@link #await} or {@link #wakeup}:
     * a thread blocked in {@code ppoll} is woken first. Called by the holder of the engine lock; a second call does
     * nothing.
     *
     * @throws IllegalStateException if a thread stays inside {@link #await} or {@link #wakeup} for 5 s (it is
     *                               stopped, say, by a debugger): then the socket and memory are left open
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        wait.close(); // throws, leaving the socket and memory open, if a waiter stays inside
        Descriptors.close(fd);
        arena.close();
    }

    @Override
    public String toString() {
        return "UdpLink[" + address + ", mtu " + mtu + "]";
    }
}
