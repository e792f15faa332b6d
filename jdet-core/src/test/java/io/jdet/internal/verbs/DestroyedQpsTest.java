package io.jdet.internal.verbs;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DestroyedQpsTest {
    @Test
    void aDestroyedQueuePairIsKnownOnlyToThePeerQueuePairItWasConnectedTo() {
        final DestroyedQps gone = new DestroyedQps();
        assertFalse(gone.contains(0, 0, 0), "empty: not even the zero entry");
        gone.add(0x101, 77L, 0x202);
        assertTrue(gone.contains(0x101, 77L, 0x202));
        assertFalse(gone.contains(0x102, 77L, 0x202), "another queue pair");
        assertFalse(gone.contains(0x101, 78L, 0x202), "another address");
        assertFalse(gone.contains(0x101, 77L, 0x203), "another queue pair at that address");
    }

    @Test
    void theOldestIsForgottenOnceCapacityMoreAreDestroyed() {
        final DestroyedQps gone = new DestroyedQps();
        for (int i = 0; i < DestroyedQps.CAPACITY; i++) {
            gone.add(1000 + i, i, 2000 + i);
        }
        assertTrue(gone.contains(1000, 0, 2000));
        assertTrue(gone.contains(1000 + DestroyedQps.CAPACITY - 1, DestroyedQps.CAPACITY - 1,
            2000 + DestroyedQps.CAPACITY - 1));
        gone.add(5000, 5, 6000);
        assertFalse(gone.contains(1000, 0, 2000), "the oldest made room");
        assertTrue(gone.contains(1001, 1, 2001));
        assertTrue(gone.contains(5000, 5, 6000));
    }
}
