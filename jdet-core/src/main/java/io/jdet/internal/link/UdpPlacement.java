package io.jdet.internal.link;

import io.jdet.internal.wire.Frame;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * The UDP link's receive straight into place: one copy per byte of a long send, RDMA write or read response, the
 * kernel's, instead of two (the kernel's into a receive buffer, then the engine's into the target).
 *
 * <p>While the engine expects the next fragment of a long message ({@link FrameHandler#placing}), each receive first
 * looks at the next datagram's header ({@code MSG_PEEK}, which copies no more than the header) and asks the engine
 * where its payload goes ({@link FrameHandler#placement}). The engine names a target only where the true fragment
 * would go whatever the header's corruption: a write's continuation in a range its first frame already checked
 * whole, the receive a send consumes, a read's own memory. The datagram is then received in three pieces: the
 * header into scratch, the payload's first bytes into the target (registered memory, kept alive through the call as
 * {@link UdpTx} keeps what it sends), and the payload's last bytes into scratch after the header. Then the frame's
 * CRC is checked over the three; a frame that fails it is dropped as any other, and the sender resends it over the
 * same bytes (a message's target holds no defined value until the message completes). The engine copies the last
 * bytes itself, last, so that a reader polling the last byte of a write still finds the rest in place before it.
 *
 * <p>A datagram the engine does not place (anything but such a fragment) is left queued and received alone, the usual
 * way; after a few such looks in a row the engine stops looking until its next long message. Each look costs one
 * system call, paid only while a long message whose fragments can be placed arrives. Called by the holder of the
 * NIC's engine lock only. Allocation free.
 */
final class UdpPlacement {
    /** Received by {@link #receive}: a datagram, placed or dropped. */
    static final int TAKEN = 1;
    /** Nothing waits. */
    static final int NONE = 0;
    /** The next datagram is not to be placed: receive it as usual. */
    static final int NOT_PLACED = -1;

    private final int fd;
    /**
     * The header, then the payload's last bytes: room for any datagram, since a peer whose MTU is larger than this
     * link's sends longer frames (as the usual receive takes them, into buffers of 64 KiB).
     */
    private final MemorySegment frame;
    private final ByteBuffer frameView;
    private final MemorySegment name;
    private final MemorySegment msg;
    private final MemorySegment iovs;
    private final FrameGather target = new FrameGather(1);
    private final FrameCrc crc = new FrameCrc();
    long placed;
    long badCrc;
    long unchecked;
    long mismatched;

    UdpPlacement(final Arena arena, final int fd) {
        this.fd = fd;
        this.frame = arena.allocate(UdpAddress.MAX_UDP_PAYLOAD, 64);
        this.frameView = frame.asByteBuffer();
        this.name = arena.allocate(Posix.SOCKADDR_IN_SIZE, 8);
        this.msg = arena.allocate(Posix.MSGHDR_SIZE, 8);
        this.iovs = arena.allocate(3L * Posix.IOVEC_SIZE, 8);
        msg.set(ValueLayout.ADDRESS, Posix.MSG_NAME, name);
        msg.set(ValueLayout.ADDRESS, Posix.MSG_IOV, iovs);
    }

    /**
     * Receives the next datagram into place if the engine names a place for it.
     *
     * @param handler the engine
     * @return {@link #TAKEN}, {@link #NONE} or {@link #NOT_PLACED}
     */
    int receive(final FrameHandler handler) {
        final int header = Frame.HEADER_LENGTH;
        iov(0, frame.address(), header);
        msg.set(ValueLayout.JAVA_LONG, Posix.MSG_IOVLEN, 1L);
        msg.set(ValueLayout.JAVA_INT, Posix.MSG_NAMELEN, Posix.SOCKADDR_IN_SIZE);
        final long length;
        try {
            length = (long) Posix.RECVMSG_UNCAPTURED.invokeExact(fd, msg,
                Posix.MSG_PEEK | Posix.MSG_TRUNC | Posix.MSG_DONTWAIT);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (length < 0) {
            return NONE; // EAGAIN, or an error the usual receive meets again
        }
        if (length < header || length > frame.byteSize() || name.get(ValueLayout.JAVA_SHORT, 0) != Posix.AF_INET) {
            return NOT_PLACED;
        }
        final int ip = name.get(Posix.NET_INT, Posix.SIN_ADDR);
        final int port = name.get(Posix.NET_SHORT, Posix.SIN_PORT) & 0xFFFF;
        final long peer = UdpAddress.handle(ip, port);
        target.clear();
        final int n = handler.placement(frame, (int) length, peer, target);
        final int tail = (int) length - header - n;
        if (n <= 0 || tail < 1 || target.count() != 1 || target.length(0) != n) {
            target.clear();
            return NOT_PLACED;
        }
        final MemorySegment into = target.segment(0);
        iov(1, into.address() + target.offset(0), n);
        iov(2, frame.address() + header, tail);
        msg.set(ValueLayout.JAVA_LONG, Posix.MSG_IOVLEN, 3L);
        msg.set(ValueLayout.JAVA_INT, Posix.MSG_NAMELEN, Posix.SOCKADDR_IN_SIZE);
        final long got;
        try {
            got = Posix.recvmsgKeeping(fd, msg, Posix.MSG_DONTWAIT, into);
        } catch (final IllegalStateException | WrongThreadException e) {
            target.clear();
            return NOT_PLACED; // the region's arena was closed: the usual receive takes it, the engine finds it gone
        }
        try {
            if (got < 0) {
                return NOT_PLACED; // the call failed (a signal, say): the datagram is still queued, taken as usual
            }
            if (got != length || name.get(Posix.NET_INT, Posix.SIN_ADDR) != ip
                || (name.get(Posix.NET_SHORT, Posix.SIN_PORT) & 0xFFFF) != port) {
                mismatched++; // not the datagram looked at: this link is its socket's only reader, so never seen
                return TAKEN;
            }
            if (UdpAddress.loopback(ip) && FrameCrc.leftOut(frame, header)) {
                unchecked++; // sent over loopback without a CRC (UdpLink#checksummed)
            } else if (!crc.verify(frame, frameView, header, target, tail)) {
                badCrc++;
                return TAKEN;
            }
            placed++;
            handler.onPlacedFrame(frame, (int) length, peer, n);
            return TAKEN;
        } finally {
            target.clear();
        }
    }

    private void iov(final int i, final long address, final long length) {
        final long at = (long) i * Posix.IOVEC_SIZE;
        iovs.set(ValueLayout.JAVA_LONG, at, address);
        iovs.set(ValueLayout.JAVA_LONG, at + 8, length);
    }
}
