package io.jdet.internal.link;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Liveness by pid and start time: this process is alive under its own stamp, not under another, nor a pid unused. */
class ProcessStampTest {
    /** Beyond Linux's largest pid (2^22): no process has it. */
    private static final long NO_SUCH_PID = 1L << 23;

    @Test
    void thisProcessIsAliveUnderItsOwnStartTimeOnly() {
        assertTrue(ProcessStamp.START > 0, "read from /proc/self's stat: " + ProcessStamp.START);
        assertEquals(ProcessStamp.START, ProcessStamp.startTime(ProcessStamp.PID));
        assertTrue(ProcessStamp.alive(ProcessStamp.PID, ProcessStamp.START));
        assertTrue(ProcessStamp.alive(ProcessStamp.PID, -1), "any start time accepted");
        assertFalse(ProcessStamp.alive(ProcessStamp.PID, ProcessStamp.START + 1), "a pid reused by another process");
    }

    @Test
    void aPidNoProcessHasIsNotAlive() {
        assertEquals(-1, ProcessStamp.startTime(NO_SUCH_PID));
        assertEquals(-1, ProcessStamp.startTime(0));
        assertEquals(-1, ProcessStamp.startTime(-7));
        assertFalse(ProcessStamp.alive(NO_SUCH_PID, -1));
        assertFalse(ProcessStamp.alive(0, -1));
    }
}
