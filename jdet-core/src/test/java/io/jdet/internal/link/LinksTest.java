package io.jdet.internal.link;

import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.FaultPlan;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which link a NIC name opens, and what wraps it: a capture tap right on the carrying link, fault injection on
 * top, a CRC on fabric frames only when faults corrupt them; a name that names nothing is ENODEV, and a link
 * whose wrapper cannot be made is closed again.
 */
class LinksTest {
    @TempDir
    Path dir;

    private static Errno errnoOf(final String name) {
        return assertThrows(DetException.class, () -> Links.open(name, new Configuration()).close()).errno();
    }

    @Test
    void namesThatNameNoLinkAreEnodev() {
        assertEquals(Errno.ENODEV, errnoOf(null));
        assertEquals(Errno.ENODEV, errnoOf(""));
        assertEquals(Errno.ENODEV, errnoOf("loop:"), "a fabric needs a name");
        assertEquals(Errno.ENODEV, errnoOf("loop:a/b"), "a fabric name has no slash");
        assertEquals(Errno.ENODEV, errnoOf("no-such-interface0"));
    }

    @Test
    void aFabricNameOpensAFabricLinkOfTheConfiguredSizeWithoutCrc() {
        final String fabric = Tests.uniqueFabric("links").substring("loop:".length());
        final Link link = Links.open("loop:" + fabric, new Configuration().loopMtu(2048));
        try {
            assertInstanceOf(FabricLink.class, link);
            assertTrue(link.address().startsWith("loop:" + fabric + "/"), link.address());
            assertEquals(2048, link.mtu());
            assertFalse(link.checksummed(1), "memory corrupts nothing");
        } finally {
            link.close();
        }
        assertFalse(Fabric.exists(fabric));
        final Link plain = Links.open("loop", new Configuration());
        try {
            assertTrue(plain.address().startsWith("loop:default/"), plain.address());
        } finally {
            plain.close();
        }
    }

    @Test
    void faultsWrapTheLinkAndOnlyCorruptionAddsACrc() {
        final Link lossy = Links.open(Tests.uniqueFabric("links"),
            new Configuration().faults(new FaultPlan(0.5, 0, 0, 0, 1)));
        try {
            assertInstanceOf(FaultyLink.class, lossy);
            assertFalse(lossy.checksummed(1));
        } finally {
            lossy.close();
        }
        final Link corrupting = Links.open(Tests.uniqueFabric("links"),
            new Configuration().faults(new FaultPlan(0, 0, 0, 0.5, 1)));
        try {
            assertInstanceOf(FaultyLink.class, corrupting);
            assertTrue(corrupting.checksummed(1), "the receiver must see corrupted frames fail their CRC");
        } finally {
            corrupting.close();
        }
    }

    @Test
    void theTapSitsOnTheCarryingLinkUnderTheFaults() {
        final String file = dir.resolve("links.pcapng").toString();
        final Link tapped = Links.open(Tests.uniqueFabric("links"), new Configuration().capture(file));
        try {
            assertInstanceOf(CaptureLink.class, tapped);
            assertInstanceOf(FabricLink.class, ((CaptureLink) tapped).inner);
        } finally {
            tapped.close();
        }
        final Link both = Links.open(Tests.uniqueFabric("links"),
            new Configuration().capture(file).faults(new FaultPlan(0.5, 0, 0, 0, 1)));
        try {
            assertInstanceOf(FaultyLink.class, both);
            assertInstanceOf(CaptureLink.class, ((FaultyLink) both).inner);
        } finally {
            both.close();
        }
    }

    @Test
    void aLinkWhoseCaptureFileCannotBeWrittenIsClosedAgain() {
        final String fabric = Tests.uniqueFabric("links").substring("loop:".length());
        final DetException e = assertThrows(DetException.class, () -> Links.open("loop:" + fabric,
            new Configuration().capture(dir.resolve("missing").resolve("x.pcapng").toString())));
        assertEquals(Errno.EINVAL, e.errno());
        assertFalse(Fabric.exists(fabric), "the fabric endpoint opened under the tap was left attached");
    }

    @Test
    void aUdpNameOpensAUdpLink() {
        final Link udp = Links.open("udp:127.0.0.1:0", new Configuration());
        try {
            assertInstanceOf(UdpLink.class, udp);
            assertTrue(udp.address().startsWith("udp:127.0.0.1:"), udp.address());
        } finally {
            udp.close();
        }
    }
}
