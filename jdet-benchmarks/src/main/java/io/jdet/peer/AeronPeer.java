package io.jdet.peer;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Aeron, set up the way a Java user on this machine would for the same job: an embedded media driver with
 * {@link ThreadingMode#SHARED} (conductor, sender and receiver on one thread: there are only 2 cores), its directory
 * under {@code /dev/shm}, an 8 KiB MTU so that 4 KiB messages are not fragmented, 4 MiB terms, and two streams
 * ({@code ping} one way, {@code pong} the other) over UDP on 127.0.0.1 (ephemeral ports resolved through the
 * subscriptions) or over shared memory ({@code aeron:ipc}). Publications are exclusive (one thread offers), and the
 * fragment handlers are built once: the data path allocates nothing.
 */
public final class AeronPeer implements AutoCloseable {
    /** The term length of every stream. */
    static final int TERM_LENGTH = 4 << 20;
    /** The MTU of every stream. */
    static final int MTU = 8192;
    private static final int PING_STREAM = 1001;
    private static final int PONG_STREAM = 1002;
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    private final MediaDriver driver;
    private final Aeron aeron;
    final ExclusivePublication ping;
    final Subscription pingIn;
    final ExclusivePublication pong;
    final Subscription pongIn;
    final UnsafeBuffer buffer;

    /**
     * Starts a driver, connects a client and opens both streams, waiting until they are connected.
     *
     * @param transport  {@code udp} (127.0.0.1) or {@code ipc} (shared memory)
     * @param driverIdle {@code spin} (busy spin: the lowest latency, one core) or {@code backoff} (Aeron's default:
     *                   spin, yield, then park up to 1 ms)
     * @param maxMessage the largest message to be offered
     */
    public AeronPeer(final String transport, final String driverIdle, final int maxMessage) {
        final IdleStrategy idle = switch (driverIdle) {
            case "spin" -> new BusySpinIdleStrategy();
            case "backoff" -> new BackoffIdleStrategy();
            default -> throw new IllegalArgumentException("driverIdle must be spin or backoff, not " + driverIdle);
        };
        final String dir = "/dev/shm/jdet-bench-aeron-" + ProcessHandle.current().pid();
        driver = MediaDriver.launch(new MediaDriver.Context()
            .aeronDirectoryName(dir)
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(idle)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .publicationTermBufferLength(TERM_LENGTH)
            .ipcTermBufferLength(TERM_LENGTH)
            .mtuLength(MTU)
            .ipcMtuLength(MTU));
        Aeron client = null;
        try {
            client = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir));
            final String channel = switch (transport) {
                case "udp" -> "aeron:udp?endpoint=127.0.0.1:0";
                case "ipc" -> "aeron:ipc";
                default -> throw new IllegalArgumentException("transport must be udp or ipc, not " + transport);
            };
            pingIn = client.addSubscription(channel, PING_STREAM);
            pongIn = client.addSubscription(channel, PONG_STREAM);
            ping = client.addExclusivePublication(publicationChannel(pingIn, transport), PING_STREAM);
            pong = client.addExclusivePublication(publicationChannel(pongIn, transport), PONG_STREAM);
            awaitConnected(ping, pingIn);
            awaitConnected(pong, pongIn);
            if (maxMessage > ping.maxMessageLength()) {
                throw new IllegalArgumentException("message of " + maxMessage + " bytes; Aeron takes at most "
                    + ping.maxMessageLength());
            }
            buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(maxMessage, 64)));
        } catch (final RuntimeException e) {
            if (client != null) {
                client.close();
            }
            driver.close();
            throw e;
        }
        aeron = client;
    }

    private static String publicationChannel(final Subscription subscription, final String transport) {
        if (!transport.equals("udp")) {
            return subscription.channel();
        }
        final long deadline = System.nanoTime() + CONNECT_TIMEOUT_NS;
        String resolved;
        while ((resolved = subscription.tryResolveChannelEndpointPort()) == null) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("Aeron did not bind " + subscription.channel());
            }
            Thread.yield();
        }
        return resolved + "|mtu=" + MTU + "|term-length=" + TERM_LENGTH;
    }

    private static void awaitConnected(final Publication publication, final Subscription subscription) {
        final long deadline = System.nanoTime() + CONNECT_TIMEOUT_NS;
        while (!publication.isConnected() || !subscription.isConnected()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("Aeron stream " + publication.streamId() + " did not connect");
            }
            Thread.yield();
        }
    }

    /**
     * Wraps a handler so that messages longer than one MTU would be reassembled (4 KiB and less never are).
     *
     * @param handler the handler of whole messages
     * @return the handler to poll with
     */
    static FragmentHandler assembled(final FragmentHandler handler) {
        return new FragmentAssembler(handler);
    }

    /**
     * Offers a message, retrying while the publication is back-pressured.
     *
     * @param publication where to offer
     * @param source      the bytes
     * @param offset      the first byte
     * @param length      the length
     * @throws IllegalStateException if the publication is closed, not connected or full for good
     */
    static void offer(final Publication publication, final org.agrona.DirectBuffer source, final int offset,
                      final int length) {
        long result;
        while ((result = publication.offer(source, offset, length)) < 0) {
            checkOffer(result);
        }
    }

    /**
     * Lets a failed offer be retried if it was back pressure or an administrative action, and fails otherwise.
     *
     * @param result the negative result of an offer
     * @throws IllegalStateException if the publication is closed, not connected or at its maximum position
     */
    static void checkOffer(final long result) {
        if (result == Publication.CLOSED || result == Publication.NOT_CONNECTED
            || result == Publication.MAX_POSITION_EXCEEDED) {
            throw new IllegalStateException("Aeron offer failed: " + Publication.errorString(result));
        }
    }

    /** Closes the client, then the driver (which deletes its directory). */
    @Override
    public void close() {
        aeron.close();
        driver.close();
    }
}
