package io.jdet.testing;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Anonymous private memory from {@code mmap}: its pages are mapped on first touch, and a page only ever read is the
 * kernel's shared zero page. So a test can register a region of 2 GiB and have it read in full at the cost of the
 * few pages it writes, where {@code Arena.allocate} would zero-fill (and commit) every byte first. Linux only.
 */
public final class LazyMemory {
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS_NORESERVE = 0x02 | 0x20 | 0x4000;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;

    static {
        final Linker linker = Linker.nativeLinker();
        MMAP = linker.downcallHandle(linker.defaultLookup().find("mmap").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        MUNMAP = linker.downcallHandle(linker.defaultLookup().find("munmap").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
    }

    private LazyMemory() {
    }

    /**
     * Maps zeroed memory whose lifetime is an arena's: closing the arena unmaps it.
     *
     * @param bytes the length
     * @param arena the arena (shared, so that jdet's threads may reach it)
     * @return the memory
     */
    public static MemorySegment map(final long bytes, final Arena arena) {
        final long address;
        try {
            address = (long) MMAP.invokeExact(0L, bytes, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS_NORESERVE, -1, 0L);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (address == -1L) {
            throw new IllegalStateException("mmap of " + bytes + " bytes failed");
        }
        return MemorySegment.ofAddress(address).reinterpret(bytes, arena, unused -> unmap(address, bytes));
    }

    private static void unmap(final long address, final long bytes) {
        try {
            final int rc = (int) MUNMAP.invokeExact(address, bytes);
            if (rc != 0) {
                throw new IllegalStateException("munmap failed");
            }
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
