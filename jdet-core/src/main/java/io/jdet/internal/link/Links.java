package io.jdet.internal.link;

import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;

/**
 * Opens the link a NIC name asks for, wrapped in a {@link CaptureLink} when the configuration names a capture file
 * and in a {@link FaultyLink} when it injects faults.
 */
public final class Links {
    private Links() {
    }

    /**
     * Opens a link.
     *
     * @param name          {@code loop}, {@code loop:<fabric>}, {@code shm:<group>}, {@code eth:<interface>},
     *                      {@code udp:<address>[:<port>]} or an interface
     * @param configuration the device configuration
     * @return the link
     * @throws DetException ENODEV if the name names no usable link; EPERM if {@code eth:} lacks CAP_NET_RAW;
     *                      EADDRINUSE if a UDP address and port is taken, or an {@code eth:} interface and
     *                      EtherType has a NIC already;
     *                      EACCES if a UDP port is privileged; EINVAL if the capture file cannot be written
     */
    public static Link open(final String name, final Configuration configuration) {
        if (name == null || name.isEmpty()) {
            throw new DetException(Errno.ENODEV, "no NIC name");
        }
        final Link link;
        // Memory corrupts nothing: fabric frames carry a CRC only when fault injection corrupts them on purpose.
        final boolean crc = configuration.faults().active() && configuration.faults().corruptRate() > 0;
        if (name.equals("loop")) {
            link = new FabricLink("default", configuration.loopMtu(), configuration.loopRingFrames(), crc);
        } else if (name.startsWith("loop:") && name.length() > 5 && name.indexOf('/') < 0) {
            link = new FabricLink(name.substring(5), configuration.loopMtu(), configuration.loopRingFrames(), crc);
        } else if (name.startsWith("shm:")) {
            link = new ShmLink(name.substring(4), configuration);
        } else if (name.startsWith(EthAddress.PREFIX)) {
            link = new EthLink(name, configuration);
        } else {
            link = openNetwork(name, configuration);
        }
        return withFaults(withCapture(link, configuration), configuration);
    }

    /** The tap sits on the carrying link, under the faults, so it records what really travels. */
    private static Link withCapture(final Link link, final Configuration configuration) {
        if (configuration.capture() == null) {
            return link;
        }
        try {
            return new CaptureLink(link, configuration.capture());
        } catch (final RuntimeException e) {
            link.close();
            throw e;
        }
    }

    private static Link withFaults(final Link link, final Configuration configuration) {
        if (!configuration.faults().active()) {
            return link;
        }
        try {
            return new FaultyLink(link, configuration.faults());
        } catch (final RuntimeException | Error e) {
            link.close();
            throw e;
        }
    }

    private static Link openNetwork(final String name, final Configuration configuration) {
        return new UdpLink(name, java.util.concurrent.TimeUnit.MICROSECONDS.toNanos(configuration.udpSpinUs()));
    }
}
