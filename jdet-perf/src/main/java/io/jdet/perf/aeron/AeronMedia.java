package io.jdet.perf.aeron;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.jdet.perf.PerfException;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The process's embedded Aeron media driver and its client, started by the first Aeron baseline step and kept
 * for the rest of the run (both ends of an embedded run share them; each process of a two-process run has its
 * own), closed by {@link #closeShared()} at the end of the run or by a shutdown hook. The driver runs
 * {@link ThreadingMode#SHARED} (conductor, sender and receiver on one thread, as {@code jdet-benchmarks}' Aeron
 * peer does), in a fresh temporary directory under {@code /dev/shm} (else {@code java.io.tmpdir}) that is deleted
 * when it closes. Its idle strategy follows the polling mode: busy spin in poll mode on 4 CPUs or more, yielding
 * on fewer (so that the two busy ends of an embedded run and the driver share 2 CPUs), Aeron's default back-off
 * (spin, yield, park up to 1 ms) in wait mode.
 */
public final class AeronMedia {
    /** The largest message the baseline sends: Aeron's limit on a message, whatever the term length. */
    public static final int MAX_MESSAGE = 16 << 20;
    /** The MTU of every UDP stream, as in {@code jdet-benchmarks}: 4 KiB messages go in one frame. */
    public static final int MTU = 8192;
    private static final int MIN_TERM = 64 << 10;
    private static final int SPIN_CPUS = 4;

    private static MediaDriver driver;
    private static Aeron client;
    private static Path dir;
    private static boolean driverWaits;
    private static boolean hooked;

    private AeronMedia() {
    }

    /**
     * The process's Aeron client, starting the driver on first use (or again if the polling mode changed).
     *
     * @param waitMode whether the run waits (back-off idling) rather than busy-polls
     * @return the connected client
     * @throws PerfException if the driver or the client cannot start
     */
    public static synchronized Aeron client(final boolean waitMode) {
        if (client != null && driverWaits == waitMode) {
            return client;
        }
        closeShared();
        if (!hooked) {
            Runtime.getRuntime().addShutdownHook(new Thread(AeronMedia::closeShared, "jdet-perf-aeron-cleanup"));
            hooked = true;
        }
        try {
            dir = Files.createTempDirectory(tempRoot(), "jdet-perf-aeron-");
            final String aeronDir = dir.resolve("driver").toString();
            driver = MediaDriver.launch(new MediaDriver.Context()
                .aeronDirectoryName(aeronDir)
                .threadingMode(ThreadingMode.SHARED)
                .sharedIdleStrategy(driverIdle(waitMode))
                .dirDeleteOnStart(true)
                .dirDeleteOnShutdown(true)
                .mtuLength(MTU)
                .ipcMtuLength(MTU));
            client = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir));
            driverWaits = waitMode;
            return client;
        } catch (final IOException | RuntimeException e) {
            closeShared();
            throw new PerfException("cannot start Aeron's embedded media driver: " + e, e);
        } catch (final IllegalAccessError e) {
            closeShared();
            throw new PerfException("Aeron's Agrona needs the JVM options --add-exports "
                + "java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED (./jdet perf "
                + "and java -jar jdet-perf.jar give them; other launchers must): " + e.getMessage(), e);
        }
    }

    /** Closes the client and the driver and deletes their directory; nothing if none is running. */
    public static synchronized void closeShared() {
        try {
            if (client != null) {
                client.close();
            }
        } finally {
            client = null;
            try {
                if (driver != null) {
                    driver.close();
                }
            } finally {
                driver = null;
                deleteDir();
            }
        }
    }

    /**
     * Ends an Aeron baseline step at the end that measures: on a host of fewer than {@value #SPIN_CPUS} CPUs the
     * shared driver closes (the next Aeron step starts another), since its thread, yielding between polls, stays
     * runnable and would take CPU time from every jdet step after it (on 2 CPUs, a third busy thread beside the two
     * ends: a run with Aeron baselines measured jdet's 64-byte rates a third lower after the first Aeron step). On a
     * larger host the driver stays for the rest of the run. In a two-process run the server's own driver stays.
     */
    public static void stepDone() {
        stepDone(Runtime.getRuntime().availableProcessors());
    }

    /**
     * {@link #stepDone()} for a host of {@code cpus} CPUs (for tests).
     *
     * @param cpus the host's CPUs
     */
    static synchronized void stepDone(final int cpus) {
        if (cpus < SPIN_CPUS) {
            closeShared();
        }
    }

    /**
     * Whether the shared driver is running (for tests).
     *
     * @return true between {@link #client} and {@link #closeShared}
     */
    public static synchronized boolean running() {
        return driver != null;
    }

    /**
     * The term length for messages of a size: a power of two of at least 8 messages (Aeron's limit on a message
     * is an eighth of a term), at least 64 KiB.
     *
     * @param size the message size, at most {@link #MAX_MESSAGE}
     * @return bytes
     * @throws IllegalArgumentException if the size is above {@link #MAX_MESSAGE}
     */
    public static int termLength(final int size) {
        if (size < 1 || size > MAX_MESSAGE) {
            throw new IllegalArgumentException("Aeron sends messages of 1 to " + MAX_MESSAGE + " bytes, not " + size);
        }
        return Math.max(MIN_TERM, Integer.highestOneBit(size * 8 - 1) << 1);
    }

    private static IdleStrategy driverIdle(final boolean waitMode) {
        if (waitMode) {
            return new BackoffIdleStrategy();
        }
        return Runtime.getRuntime().availableProcessors() >= SPIN_CPUS ? new BusySpinIdleStrategy()
            : new YieldingIdleStrategy();
    }

    private static Path tempRoot() {
        final Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    private static void deleteDir() {
        if (dir == null) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (final IOException e) {
            // Already gone (the driver deletes its own directory on shutdown).
        } finally {
            dir = null;
        }
    }
}
