package io.jdet.systest;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A missing precondition skips a system test on a developer's machine and fails it in CI. */
class PreconditionsTest {

    @Test
    void shouldFailInCiAndSkipElsewhereWhenPreconditionIsMissing() {
        final AssertionFailedError failed = assertThrows(AssertionFailedError.class,
            () -> Preconditions.require(false, "no root", true));
        assertTrue(failed.getMessage().startsWith("no root: CI=true"), failed.getMessage());
        final TestAbortedException skipped = assertThrows(TestAbortedException.class,
            () -> Preconditions.require(false, "no root", false));
        assertTrue(skipped.getMessage().startsWith("skipped: no root"), skipped.getMessage());
    }

    @Test
    void shouldPassWhenPreconditionHolds() {
        assertDoesNotThrow(() -> Preconditions.require(true, "nothing missing", true));
        assertDoesNotThrow(() -> Preconditions.require(true, "nothing missing", false));
    }
}
