package io.jdet.internal.link;

/** Closing file descriptors the links opened through {@link Posix}. */
final class Descriptors {
    private Descriptors() {
    }

    /**
     * Closes a descriptor, if open; what close(2) says is of no use here (the descriptor is gone either way).
     *
     * @param descriptor the descriptor, or a negative number for none
     */
    static void close(final int descriptor) {
        if (descriptor < 0) {
            return;
        }
        try {
            final int ignored = (int) Posix.CLOSE.invokeExact(descriptor);
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
