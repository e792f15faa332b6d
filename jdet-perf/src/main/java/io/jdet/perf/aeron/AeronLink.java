package io.jdet.perf.aeron;

import io.aeron.Aeron;
import io.aeron.ChannelUri;
import io.aeron.ExclusivePublication;
import io.aeron.Subscription;
import io.jdet.perf.PerfException;
import io.jdet.perf.rig.Abort;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One end's two Aeron streams in a baseline step: a subscription from the peer and an exclusive publication to
 * it, over UDP (the subscription on an ephemeral port of a local address, the publication to the peer's) or IPC
 * (both ends in one JVM, sharing the media driver). Each step takes fresh stream ids, so that nothing a closed
 * step left lingering joins the next.
 *
 * @param publication  to the peer
 * @param subscription from the peer
 */
public record AeronLink(ExclusivePublication publication, Subscription subscription) implements AutoCloseable {
    private static final AtomicInteger NEXT_STREAM = new AtomicInteger(0x4A44_0000);
    private static final long PAUSE_NS = 100_000;

    /**
     * Two fresh stream ids for a step: the first for the client's subscription, the second for the server's.
     *
     * @return the first id
     */
    public static int nextStreams() {
        return NEXT_STREAM.getAndAdd(2);
    }

    /**
     * Subscribes: over IPC, or over UDP on an ephemeral port of a local address.
     *
     * @param aeron  the client
     * @param ipc    IPC rather than UDP
     * @param local  the address to bind (UDP)
     * @param stream the stream id
     * @return the subscription
     * @throws PerfException if Aeron refuses it
     */
    public static Subscription subscribe(final Aeron aeron, final boolean ipc, final InetAddress local,
                                         final int stream) {
        try {
            return aeron.addSubscription(ipc ? "aeron:ipc" : "aeron:udp?endpoint=" + host(local) + ":0", stream);
        } catch (final RuntimeException e) {
            throw new PerfException("Aeron cannot subscribe: " + e.getMessage(), e);
        }
    }

    /**
     * The UDP port a subscription bound, waiting for the driver to bind it.
     *
     * @param subscription a UDP subscription
     * @param timeoutNs    the longest wait
     * @return the port
     * @throws PerfException if it is not bound in time
     */
    public static int port(final Subscription subscription, final long timeoutNs) {
        final long deadline = System.nanoTime() + timeoutNs;
        String resolved;
        while ((resolved = subscription.tryResolveChannelEndpointPort()) == null) {
            if (System.nanoTime() - deadline > 0) {
                throw new PerfException("Aeron did not bind " + subscription.channel());
            }
            java.util.concurrent.locks.LockSupport.parkNanos(PAUSE_NS);
        }
        final String endpoint = ChannelUri.parse(resolved).get("endpoint");
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    /**
     * Opens the publication to the peer and waits until both streams are connected.
     *
     * @param aeron        the client
     * @param subscription this end's subscription
     * @param ipc          IPC rather than UDP
     * @param peer         the peer's address (UDP)
     * @param port         the peer's subscription port (UDP)
     * @param stream       the peer's subscription's stream id
     * @param size         the message size, which sets the term length
     * @param timeoutNs    the longest wait
     * @param abort        the run's abort flag
     * @return the link
     * @throws PerfException if Aeron refuses the publication or the streams do not connect in time
     */
    public static AeronLink open(final Aeron aeron, final Subscription subscription, final boolean ipc,
                                 final InetAddress peer, final int port, final int stream, final int size,
                                 final long timeoutNs, final Abort abort) {
        final String params = "term-length=" + AeronMedia.termLength(size) + "|mtu=" + AeronMedia.MTU;
        final ExclusivePublication publication;
        try {
            publication = aeron.addExclusivePublication(ipc ? "aeron:ipc?" + params
                : "aeron:udp?endpoint=" + host(peer) + ":" + port + "|" + params, stream);
        } catch (final RuntimeException e) {
            subscription.close();
            throw new PerfException("Aeron cannot publish: " + e.getMessage(), e);
        }
        final AeronLink link = new AeronLink(publication, subscription);
        final long deadline = System.nanoTime() + timeoutNs;
        while (!publication.isConnected() || !subscription.isConnected()) {
            if (System.nanoTime() - deadline > 0 || abort.raised()) {
                link.close();
                throw new PerfException(abort.raised() ? "aborted while connecting the Aeron streams"
                    : "the Aeron streams did not connect within " + timeoutNs / 1_000_000 + " ms");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(PAUSE_NS);
        }
        return link;
    }

    private static String host(final InetAddress address) {
        final String text = address.getHostAddress();
        return address instanceof Inet6Address ? "[" + text + "]" : text;
    }

    /** Closes the publication and the subscription. */
    @Override
    public void close() {
        try {
            publication.close();
        } finally {
            subscription.close();
        }
    }
}
