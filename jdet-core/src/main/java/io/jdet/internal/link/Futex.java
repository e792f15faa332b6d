package io.jdet.internal.link;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The Linux futex, bound through the foreign function API: glibc has no wrapper, so this calls
 * {@code long syscall(long number, ...)} with {@code SYS_futex} (202 on x86-64, 98 on AArch64). Only the shared
 * (non-private) operations are used, because the futex word lives in a file mapping shared between processes
 * (futex(2): "the futex is placed in a region of shared memory"). Addresses are passed as plain {@code long}s, so a
 * call acquires no memory session.
 */
final class Futex {
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final long SYS_FUTEX = switch (System.getProperty("os.arch", "")) {
        case "aarch64" -> 98L;
        default -> 202L;
    };
    /** Every argument as a long: the variadic part of {@code syscall} reads each one as a long. */
    private static final MethodHandle SYSCALL = bind();

    private Futex() {
    }

    @SuppressWarnings("restricted") // native access is the point: callers enable it (--enable-native-access)
    private static MethodHandle bind() {
        final Linker linker = Linker.nativeLinker();
        final SymbolLookup libc = linker.defaultLookup();
        final MemorySegment symbol = libc.find("syscall").orElseThrow(
            () -> new UnsatisfiedLinkError("libc has no syscall"));
        final ValueLayout.OfLong l = ValueLayout.JAVA_LONG;
        return linker.downcallHandle(symbol, FunctionDescriptor.of(l, l, l, l, l, l, l, l),
            Linker.Option.firstVariadicArg(1));
    }

    /**
     * Sleeps while the 32-bit word at {@code address} holds {@code expected}, until a {@link #wake}, a signal or
     * the timeout. Returns at once if the word differs (the kernel compares atomically with queueing the caller).
     *
     * @param address  the word's address in shared memory (4-byte aligned)
     * @param expected the value read before deciding to sleep
     * @param timespec the address of a {@code struct timespec} holding the relative timeout
     */
    static void await(final long address, final int expected, final long timespec) {
        try {
            final long ignored = (long) SYSCALL.invokeExact(SYS_FUTEX, address, (long) FUTEX_WAIT,
                (long) expected, timespec, 0L, 0L);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Wakes the sleepers on a word.
     *
     * @param address the word's address in shared memory
     * @param count   the most sleepers to wake
     */
    static void wake(final long address, final int count) {
        try {
            final long ignored = (long) SYSCALL.invokeExact(SYS_FUTEX, address, (long) FUTEX_WAKE, (long) count,
                0L, 0L, 0L);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
