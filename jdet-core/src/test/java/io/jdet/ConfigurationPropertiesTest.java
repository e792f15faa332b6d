package io.jdet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

import static io.jdet.testing.Tests.assertErrno;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Configuration: "Each has a system property that sets its default ... validated by conclude()". A property that
 * is not a number was either ignored without a word (the default was used) or, for the EtherType, made every
 * {@code new Configuration()} and {@code Det.open()} throw NumberFormatException; now both are EINVAL naming it.
 */
@ResourceLock(Resources.SYSTEM_PROPERTIES)
@Timeout(30)
class ConfigurationPropertiesTest {

    private static void withProperty(final String name, final String value, final Runnable check) {
        final String was = System.getProperty(name);
        System.setProperty(name, value);
        try {
            check.run();
        } finally {
            if (was == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, was);
            }
        }
    }

    @Test
    void aPropertyThatIsNotANumberIsEinval() {
        withProperty(Configuration.ETH_ETHER_TYPE_PROP, "ipx", () ->
            assertErrno(Errno.EINVAL, Configuration::new, "a malformed EtherType"));
        withProperty(Configuration.ETH_ETHER_TYPE_PROP, "ipx", () ->
            assertErrno(Errno.EINVAL, Det::open, "a malformed EtherType, by the default configuration"));
        withProperty(Configuration.WINDOW_FRAMES_PROP, "lots", () ->
            assertErrno(Errno.EINVAL, Det::open, "a malformed window"));
        withProperty(Configuration.ACK_TIMEOUT_MS_PROP, "5s", () ->
            assertErrno(Errno.EINVAL, Det::open, "a malformed timeout"));
        withProperty(Configuration.JMX_PROP, "yes", () ->
            assertErrno(Errno.EINVAL, Det::open, "a boolean that is neither true nor false"));
        withProperty(Configuration.WINDOW_FRAMES_PROP, "0x20", () ->
            assertEquals(32, new Configuration().windowFrames(), "hexadecimal, as Integer.getInteger took it"));
        withProperty(Configuration.JMX_PROP, "FALSE", () ->
            assertFalse(new Configuration().jmx(), "any case, as Boolean.parseBoolean took it"));
    }

    @Test
    void theRendezvousThresholdOfCollectivesHasAProperty() {
        withProperty(Configuration.CO_RENDEZVOUS_BYTES_PROP, "4096", () ->
            assertEquals(4096, new Configuration().collectives().rendezvousBytes()));
        assertEquals(CollectiveTuning.AUTO_RENDEZVOUS, new Configuration().collectives().rendezvousBytes());
        withProperty(Configuration.CO_RENDEZVOUS_BYTES_PROP, "0", () ->
            assertEquals(CollectiveTuning.AUTO_RENDEZVOUS, new Configuration().collectives().rendezvousBytes()));
        withProperty(Configuration.CO_RENDEZVOUS_BYTES_PROP, "big", () ->
            assertErrno(Errno.EINVAL, Configuration::new, "a malformed threshold"));
        withProperty(Configuration.CO_RENDEZVOUS_BYTES_PROP, "-1", () ->
            assertErrno(Errno.EINVAL, Configuration::new, "a negative threshold"));
        assertErrno(Errno.EINVAL, () -> CollectiveTuning.DEFAULT.withRendezvousBytes(-1), "the same through the API");
    }
}
