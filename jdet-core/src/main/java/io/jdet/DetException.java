package io.jdet;

import java.util.Objects;

/**
 * The error a verb raises: it carries the {@link Errno} that the matching DET verb returns in C.
 * Data-path outcomes that happen after a work request was accepted are not exceptions but
 * {@link WcStatus completion statuses}. A refused connection raises the subclass {@link ConnectionRejectedException},
 * which also carries the peer's private data.
 */
public sealed class DetException extends RuntimeException permits ConnectionRejectedException {
    private static final long serialVersionUID = 1L;

    /** The error number. */
    private final Errno errno;

    /**
     * Creates an exception for an error number.
     *
     * @param errno   the error number
     * @param message what went wrong, for people
     */
    public DetException(final Errno errno, final String message) {
        super(Objects.requireNonNull(errno, "errno") + ": " + message);
        this.errno = errno;
    }

    /**
     * The error number.
     *
     * @return the errno, as named in the man page of the verb
     */
    public Errno errno() {
        return errno;
    }
}
