package io.jdet.internal.link;

import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * A tap: wraps a link and records every frame it sends and every good frame it receives in a pcapng file
 * ({@link PcapngWriter}), so that traffic no sniffer can see (the in-process fabric) and UDP traffic captured
 * without privileges can be read with Wireshark and {@code tools/wireshark/jdet.lua}. It sits directly on the
 * carrying link, under any {@link FaultyLink}, so it records what really travels: no lost frames, duplicates
 * twice, corrupted frames with their bad CRC. Frames the link drops on receipt (bad CRC, truncated) are not seen.
 *
 * <p>UDP frames get their real addresses and ports; a fabric endpoint {@code loop:<fabric>/<n>} gets the
 * synthetic address {@code 127.74.<n / 256>.<n % 256>} and port {@link PcapngWriter#FABRIC_PORT} (19012). Only
 * present when {@code Configuration.capture} names a file: without it, links are not wrapped and pay nothing.
 * Same threading as the wrapped link.
 */
public final class CaptureLink extends ForwardingLink implements FrameHandler {
    private static final FrameGather EMPTY = new FrameGather(0);

    private final PcapngWriter writer;
    private final int iface;
    private final boolean udp;
    private final int localIp;
    private final int localPort;
    /** The engine's handler during a {@link #receive} call. */
    private FrameHandler downstream;
    private long recorded;

    /**
     * Wraps a link.
     *
     * @param inner the link that carries the frames
     * @param file  the capture file, shared with every other link that names it
     * @throws io.jdet.DetException EINVAL if the file cannot be written
     */
    public CaptureLink(final Link inner, final String file) {
        super(inner);
        this.writer = PcapngWriter.open(file);
        this.iface = writer.addInterface(inner.address());
        this.udp = inner.address().startsWith("udp:");
        final long self = udp ? UdpAddress.resolvePeer(inner.address()) : fabricId(inner.address());
        this.localIp = ip(self);
        this.localPort = port(self);
    }

    private static long fabricId(final String address) {
        try {
            return Long.parseLong(address.substring(address.lastIndexOf('/') + 1));
        } catch (final NumberFormatException e) {
            return 0;
        }
    }

    private int ip(final long peer) {
        return udp ? UdpAddress.handleIp(peer) : PcapngWriter.FABRIC_NET | (int) (peer & 0xFFFF);
    }

    private int port(final long peer) {
        return udp ? UdpAddress.handlePort(peer) : PcapngWriter.FABRIC_PORT;
    }






    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        final boolean sent = inner.send(peer, header, headerLength, payload);
        // A link that carries no CRC to this peer (memory, loopback) sends the field as 0: the copy gets one, so it
        // dissects clean. A frame the engine sealed anyway (fault injection above corrupts) keeps its CRC, bad or not.
        if (sent && writer.write(iface, true, localIp, localPort, ip(peer), port(peer), header, headerLength,
            payload, !inner.checksummed(peer) && FrameCrc.leftOut(header, headerLength))) {
            recorded++;
        }
        return sent;
    }

    @Override
    public int receive(final FrameHandler handler, final int max) {
        downstream = handler;
        try {
            return inner.receive(this, max);
        } finally {
            downstream = null;
        }
    }

    @Override
    public void onFrame(final MemorySegment frame, final int length, final long peer) {
        if (writer.write(iface, false, ip(peer), port(peer), localIp, localPort, frame, length, EMPTY, true)) {
            recorded++;
        }
        downstream.onFrame(frame, length, peer);
    }



    @Override
    public void addCounters(final Map<String, Long> counters) {
        inner.addCounters(counters);
        counters.merge("capture.frames", recorded, Long::sum);
        counters.merge("capture.errors", writer.errors(), Long::sum);
    }

    @Override
    public void close() {
        try {
            inner.close();
        } finally {
            writer.release();
        }
    }
}
