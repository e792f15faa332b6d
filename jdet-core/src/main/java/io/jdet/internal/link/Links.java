package io.jdet.internal.link;

import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;

/** Opens the link a NIC name asks for, wrapped in a {@link FaultyLink} when the configuration injects faults. */
public final class Links {
    private Links() {
    }

    /**
     * Opens a link.
     *
     * @param name          {@code loop}, {@code loop:<fabric>}, {@code udp:<address>[:<port>]} or an interface
     * @param configuration the device configuration
     * @return the link
     * @throws DetException ENODEV if the name names no usable link; EADDRINUSE if a UDP address and port is taken;
     *                      EACCES if a UDP port is privileged
     */
    public static Link open(final String name, final Configuration configuration) {
        if (name == null || name.isEmpty()) {
            throw new DetException(Errno.ENODEV, "no NIC name");
        }
        final Link link;
        if (name.equals("loop")) {
            link = new FabricLink("default", configuration.loopMtu(), configuration.loopRingFrames());
        } else if (name.startsWith("loop:") && name.length() > 5 && name.indexOf('/') < 0) {
            link = new FabricLink(name.substring(5), configuration.loopMtu(), configuration.loopRingFrames());
        } else {
            link = openNetwork(name, configuration);
        }
        return configuration.faults().active() ? new FaultyLink(link, configuration.faults()) : link;
    }

    private static Link openNetwork(final String name, final Configuration configuration) {
        return new UdpLink(name);
    }
}
