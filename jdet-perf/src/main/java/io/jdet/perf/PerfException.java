package io.jdet.perf;

/**
 * A run of the perf tool failed in a way the user should read: an unreachable peer, a timeout, a failed
 * completion, corrupted data. The command prints the message and exits with status 1; no stack trace.
 */
public final class PerfException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong, for people
     */
    public PerfException(final String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what went wrong, for people
     * @param cause   the underlying failure
     */
    public PerfException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
