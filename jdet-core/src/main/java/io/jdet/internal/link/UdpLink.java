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
 * <p>Transmit copies nothing of a bulk payload: a datagram is a list of iovecs, the header (and small or unlent
 * payload pieces) copied into the link's own staging memory, a lent payload piece of registered memory pointed at
 * where it lies, so the kernel's copy into its socket buffer is the only one ({@link UdpTx}, which also says how the
 * memory is kept alive while the kernel reads it and what {@link #settle} does). Receive is single-copy: {@code
 * recvmmsg} lands up to 16 datagrams in the link's receive buffers with one system call ({@code recvfrom} one,
 * while nothing came: {@link #batching}), where the CRC is checked before anything else looks at it, and the
 * engine copies the payload once, into the target memory, while the
 * handler runs (a corrupted frame must never reach that memory, so the kernel cannot write into it directly; the
 * long fragments {@link UdpPlacement} lands in place are the exception it explains). Neither path allocates: the
 * message header, iovecs, socket addresses and errno slots are preallocated, and a peer is a {@code long} ({@link
 * UdpAddress#handle}).
 *
 * <p>Between {@link #cork} and {@link #uncork} (a post, a progress pass of the engine), frames bound for the same
 * peer are appended to one staged datagram up to the frame size limit, and up to 16 staged datagrams leave with
 * one {@code sendmmsg}; outside a batch a frame leaves at once, so a lone message never waits. The receiver splits
 * each datagram into its frames by their payload-length fields, checking every length against what is left of the
 * datagram before it reads further, and checks each frame's CRC on its own.
 *
 * <p>Runs of equal datagrams for one peer leave as segmented sends ({@link UdpTx}, UDP GSO), which a long message
 * makes on a network of small frames (a limit under {@link #PLACE_MIN_FRAME}, as 1500-byte Ethernet gives). A link
 * of such frames takes what arrives as aggregates the kernel merged (UDP GRO, {@link #receivesAggregates}), which it
 * cuts back into datagrams: the kernel's IP stack sees a run of up to 16 datagrams once instead of one by one, on
 * both sides. Fragments are not placed there (docs/PROTOCOL.md, section 10).
 *
 * <p>Over the loopback interface (a peer on 127.0.0.0/8, reached from a loopback address) frames carry no CRC: the
 * kernel copies the datagram in memory and corrupts nothing, as on the fabric, and the CRC pass cost 15 to 30 % of
 * the throughput there. The sender leaves the field 0 ({@link #checksummed}); the receiver takes a frame whose
 * field is 0 unchecked only when its source is a loopback address, which Linux lets in on the loopback interface
 * alone. Every other frame is checked (docs/PROTOCOL.md, section 4).
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
    /** A receive buffer's control buffer: one {@code UDP_GRO} cmsg, an int ({@code CMSG_SPACE(4)}). */
    private static final int RX_CONTROL = Posix.CMSGHDR_SIZE + 8;
    /** Datagrams taken by one {@code recvmmsg}: one system call per poll, however many frames wait. */
    private static final int RX_BATCH = 16;
    /**
     * The last receive took a datagram, so more may wait: the next takes a batch ({@code recvmmsg}). Otherwise a
     * poll takes one datagram with {@code recvfrom}, which costs a quarter less when nothing waits (no message
     * header to copy in): a busy poll that finds nothing spends less, a lone datagram is taken sooner, and the
     * first datagram of a burst is followed by batches. Not while {@link #aggregating}: an aggregate's size comes in
     * a cmsg, which {@code recvfrom} cannot take.
     */
    private boolean batching;
    /** {@code recvfrom}'s address length, in and out. */
    private final MemorySegment rxNameLength;
    /** Polls that took their datagram, or found none, with {@code recvfrom} ({@link #batching}). */
    private long singleReceives;
    /**
     * Whether the single receive before this batch took a datagram of the full frame size: a long message's first
     * fragment, taken alone, which the batch after it counts towards {@link #AGGREGATE_FROM} as one receive with
     * its own, so that a message of two full fragments still switches {@link #aggregating} on.
     */
    private boolean fullAlone;
    /** Socket buffers asked for: large, so bursts of 64 KiB frames are not dropped by the kernel. */
    private static final int SOCKET_BUFFER = 8 << 20;
    private final Arena arena = Arena.ofShared();
    private final int fd;
    private final SocketWait wait;
    private final int localIp;
    /** Bound to a loopback address: datagrams to a loopback peer leave with a loopback source. */
    private final boolean loopbackSource;
    private final int localPort;
    private final int mtu;
    /**
     * The least frame limit at which a long message's fragments are received straight into place: below it the look
     * at each datagram (a {@code MSG_PEEK} system call) costs more than the copy of a small fragment it saves, and
     * the batch receive takes the datagrams (between two namespaces over a 1500-byte veth, the 1 MiB lat-send's
     * least one-way time was 6 to 11 % lower without the look).
     */
    static final int PLACE_MIN_FRAME = 8_192;
    /** Whether this link places fragments ({@link #PLACE_MIN_FRAME}); a link that does not receives aggregates. */
    private final boolean placesFragments;
    /**
     * Whether the socket can take aggregates (UDP GRO: {@code UDP_GRO} set): the kernel may then hand over a run of
     * datagrams of one size from one peer (a peer's segmented send, or what the device's receive offload merged)
     * as one buffer, with a cmsg that gives the size; the link cuts it back into datagrams. Only where fragments
     * are not placed, which takes one datagram at a time. The option is on only while long messages arrive
     * ({@link #aggregating}): on, it cost every lone small datagram about 0.1 µs in the kernel (8 B lat-send between
     * two namespaces 2.84 against 2.75 µs).
     */
    private final boolean receivesAggregates;
    /**
     * {@code UDP_GRO} is on now: switched on by a receive that takes {@link #AGGREGATE_FROM} datagrams of the full
     * frame size (a long message's fragments) or an aggregate, off after {@link #AGGREGATE_UNTIL} receives in a row
     * that take neither.
     */
    private boolean aggregating;
    private int plainReceives;
    /** The full-size datagrams in one receive that switch aggregating on. */
    static final int AGGREGATE_FROM = 2;
    /** The receives in a row without a full-size datagram or an aggregate that switch aggregating off. */
    static final int AGGREGATE_UNTIL = 8;
    /** The value and errno slot of {@link #setGro}, allocated once: switching allocates nothing. */
    private MemorySegment groValue;
    private MemorySegment groErrno;
    private long aggregatingSwitches;
    /** Each receive buffer's control buffer, for the {@code UDP_GRO} cmsg. */
    private MemorySegment rxControl;
    private long aggregates;
    private long aggregatedDatagrams;
    private final String address;

    /** The transmit batch: staging, gathering and {@code sendmmsg}. */
    private final UdpTx tx;
    /** Receives the fragments of long sends, writes and read responses straight into their targets. */
    private final UdpPlacement placement;
    /** Batches open ({@link #cork} depth): frames are staged while it is positive. */
    private int corked;
    /** A post flagged MORE left frames staged: {@link #flush} (the engine lock's release) leaves them there. */
    private boolean holding;

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
    /** Frames from a loopback source taken without a CRC check, their CRC field 0 ({@link #checksummed}). */
    private long unchecked;
    private long truncated;
    private long notIpv4;

    /**
     * Opens a socket bound to the address a NIC name gives.
     *
     * @param nicName {@code udp:<address>[:<port>]} or an interface name
     * @throws DetException ENODEV if the name is no usable address or interface, or the socket cannot be opened;
     *                      EADDRINUSE if another socket is bound to the address and port; EACCES if the port is
     *                      privileged; nothing stays open
     */
    public UdpLink(final String nicName) {
        this(nicName, 0, () -> { });
    }

    /**
     * Opens a socket bound to the address a NIC name gives, whose application waits busy-poll it first.
     *
     * @param nicName           {@code udp:<address>[:<port>]} or an interface name
     * @param applicationSpinNs how long a thread blocked on the link for an event queue busy-polls the socket
     *                          before it sleeps ({@code Configuration.udpSpinUs}); the progress thread never spins
     * @throws DetException as {@link #UdpLink(String)}
     */
    public UdpLink(final String nicName, final long applicationSpinNs) {
        this(nicName, applicationSpinNs, () -> { });
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
        this(nicName, 0, beforeBind);
    }

    private UdpLink(final String nicName, final long applicationSpinNs, final Runnable beforeBind) {
        if (!Posix.supported()) {
            throw new DetException(Errno.ENODEV, "the UDP link needs 64-bit Linux");
        }
        final UdpAddress bindTo = UdpAddress.parseNicName(nicName);
        this.mtu = bindTo.frameLimit();
        this.placesFragments = mtu >= PLACE_MIN_FRAME;
        int socket = -1;
        SocketWait waits = null;
        try {
            this.rxFrame = arena.allocate(RX_BUFFER, 64);
            this.rxFrameView = rxFrame.asByteBuffer();
            this.rxMsgs = arena.allocate((long) Posix.MMSGHDR_SIZE * RX_BATCH, 8);
            this.rxNames = arena.allocate((long) Posix.SOCKADDR_IN_SIZE * RX_BATCH, 8);
            this.rxNameLength = arena.allocate(ValueLayout.JAVA_INT);
            prepareBuffers();
            final MemorySegment errno = Posix.newErrnoState(arena);
            socket = (int) Posix.SOCKET.invokeExact(errno, Posix.AF_INET,
                Posix.SOCK_DGRAM | Posix.SOCK_NONBLOCK | Posix.SOCK_CLOEXEC, 0);
            if (socket < 0) {
                throw failure("socket", errno);
            }
            waits = new SocketWait(arena, "UDP link", 0, applicationSpinNs);
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
        this.receivesAggregates = !placesFragments && takeAggregates(socket);
        this.tx = new UdpTx(arena, socket, mtu);
        this.placement = new UdpPlacement(arena, socket);
        this.wait = waits;
        waits.watch(socket);
        this.address = "udp:" + UdpAddress.format(localIp) + ":" + localPort;
        this.loopbackSource = UdpAddress.loopback(localIp); // a NIC is never bound to any address (parseNicName)
    }

    /**
     * Asks the kernel for aggregates ({@code UDP_GRO}) and lays out a control buffer per receive buffer for the cmsg
     * that gives their datagrams' size. False if the kernel refuses (before 5.0): datagrams then come one by one.
     */
    private boolean takeAggregates(final int socket) {
        groValue = arena.allocate(ValueLayout.JAVA_INT);
        groErrno = Posix.newErrnoState(arena);
        if (!setGro(socket, true) || !setGro(socket, false)) { // known to work, and off until long messages come
            return false;
        }
        rxControl = arena.allocate((long) RX_CONTROL * RX_BATCH, 8);
        for (int i = 0; i < RX_BATCH; i++) {
            rxMsgs.set(ValueLayout.JAVA_LONG, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_CONTROL,
                rxControl.address() + (long) i * RX_CONTROL);
        }
        return true;
    }

    /** Sets {@code UDP_GRO} on the socket, or clears it; false if the kernel refuses. */
    private boolean setGro(final int socket, final boolean on) {
        groValue.set(ValueLayout.JAVA_INT, 0, on ? 1 : 0);
        try {
            return (int) Posix.SETSOCKOPT.invokeExact(groErrno, socket, Posix.SOL_UDP, Posix.UDP_GRO, groValue, 4)
                == 0;
        } catch (final Throwable t) {
            return false;
        }
    }

    /**
     * After a receive that took datagrams: switches aggregating on when it took {@link #AGGREGATE_FROM} full-size
     * datagrams or an aggregate, off after {@link #AGGREGATE_UNTIL} receives in a row that took neither.
     */
    private void aggregateOrNot(final int full, final int aggregated) {
        if (full >= AGGREGATE_FROM || aggregated > 0) {
            plainReceives = 0;
            if (!aggregating && setGro(fd, true)) {
                aggregating = true;
                aggregatingSwitches++;
            }
        } else if (aggregating && ++plainReceives >= AGGREGATE_UNTIL && setGro(fd, false)) {
            aggregating = false;
            aggregatingSwitches++;
        }
    }

    /** Points the receive headers at their buffers and names. */
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
    }

    private int[] bind(final int socket, final UdpAddress bindTo, final MemorySegment errno) throws Throwable {
        final MemorySegment value = arena.allocate(ValueLayout.JAVA_INT);
        Posix.sizeBuffers(socket, SOCKET_BUFFER, value, errno);
        final MemorySegment sa = arena.allocate(Posix.SOCKADDR_IN_SIZE, 8);
        Posix.sockaddr(sa, bindTo.ip(), bindTo.port());
        if ((int) Posix.BIND.invokeExact(errno, socket, sa, Posix.SOCKADDR_IN_SIZE) != 0) {
            // EADDRINUSE, EACCES and EADDRNOTAVAIL (an address not this host's) are named by failure()
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

    /** @return whether the socket can take aggregates ({@link #receivesAggregates}), for tests */
    boolean receivesAggregates() {
        return receivesAggregates;
    }

    /** @return whether it takes them now ({@link #aggregating}), for tests */
    boolean aggregating() {
        return aggregating;
    }

    /** @return the socket's descriptor, for tests that set a socket option on it */
    int fd() {
        return fd;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    /**
     * False for a peer on the loopback network when this socket's datagrams to it leave from a loopback source too
     * (bound to a loopback address): the loopback interface is a copy in memory, which corrupts nothing,
     * and the receiver takes a frame from a loopback source with its CRC field 0 unchecked. True for every other
     * peer: a real network, or a receiver that would see a non-loopback source and check.
     */
    @Override
    public boolean checksummed(final long peer) {
        return !(loopbackSource && UdpAddress.loopback(UdpAddress.handleIp(peer)));
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
            holding = false;
            sendStaged();
        }
    }

    @Override
    public void uncorkHolding() {
        if (corked > 0 && --corked == 0) {
            holding = tx.staged();
        }
    }

    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        if (corked > 0) {
            return tx.stage(peer, header, headerLength, payload);
        }
        if (tx.staged() && !tx.send()) {
            return false; // what is staged leaves first, in order; the kernel has no room for more now
        }
        if (!tx.stage(peer, header, headerLength, payload)) {
            return false;
        }
        if (tx.staged() && !tx.send()) {
            tx.unstageLast(); // a lone frame is sent now or refused: the caller retries it later
            return false;
        }
        return true;
    }

    /** Sends what a settle or a flush finds staged, or copies it out of registered memory if the kernel is full. */
    @Override
    public void settle() {
        tx.settle();
    }

    @Override
    public void push() {
        if (tx.staged()) {
            tx.send(); // what the kernel has no room for stays staged
        }
    }

    @Override
    public void flush() {
        if (corked == 0 && !holding && tx.staged()) {
            tx.send();
        }
    }

    /** Sends the staged datagrams; what the kernel has no room for stays staged. */
    private boolean sendStaged() {
        return tx.send();
    }

    // ---------------------------------------------------------------- receive

    @Override
    public int receive(final FrameHandler handler, final int max) {
        int taken = 0;
        while (taken < max && placesFragments && handler.placing()) {
            // A long message arrives: each fragment straight into its target. A datagram not placed is received
            // alone, the usual way: if it starts the next long message, placing goes on with that one's fragments.
            final int outcome = placement.receive(handler);
            if (outcome == UdpPlacement.NONE) {
                return taken;
            }
            if (outcome == UdpPlacement.NOT_PLACED) {
                final int got = receiveBatch(handler, 1);
                if (got == 0) {
                    return taken;
                }
                taken += got;
            } else {
                taken++;
            }
        }
        return taken < max ? taken + receiveBatch(handler, max - taken) : taken;
    }

    private int receiveBatch(final FrameHandler handler, final int max) {
        if (!batching && !aggregating) {
            return receiveOne(handler);
        }
        final int batch = Math.min(max, RX_BATCH);
        for (int i = 0; i < batch; i++) {
            rxMsgs.set(ValueLayout.JAVA_INT, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_NAMELEN,
                Posix.SOCKADDR_IN_SIZE);
            if (receivesAggregates) {
                rxMsgs.set(ValueLayout.JAVA_LONG, (long) i * Posix.MMSGHDR_SIZE + Posix.MSG_CONTROLLEN, RX_CONTROL);
            }
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
        int full = fullAlone ? 1 : 0;
        fullAlone = false;
        int aggregated = 0;
        for (int i = 0; i < got; i++) {
            final int length = rxMsgs.get(ValueLayout.JAVA_INT, (long) i * Posix.MMSGHDR_SIZE + Posix.MMSG_LEN);
            final long name = (long) i * Posix.SOCKADDR_IN_SIZE;
            if (rxNames.get(ValueLayout.JAVA_SHORT, name) != Posix.AF_INET) {
                notIpv4++;
            } else {
                final long peer = UdpAddress.handle(rxNames.get(Posix.NET_INT, name + Posix.SIN_ADDR),
                    rxNames.get(Posix.NET_SHORT, name + Posix.SIN_PORT) & 0xFFFF);
                final int size = receivesAggregates ? aggregatedSize(i) : 0;
                if (size > 0 && size < length) {
                    // An aggregate: datagrams of that size, the last one shorter, each split on its own.
                    aggregates++;
                    aggregated++;
                    for (int at = 0; at < length; at += size) {
                        split(handler, rxBuffers[i], rxViews[i], at, Math.min(size, length - at), peer);
                        aggregatedDatagrams++;
                    }
                } else {
                    if (length == mtu) {
                        full++;
                    }
                    split(handler, rxBuffers[i], rxViews[i], 0, length, peer);
                }
            }
        }
        if (receivesAggregates && got > 0) {
            aggregateOrNot(full, aggregated);
        }
        batching = got > 0;
        return Math.max(got, 0); // EAGAIN: nothing waits; another error is retried on the next call
    }

    /**
     * Takes one datagram with {@code recvfrom} into the first receive buffer ({@link #batching}). An aggregate merged
     * before {@code UDP_GRO} went off is taken by the batch that switched it off, or the next one, as the socket is
     * first in, first out; should a failed batch leave one for this call, it comes whole without its size: its
     * datagrams' frames lie end to end, and {@link #split} walks them by their lengths as it does a datagram's.
     *
     * @return 1 if a datagram was taken, 0 if none waits (or the call failed: tried again on the next poll)
     */
    private int receiveOne(final FrameHandler handler) {
        singleReceives++;
        rxNameLength.set(ValueLayout.JAVA_INT, 0, Posix.SOCKADDR_IN_SIZE);
        final long length;
        try {
            length = (long) Posix.RECVFROM_UNCAPTURED.invokeExact(fd, rxBuffers[0], (long) RX_BUFFER,
                Posix.MSG_DONTWAIT, rxNames, rxNameLength);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (length < 0) {
            return 0;
        }
        batching = true;
        if (rxNames.get(ValueLayout.JAVA_SHORT, 0) != Posix.AF_INET) {
            notIpv4++;
        } else {
            // not aggregating: a full-size datagram counts with the batch after it (aggregateOrNot), not alone
            fullAlone = length == mtu;
            split(handler, rxBuffers[0], rxViews[0], 0, (int) length, UdpAddress.handle(
                rxNames.get(Posix.NET_INT, Posix.SIN_ADDR), rxNames.get(Posix.NET_SHORT, Posix.SIN_PORT) & 0xFFFF));
        }
        return 1;
    }

    /**
     * The datagram size of receive {@code i}'s {@code UDP_GRO} cmsg, or 0 if there is none (a single datagram).
     */
    private int aggregatedSize(final int i) {
        final long controlLength = rxMsgs.get(ValueLayout.JAVA_LONG, (long) i * Posix.MMSGHDR_SIZE
            + Posix.MSG_CONTROLLEN);
        final long c = (long) i * RX_CONTROL;
        if (controlLength < Posix.CMSGHDR_SIZE + 4
            || rxControl.get(ValueLayout.JAVA_INT, c + Posix.CMSG_LEVEL) != Posix.SOL_UDP
            || rxControl.get(ValueLayout.JAVA_INT, c + Posix.CMSG_TYPE) != Posix.UDP_GRO) {
            return 0;
        }
        return rxControl.get(ValueLayout.JAVA_INT, c + Posix.CMSGHDR_SIZE);
    }

    /**
     * Hands each frame of a datagram up. A frame spans its header and the payload length the header states, or
     * the rest of the datagram if that is shorter (the engine then finds the length wrong and drops it); the next
     * frame starts where it ends. Less than a header left over is counted as truncated. Every length is checked
     * against the datagram before anything is read at it; each frame's CRC is checked on its own, and a frame that
     * fails it ends the datagram.
     */
    private void split(final FrameHandler handler, final MemorySegment datagram, final ByteBuffer view,
                       final int start, final int length, final long peer) {
        final int header = io.jdet.internal.wire.Frame.HEADER_LENGTH;
        final boolean loopback = UdpAddress.loopback(UdpAddress.handleIp(peer));
        final int end = start + length;
        int at = start;
        while (true) {
            final int left = end - at;
            if (left < header) {
                if (left > 0 || at == start) {
                    truncated++;
                }
                return;
            }
            // a protected frame of a queue pair carries the seal's trailer; a connection manager frame never does
            final int stated = io.jdet.internal.wire.Frame.wireLength(datagram, at);
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
            if (loopback && FrameCrc.leftOut(frame, frameLength)) {
                unchecked++;
            } else if (!rxCrc.verify(frame, frameView, frameLength)) {
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

    /** @return the transmit batch, for tests that make the kernel refuse sends */
    UdpTx transmitBatch() {
        return tx;
    }

    /** @return the threads inside {@link #await} or {@link #wakeup} now, for tests */
    int unlockedCalls() {
        return wait.unlockedCalls();
    }

    @Override
    public void addCounters(final Map<String, Long> counters) {
        counters.merge("link.rx.bad_crc", badCrc, Long::sum);
        counters.merge("link.rx.loopback_unchecked", unchecked + placement.unchecked, Long::sum);
        counters.merge("link.rx.truncated", truncated, Long::sum);
        counters.merge("link.rx.not_ipv4", notIpv4, Long::sum);
        counters.merge("link.rx.aggregates", aggregates, Long::sum);
        counters.merge("link.rx.aggregated_datagrams", aggregatedDatagrams, Long::sum);
        counters.merge("link.rx.aggregating_switches", aggregatingSwitches, Long::sum);
        counters.merge("link.rx.single_receives", singleReceives, Long::sum);
        counters.merge("link.rx.placed", placement.placed, Long::sum);
        counters.merge("link.rx.bad_crc", placement.badCrc, Long::sum);
        counters.merge("link.rx.truncated", placement.mismatched, Long::sum);
        tx.addCounters(counters);
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
