package io.jdet.collective;

import io.jdet.CollectiveTuning;
import io.jdet.DetException;
import io.jdet.Errno;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The rendezvous threshold: by default ({@link CollectiveTuning#AUTO_RENDEZVOUS}) 16 KiB over memory (the
 * in-process fabric, shared memory), where a copy through the slots outweighs the rendezvous's round trip sooner,
 * and 32 KiB over a network link; a threshold given is used on every link.
 */
class CollectiveRendezvousThresholdTest {
    @Test
    void shouldPickTheThresholdByTheLinkByDefault() {
        final CollectiveTuning auto = CollectiveTuning.DEFAULT;
        assertEquals(CollectiveTuning.AUTO_RENDEZVOUS, auto.rendezvousBytes());
        assertEquals(16_384, auto.rendezvousBytesFor("loop:default/3"));
        assertEquals(16_384, auto.rendezvousBytesFor("shm:group/1234.1"));
        assertEquals(32_768, auto.rendezvousBytesFor("udp:127.0.0.1:4000"));
        assertEquals(32_768, auto.rendezvousBytesFor("eth:veth0/02:00:00:00:00:01"));
    }

    @Test
    void shouldUseTheThresholdGivenOnEveryLink() {
        final CollectiveTuning given = CollectiveTuning.DEFAULT.withRendezvousBytes(65_536);
        assertEquals(65_536, given.rendezvousBytesFor("loop:default/3"));
        assertEquals(65_536, given.rendezvousBytesFor("udp:127.0.0.1:4000"));
        assertEquals(1, given.withRendezvousBytes(1).rendezvousBytesFor("shm:g/1.1"));
        assertEquals(32_768, given.withRendezvousBytes(CollectiveTuning.AUTO_RENDEZVOUS)
            .rendezvousBytesFor("udp:10.0.0.1:4000"), "automatic again");
    }

    @Test
    void shouldRefuseANullAddressWhateverTheThreshold() {
        assertThrows(NullPointerException.class, () -> CollectiveTuning.DEFAULT.rendezvousBytesFor(null));
        assertThrows(NullPointerException.class,
            () -> CollectiveTuning.DEFAULT.withRendezvousBytes(65_536).rendezvousBytesFor(null));
    }

    @Test
    void shouldRefuseANegativeThresholdWithEinval() {
        assertEquals(Errno.EINVAL, assertThrows(DetException.class,
            () -> CollectiveTuning.DEFAULT.withRendezvousBytes(-1)).errno());
    }
}
