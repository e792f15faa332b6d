package io.jdet.internal.link;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The few Linux socket calls the UDP link needs, bound through the foreign function API: no JNI, no copies.
 * Constants and structure layouts are those of 64-bit Linux (x86-64 and AArch64 share them). Each handle that can
 * fail captures {@code errno} into a caller-supplied segment ({@link #newErrnoState}). The data-path calls
 * ({@link #SENDMSG}, {@link #SENDMMSG}, {@link #RECVMMSG}, and their uncaptured forms with
 * {@link #RECVFROM_UNCAPTURED}) are non-blocking and marked critical, so a call costs a plain native call;
 * {@link #PPOLL} blocks and is not.
 */
final class Posix {
    static final int AF_INET = 2;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_NONBLOCK = 0x800;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int SOL_SOCKET = 1;
    static final int SO_SNDBUF = 7;
    static final int SO_RCVBUF = 8;
    static final int SO_SNDBUFFORCE = 32;
    static final int SO_RCVBUFFORCE = 33;
    static final int MSG_DONTWAIT = 0x40;
    /** Looks at the next datagram and leaves it queued. */
    static final int MSG_PEEK = 0x2;
    /** With a datagram socket, answer the datagram's real length even where the buffers were shorter. */
    static final int MSG_TRUNC = 0x20;
    static final short POLLIN = 1;
    static final int EFD_NONBLOCK = 0x800;
    static final int EFD_CLOEXEC = 0x80000;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int ENOBUFS = 105;
    static final int EIO = 5;
    static final int EINVAL = 22;
    static final int EMSGSIZE = 90;
    /** {@code SOL_UDP} and {@code UDP_SEGMENT} (linux/udp.h): a send's cmsg that has the kernel cut it into datagrams. */
    static final int SOL_UDP = 17;
    static final int UDP_SEGMENT = 103;
    /** {@code UDP_GRO} (linux/udp.h): a socket option, and the cmsg that gives an aggregate's datagram size. */
    static final int UDP_GRO = 104;

    /** {@code struct sockaddr_in}: family (host order), port and address (network order), 8 bytes of zero. */
    static final int SOCKADDR_IN_SIZE = 16;
    static final int SIN_PORT = 2;
    static final int SIN_ADDR = 4;
    /** {@code struct msghdr}: name, namelen, iov, iovlen, control, controllen, flags. */
    static final int MSGHDR_SIZE = 56;
    static final int MSG_NAME = 0;
    static final int MSG_NAMELEN = 8;
    static final int MSG_IOV = 16;
    static final int MSG_IOVLEN = 24;
    static final int MSG_CONTROL = 32;
    static final int MSG_CONTROLLEN = 40;
    /** {@code struct cmsghdr}: length (the header's 16 bytes included), level, type, then the data. */
    static final int CMSGHDR_SIZE = 16;
    static final int CMSG_LEVEL = 8;
    static final int CMSG_TYPE = 12;
    /** {@code struct mmsghdr}: a msghdr, then the received length (and padding). */
    static final int MMSGHDR_SIZE = 64;
    static final int MMSG_LEN = 56;
    /** {@code struct iovec}: base, length. */
    static final int IOVEC_SIZE = 16;
    /** {@code struct pollfd}: fd, events, revents. */
    static final int POLLFD_SIZE = 8;
    /** {@code struct timespec}: seconds, nanoseconds. */
    static final int TIMESPEC_SIZE = 16;

    static final ValueLayout.OfShort NET_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
        java.nio.ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt NET_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN);

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    /** The option that captures {@code errno} into the handle's extra first argument. */
    static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final MemoryLayout STATE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE = STATE_LAYOUT.varHandle(
        MemoryLayout.PathElement.groupElement("errno"));

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    private static final java.lang.foreign.AddressLayout PTR = ValueLayout.ADDRESS;

    /** {@code int socket(int domain, int type, int protocol)}. */
    static final MethodHandle SOCKET = bind("socket", FunctionDescriptor.of(INT, INT, INT, INT), ERRNO);
    /** {@code int bind(int fd, const struct sockaddr *addr, socklen_t len)}. */
    static final MethodHandle BIND = bind("bind", FunctionDescriptor.of(INT, INT, PTR, INT), ERRNO);
    /** {@code int getsockname(int fd, struct sockaddr *addr, socklen_t *len)}. */
    static final MethodHandle GETSOCKNAME = bind("getsockname", FunctionDescriptor.of(INT, INT, PTR, PTR), ERRNO);
    /** {@code int setsockopt(int fd, int level, int name, const void *value, socklen_t len)}. */
    static final MethodHandle SETSOCKOPT = bind("setsockopt", FunctionDescriptor.of(INT, INT, INT, INT, PTR, INT),
        ERRNO);
    /** {@code int getsockopt(int fd, int level, int name, void *value, socklen_t *len)}. */
    static final MethodHandle GETSOCKOPT = bind("getsockopt", FunctionDescriptor.of(INT, INT, INT, INT, PTR, PTR),
        ERRNO);
    /** {@code ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)}. */
    static final MethodHandle SENDMSG = bind("sendmsg", FunctionDescriptor.of(LONG, INT, PTR, INT), ERRNO,
        Linker.Option.critical(false));
    /** {@code int sendmmsg(int fd, struct mmsghdr *msgs, unsigned int n, int flags)}. */
    static final MethodHandle SENDMMSG = bind("sendmmsg", FunctionDescriptor.of(INT, INT, PTR, INT, INT), ERRNO,
        Linker.Option.critical(false));
    /** {@code int recvmmsg(int fd, struct mmsghdr *msgs, unsigned int n, int flags, struct timespec *timeout)}. */
    static final MethodHandle RECVMMSG = bind("recvmmsg", FunctionDescriptor.of(INT, INT, PTR, INT, INT, PTR), ERRNO,
        Linker.Option.critical(false));
    /**
     * {@code sendmsg} without errno capture, for the data path: a captured call slices its capture segment on every
     * call, which allocates whenever the JIT does not inline the call (seen in {@code UdpAllocationTest}). A datagram
     * send that fails sent nothing, so the caller repeats it through {@link #SENDMSG} to learn why.
     */
    static final MethodHandle SENDMSG_UNCAPTURED = bind("sendmsg", FunctionDescriptor.of(LONG, INT, PTR, INT),
        Linker.Option.critical(false));
    /** {@code sendmmsg} without errno capture, for the data path (see {@link #SENDMSG_UNCAPTURED}). */
    static final MethodHandle SENDMMSG_UNCAPTURED = bind("sendmmsg", FunctionDescriptor.of(INT, INT, PTR, INT, INT),
        Linker.Option.critical(false));
    /**
     * {@code recvmmsg} without errno capture, for the data path (see {@link #SENDMSG_UNCAPTURED}): a non-blocking
     * receive that fails is treated alike whatever the errno (nothing taken; tried again on the next poll).
     */
    static final MethodHandle RECVMMSG_UNCAPTURED = bind("recvmmsg",
        FunctionDescriptor.of(INT, INT, PTR, INT, INT, PTR), Linker.Option.critical(false));
    /**
     * {@code long syscall(long number, ...)} called as {@code sendmmsg(fd, msgs, n, flags)} plus {@link #KEEP_ARGS}
     * segments the kernel ignores: the downcall keeps their arenas open for its duration and refuses to start if one
     * is closed ({@link #sendmmsgKeeping}). Variadic, every argument a long or a pointer, as {@code syscall(2)}
     * reads them.
     */
    private static final MethodHandle SYSCALL_SENDMMSG = bind("syscall", syscallDescriptor(), ERRNO,
        Linker.Option.firstVariadicArg(1), Linker.Option.critical(false));
    /**
     * {@link #SYSCALL_SENDMMSG}'s shape without errno capture, for the data path (see {@link #SENDMSG_UNCAPTURED}):
     * {@code sendmmsg} ({@link #sendmmsgKeeping}) and {@code recvmsg} ({@link #recvmsgKeeping}) with segments kept.
     */
    private static final MethodHandle SYSCALL_KEEPING_UNCAPTURED = bind("syscall", syscallDescriptor(),
        Linker.Option.firstVariadicArg(1), Linker.Option.critical(false));
    /**
     * {@code recvfrom} without errno capture, for the data path (see {@link #SENDMSG_UNCAPTURED}): one datagram, the
     * cheapest receive call when nothing waits (an empty non-blocking {@code recvfrom} took 527 ns on a 2-vCPU guest
     * where {@code recvmsg} took 684 and {@code recvmmsg} 706: no message header to copy in); a receive that fails
     * is treated alike whatever the errno.
     */
    static final MethodHandle RECVFROM_UNCAPTURED = bind("recvfrom", FunctionDescriptor.of(LONG, INT, PTR, LONG, INT,
        PTR, PTR), Linker.Option.critical(false));
    /**
     * {@code recvmsg} without errno capture, for the data path (see {@link #SENDMSG_UNCAPTURED}): a look at the next
     * datagram ({@link #MSG_PEEK}) that fails is treated alike whatever the errno.
     */
    static final MethodHandle RECVMSG_UNCAPTURED = bind("recvmsg", FunctionDescriptor.of(LONG, INT, PTR, INT),
        Linker.Option.critical(false));
    /** The segments {@link #sendmmsgKeeping} passes along. */
    static final int KEEP_ARGS = 4;
    /** {@code __NR_sendmmsg}: 307 on x86-64, 269 on AArch64 (the generic table). */
    private static final long NR_SENDMMSG = "aarch64".equals(System.getProperty("os.arch")) ? 269 : 307;
    /** {@code __NR_recvmsg}: 47 on x86-64, 212 on AArch64. */
    private static final long NR_RECVMSG = "aarch64".equals(System.getProperty("os.arch")) ? 212 : 47;
    /** {@code int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)}. */
    static final MethodHandle PPOLL = bind("ppoll", FunctionDescriptor.of(INT, PTR, LONG, PTR, PTR), ERRNO);
    /**
     * {@code ppoll} without errno capture, for the waits of the data path (see {@link #SENDMSG_UNCAPTURED}): a
     * failed wait (EINTR, say) is treated as a spurious return, and the caller looks again.
     */
    static final MethodHandle PPOLL_UNCAPTURED = bind("ppoll", FunctionDescriptor.of(INT, PTR, LONG, PTR, PTR));
    /** {@code int eventfd(unsigned int initial, int flags)}. */
    static final MethodHandle EVENTFD = bind("eventfd", FunctionDescriptor.of(INT, INT, INT), ERRNO);
    /** {@code ssize_t write(int fd, const void *buf, size_t n)}. */
    static final MethodHandle WRITE = bind("write", FunctionDescriptor.of(LONG, INT, PTR, LONG));
    /** {@code ssize_t read(int fd, void *buf, size_t n)}. */
    static final MethodHandle READ = bind("read", FunctionDescriptor.of(LONG, INT, PTR, LONG));
    /** {@code int close(int fd)}. */
    static final MethodHandle CLOSE = bind("close", FunctionDescriptor.of(INT, INT));

    private Posix() {
    }

    /**
     * Binds a libc function.
     *
     * @param name       the symbol
     * @param descriptor its signature
     * @param options    linker options ({@link #ERRNO}, variadic, critical)
     * @return the handle
     * @throws UnsatisfiedLinkError if libc has no such symbol
     */
    @SuppressWarnings("restricted") // native access is the point: callers enable it (--enable-native-access)
    static MethodHandle bind(final String name, final FunctionDescriptor descriptor,
                                     final Linker.Option... options) {
        final MemorySegment symbol = LIBC.find(name).orElseThrow(
            () -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(symbol, descriptor, options);
    }

    /**
     * Asks for socket buffers of a size, both ways: the forcing option first (it needs CAP_NET_ADMIN), else the
     * plain one, which the kernel caps at {@code net.core.*mem_max}. What the kernel refuses is left as it is.
     *
     * @param socket the socket
     * @param bytes  the size wanted
     * @param value  four bytes of scratch memory
     * @param errno  an errno state for the calls
     * @throws Throwable as a downcall may
     */
    static void sizeBuffers(final int socket, final int bytes, final MemorySegment value, final MemorySegment errno)
        throws Throwable {
        value.set(INT, 0, bytes);
        for (final int[] option : new int[][] {{SO_RCVBUFFORCE, SO_RCVBUF}, {SO_SNDBUFFORCE, SO_SNDBUF}}) {
            if ((int) SETSOCKOPT.invokeExact(errno, socket, SOL_SOCKET, option[0], value, 4) != 0) {
                final int ignored = (int) SETSOCKOPT.invokeExact(errno, socket, SOL_SOCKET, option[1], value, 4);
            }
        }
    }

    /** Whether this platform has the calls and layouts above (64-bit Linux). */
    static boolean supported() {
        final String os = System.getProperty("os.name", "");
        final String arch = System.getProperty("os.arch", "");
        return os.startsWith("Linux") && (arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64"));
    }

    /**
     * A segment for a handle's captured errno.
     *
     * @param arena where to allocate it
     * @return the segment
     */
    static MemorySegment newErrnoState(final java.lang.foreign.Arena arena) {
        return arena.allocate(STATE_LAYOUT);
    }

    /**
     * {@code sendmmsg} for the data path: without errno capture (no per-call allocation), and only when no message
     * left, once more with capture so that {@link #errno} can say why. Non-blocking sockets only.
     *
     * @param fd      the socket
     * @param msgs    the first {@code struct mmsghdr}
     * @param count   how many
     * @param errno   the capture state ({@link #newErrnoState})
     * @return the messages sent, or a value &lt;= 0 with errno in {@code errno}
     */
    static int sendmmsg(final int fd, final MemorySegment msgs, final int count, final MemorySegment errno) {
        try {
            final int n = (int) SENDMMSG_UNCAPTURED.invokeExact(fd, msgs, count, 0);
            return n > 0 ? n : (int) SENDMMSG.invokeExact(errno, fd, msgs, count, 0);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static FunctionDescriptor syscallDescriptor() {
        return FunctionDescriptor.of(LONG, LONG, LONG, PTR, LONG, LONG, PTR, PTR, PTR, PTR);
    }

    /**
     * {@code sendmmsg} that keeps memory alive: the iovecs may point into the segments of {@code keep} (one per
     * arena, {@link MemorySegment#NULL} where unused), and no arena of theirs can be closed while the kernel reads
     * (closing fails with IllegalStateException meanwhile, the JDK's rule for a segment a downcall was passed).
     * Without errno capture, then only when no message left, once more with capture (see {@link #sendmmsg}).
     *
     * @param fd    the socket
     * @param msgs  the first {@code struct mmsghdr}
     * @param count how many
     * @param errno the capture state ({@link #newErrnoState})
     * @param keep  {@link #KEEP_ARGS} segments
     * @return the messages sent, or a value &lt;= 0 with errno in {@code errno}
     * @throws IllegalStateException if the arena of a segment of {@code keep} is closed: nothing was sent
     */
    static int sendmmsgKeeping(final int fd, final MemorySegment msgs, final int count, final MemorySegment errno,
                               final MemorySegment[] keep) {
        final long n;
        try {
            final long sent = (long) SYSCALL_KEEPING_UNCAPTURED.invokeExact(NR_SENDMMSG, (long) fd, msgs,
                (long) count, 0L, keep[0], keep[1], keep[2], keep[3]);
            n = sent > 0 ? sent : (long) SYSCALL_SENDMMSG.invokeExact(errno, NR_SENDMMSG, (long) fd, msgs,
                (long) count, 0L, keep[0], keep[1], keep[2], keep[3]);
        } catch (final IllegalStateException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        return (int) n;
    }

    /**
     * {@code recvmsg} that keeps memory alive while the kernel writes into it: the iovecs may point into
     * {@code keep}'s memory, whose arena cannot be closed during the call (as {@link #sendmmsgKeeping}). Without errno
     * capture: the data path treats every failure alike.
     *
     * @param fd    the socket
     * @param msg   the {@code struct msghdr}
     * @param flags the receive flags
     * @param keep  the segment the iovecs write into
     * @return the bytes received, or a negative value
     * @throws IllegalStateException if {@code keep}'s arena is closed (nothing was received), or it is confined to
     *                               another thread (WrongThreadException)
     */
    static long recvmsgKeeping(final int fd, final MemorySegment msg, final int flags, final MemorySegment keep) {
        try {
            return (long) SYSCALL_KEEPING_UNCAPTURED.invokeExact(NR_RECVMSG, (long) fd, msg, (long) flags, 0L, keep,
                MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL);
        } catch (final IllegalStateException e) {
            throw e;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The errno captured by the last call that used a state segment.
     *
     * @param state the segment
     * @return the errno
     */
    static int errno(final MemorySegment state) {
        return (int) ERRNO_HANDLE.get(state, 0L);
    }

    /**
     * Writes an IPv4 socket address.
     *
     * @param sa   the {@code sockaddr_in} memory
     * @param ip   the address, most significant byte first as in dotted notation
     * @param port the port
     */
    static void sockaddr(final MemorySegment sa, final int ip, final int port) {
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET);
        sa.set(NET_SHORT, SIN_PORT, (short) port);
        sa.set(NET_INT, SIN_ADDR, ip);
        sa.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, 0L);
    }
}
