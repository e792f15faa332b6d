package io.jdet.perf.aeron;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared media driver's lifetime: kept across Aeron steps on a host of 4 CPUs or more, closed after each on a
 * smaller one (where its yielding thread would take CPU time from the jdet steps after it).
 */
class AeronMediaTest {
    @AfterEach
    void close() {
        AeronMedia.closeShared();
    }

    @Test
    void shouldCloseTheDriverAfterAStepOnASmallHostAndKeepItOnALargeOne() {
        final io.aeron.Aeron first = AeronMedia.client(false);
        AeronMedia.stepDone(4);
        assertTrue(AeronMedia.running(), "kept on 4 CPUs");
        assertSame(first, AeronMedia.client(false), "and reused");
        AeronMedia.stepDone(2);
        assertFalse(AeronMedia.running(), "closed on 2 CPUs");
        AeronMedia.client(false);
        assertTrue(AeronMedia.running(), "the next step starts another");
    }
}
