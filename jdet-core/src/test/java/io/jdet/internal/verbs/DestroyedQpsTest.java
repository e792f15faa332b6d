package io.jdet.internal.verbs;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class DestroyedQpsTest {
    @Test
    void aDestroyedQueuePairIsKnownOnlyToThePeerQueuePairItWasConnectedTo() {
        final DestroyedQps gone = new DestroyedQps();
        assertEquals(-1, gone.indexOf(0, 0, 0), "empty: not even the zero entry");
        gone.add(0x101, 77L, 0x202, 41, 9);
        final int at = gone.indexOf(0x101, 77L, 0x202);
        assertEquals(41, gone.reqAck(at), "the request ack it went with");
        assertEquals(9, gone.rspAck(at), "the response ack it went with");
        assertEquals(-1, gone.indexOf(0x102, 77L, 0x202), "another queue pair");
        assertEquals(-1, gone.indexOf(0x101, 78L, 0x202), "another address");
        assertEquals(-1, gone.indexOf(0x101, 77L, 0x203), "another queue pair at that address");
    }

    @Test
    void theOldestIsForgottenOnceCapacityMoreAreDestroyed() {
        final DestroyedQps gone = new DestroyedQps();
        for (int i = 0; i < DestroyedQps.CAPACITY; i++) {
            gone.add(1000 + i, i, 2000 + i, 10 * i, -i);
        }
        assertEquals(0, gone.reqAck(gone.indexOf(1000, 0, 2000)));
        final int last = DestroyedQps.CAPACITY - 1;
        assertEquals(10 * last, gone.reqAck(gone.indexOf(1000 + last, last, 2000 + last)));
        gone.add(5000, 5, 6000, 1, 2);
        assertEquals(-1, gone.indexOf(1000, 0, 2000), "the oldest made room");
        assertEquals(-1, gone.rspAck(gone.indexOf(1001, 1, 2001)), "the next oldest is still there, with its acks");
        assertEquals(2, gone.rspAck(gone.indexOf(5000, 5, 6000)));
    }
}
