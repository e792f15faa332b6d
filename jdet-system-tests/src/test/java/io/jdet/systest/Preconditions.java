package io.jdet.systest;

import org.opentest4j.TestAbortedException;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * What a system test needs of the machine (root, iproute2, network namespaces, a UDP loopback). Elsewhere a
 * missing precondition skips the test with its reason; in CI (environment variable {@code CI=true}) it fails the
 * test, since there a skipped test would pass silently and the behaviour it guards would go unchecked.
 */
final class Preconditions {
    /** The environment variable CI services set to {@code true}. */
    static final String CI = "CI";

    private Preconditions() {
    }

    /** @return whether the tests run in CI ({@code CI=true}) */
    static boolean inCi() {
        return "true".equalsIgnoreCase(System.getenv(CI));
    }

    /**
     * Requires a precondition: returns if it holds; otherwise fails in CI and skips elsewhere.
     *
     * @param met  whether it holds
     * @param what what is missing, for the message
     */
    static void require(final boolean met, final String what) {
        require(met, what, inCi());
    }

    /**
     * Requires a precondition, CI or not as told.
     *
     * @param met  whether it holds
     * @param what what is missing, for the message
     * @param ci   whether to fail rather than skip
     * @throws AssertionError        in CI when the precondition does not hold
     * @throws TestAbortedException  elsewhere when it does not hold (JUnit reports the test as skipped)
     */
    static void require(final boolean met, final String what, final boolean ci) {
        if (met) {
            return;
        }
        if (ci) {
            fail(what + ": CI=true, where this test must run rather than be skipped; give the CI machine what it "
                + "needs");
        }
        throw new TestAbortedException("skipped: " + what + " (with CI=true this fails instead)");
    }
}
