package io.jdet;

/**
 * Every tunable of a device, in one place ({@code det_attr} and DET's module parameters). Each has a system
 * property that sets its default, so a tool can be tuned without code. Fluent, validated by {@link #conclude()}
 * when a device opens with it; a device keeps its own copy.
 */
public final class Configuration implements Cloneable {
    /** Property of {@link #windowFrames()}. */
    public static final String WINDOW_FRAMES_PROP = "jdet.window.frames";
    /**
     * Default most unacknowledged frames per stream: 64. DET used 40 at 1.5 KB frames; loopback frames are up to
     * 64 KiB, and a larger window only costs retransmit bookkeeping.
     */
    public static final int WINDOW_FRAMES_DEFAULT = 64;
    /** Property of {@link #timerPeriodUs()}. */
    public static final String TIMER_PERIOD_US_PROP = "jdet.timer.period.us";
    /** Default background tick: 1000 us. Timers are checked on every poll too, so this only bounds idle work. */
    public static final int TIMER_PERIOD_US_DEFAULT = 1000;
    /** Property of {@link #ackTimeoutMs()}. */
    public static final String ACK_TIMEOUT_MS_PROP = "jdet.ack.timeout.ms";
    /** Default give-up time without acknowledgement progress: 5000 ms (DET: 60 s, which hides dead peers). */
    public static final long ACK_TIMEOUT_MS_DEFAULT = 5000;
    /** Property of {@link #minRtoUs()}. */
    public static final String MIN_RTO_US_PROP = "jdet.rto.min.us";
    /** Default smallest retransmission timeout: 2000 us, well above a loaded loopback round trip. */
    public static final int MIN_RTO_US_DEFAULT = 2000;
    /** Property of {@link #maxRtoUs()}. */
    public static final String MAX_RTO_US_PROP = "jdet.rto.max.us";
    /** Default largest retransmission timeout after back-off: 250000 us. */
    public static final int MAX_RTO_US_DEFAULT = 250_000;
    /** Property of {@link #ackDelayUs()}. */
    public static final String ACK_DELAY_US_PROP = "jdet.ack.delay.us";
    /**
     * Default delayed-ack time: 20 us. An acknowledgement waits this long for outgoing data to ride on, so a
     * ping-pong sends no separate ack frames (DET had no delayed ack, which stalled suppressed bursts).
     */
    public static final int ACK_DELAY_US_DEFAULT = 20;
    /** Property of {@link #rnrRetryCount()}. */
    public static final String RNR_RETRY_COUNT_PROP = "jdet.rnr.retry.count";
    /** Default receiver-not-ready retries before a send fails with RNR_RETRY_EXCEEDED: 7, as ibverbs allows. */
    public static final int RNR_RETRY_COUNT_DEFAULT = 7;
    /** Property of {@link #rnrDelayUs()}. */
    public static final String RNR_DELAY_US_PROP = "jdet.rnr.delay.us";
    /** Default wait before retrying a message the receiver was not ready for: 1000 us. */
    public static final int RNR_DELAY_US_DEFAULT = 1000;
    /** Property of {@link #maxRegisteredBytes()}. */
    public static final String MAX_REGISTERED_BYTES_PROP = "jdet.max.registered.bytes";
    /** Default registration quota: unlimited (DET: 50% of RAM, since it pinned pages; jdet pins nothing). */
    public static final long MAX_REGISTERED_BYTES_DEFAULT = Long.MAX_VALUE;
    /** Property of {@link #loopMtu()}. */
    public static final String LOOP_MTU_PROP = "jdet.loop.mtu";
    /** Default frame size of the in-process fabric: 65000 bytes, close to UDP loopback's. */
    public static final int LOOP_MTU_DEFAULT = 65_000;
    /** Property of {@link #loopRingFrames()}. */
    public static final String LOOP_RING_FRAMES_PROP = "jdet.loop.ring.frames";
    /** Default inbound ring of an in-process NIC: 256 frames. A full ring drops, and the protocol recovers. */
    public static final int LOOP_RING_FRAMES_DEFAULT = 256;
    /**
     * Largest inbound ring of an in-process NIC: 32768 frames, so that a ring of the largest frames (32768 times
     * 65507 bytes, just under 2 GiB) still fits the one buffer it lives in.
     */
    public static final int LOOP_RING_FRAMES_MAX = 32_768;
    /** Property of {@link #shmDirectory()}. */
    public static final String SHM_DIRECTORY_PROP = "jdet.shm.dir";
    /**
     * Default directory of the shared-memory link's ring files: {@code /dev/shm}, a tmpfs, so the rings are memory
     * that the kernel never writes back to a disk (a disk-backed file would add write-back stalls).
     */
    public static final String SHM_DIRECTORY_DEFAULT = "/dev/shm";
    /** Property of {@link #shmMtu()}. */
    public static final String SHM_MTU_PROP = "jdet.shm.mtu";
    /**
     * Default frame size of the shared-memory link: 65000 bytes, as the in-process fabric. Large frames mean few
     * frames per message; a slot costs its size in the ring file, but tmpfs only backs the pages written.
     * Every NIC of a group uses the size of the first one still open.
     */
    public static final int SHM_MTU_DEFAULT = 65_000;
    /** Property of {@link #shmRingFrames()}. */
    public static final String SHM_RING_FRAMES_PROP = "jdet.shm.ring.frames";
    /** Default inbound ring of a shared-memory NIC: 256 frames (16 MiB at the default frame size). */
    public static final int SHM_RING_FRAMES_DEFAULT = 256;
    /** Property of {@link #shmSpinUs()}. */
    public static final String SHM_SPIN_US_PROP = "jdet.shm.spin.us";
    /**
     * Default spin of an idle shared-memory NIC's progress thread before it sleeps on its futex: 20 us. Longer
     * spins catch more frames without a wake-up (about 30 us on a VM) but burn that much of a core per idle tick.
     */
    public static final int SHM_SPIN_US_DEFAULT = 20;
    /** Property of {@link #udpSpinUs()}. */
    public static final String UDP_SPIN_US_PROP = "jdet.udp.spin.us";
    /**
     * Default busy-poll of a thread blocked in {@link EventQueue#waitOn} on a UDP NIC before it sleeps in
     * {@code ppoll}: 20 us. A reply that arrives meanwhile costs no wake-up (30 us or more on a VM whose idle
     * vCPU must be woken), at the price of up to that much CPU per wait.
     */
    public static final int UDP_SPIN_US_DEFAULT = 20;
    /**
     * Property of the default {@link CollectiveTuning#rendezvousBytes()} of {@link #collectives()} (default
     * {@link CollectiveTuning#AUTO_RENDEZVOUS}, 0: by the link).
     */
    public static final String CO_RENDEZVOUS_BYTES_PROP = "jdet.co.rendezvous.bytes";
    /** Property of {@link #ethEtherType()}. */
    public static final String ETH_ETHER_TYPE_PROP = "jdet.eth.ethertype";
    /**
     * Default EtherType of the raw Ethernet link: 0x88B5, IEEE 802 "local experimental ethertype 1", which no
     * registered protocol uses. DET's own was 0x8086.
     */
    public static final int ETH_ETHER_TYPE_DEFAULT = 0x88B5;
    /** Property of {@link #ethSpinUs()}. */
    public static final String ETH_SPIN_US_PROP = "jdet.eth.spin.us";
    /**
     * Default busy-poll of an idle raw Ethernet NIC's progress thread before it blocks in {@code ppoll}: 50 us.
     * A frame that arrives meanwhile is taken without a wake-up (tens of microseconds on a VM).
     */
    public static final int ETH_SPIN_US_DEFAULT = 50;
    /** Property of {@link #capture()}. */
    public static final String CAPTURE_PROP = "jdet.capture";
    /** Property of {@link #jmx()}. */
    public static final String JMX_PROP = "jdet.jmx";
    /**
     * Default of {@link #jmx()}: true. Registering costs a few microseconds per NIC, but the first NIC of a process
     * starts the platform MBean server (some tens of milliseconds once); turn it off where that matters.
     */
    public static final boolean JMX_DEFAULT = true;
    /** Property of {@link #unknownRepliesPerSecond()}. */
    public static final String UNKNOWN_REPLIES_PROP = "jdet.unknown.replies.per.second";
    /**
     * Default replies per second a NIC sends to frames for queue pairs it does not have (a DISCONNECT with
     * INVALID_QP each, never larger than the frame it answers): 100, in bursts of up to a tenth of that (at least
     * 1). Beyond it such frames are dropped without a reply, so a spoofed flood reflects a trickle, not a flood.
     */
    public static final int UNKNOWN_REPLIES_DEFAULT = 100;
    /** Property of {@link #challengeAcksPerSecond()}. */
    public static final String CHALLENGE_ACKS_PROP = "jdet.challenge.acks.per.second";
    /**
     * Default challenge ACKs per second per NIC (RFC 5961): 100. A DISCONNECT or NAK from the connected peer's
     * address whose sequence number is close to, but not exactly, the expected one is not obeyed; the true peer
     * is sent an ACK of the true state instead, so that a peer that really meant it repeats it exactly.
     */
    public static final int CHALLENGE_ACKS_DEFAULT = 100;
    /** Property of {@link #cmPendingPerSource()}. */
    public static final String CM_PENDING_PER_SOURCE_PROP = "jdet.cm.pending.per.source";
    /**
     * Default connection requests one source address (whatever its port) may have waiting at a listener or
     * remembered at once: 16. Only requests whose address was validated (the cookie round trip) count; more
     * from that address are refused, so one host cannot fill the listener's backlog or the NIC's memory.
     */
    public static final int CM_PENDING_PER_SOURCE_DEFAULT = 16;

    private int windowFrames = intProperty(WINDOW_FRAMES_PROP, WINDOW_FRAMES_DEFAULT);
    private int timerPeriodUs = intProperty(TIMER_PERIOD_US_PROP, TIMER_PERIOD_US_DEFAULT);
    private long ackTimeoutMs = longProperty(ACK_TIMEOUT_MS_PROP, ACK_TIMEOUT_MS_DEFAULT);
    private int minRtoUs = intProperty(MIN_RTO_US_PROP, MIN_RTO_US_DEFAULT);
    private int maxRtoUs = intProperty(MAX_RTO_US_PROP, MAX_RTO_US_DEFAULT);
    private int ackDelayUs = intProperty(ACK_DELAY_US_PROP, ACK_DELAY_US_DEFAULT);
    private int rnrRetryCount = intProperty(RNR_RETRY_COUNT_PROP, RNR_RETRY_COUNT_DEFAULT);
    private int rnrDelayUs = intProperty(RNR_DELAY_US_PROP, RNR_DELAY_US_DEFAULT);
    private long maxRegisteredBytes = longProperty(MAX_REGISTERED_BYTES_PROP, MAX_REGISTERED_BYTES_DEFAULT);
    private int loopMtu = intProperty(LOOP_MTU_PROP, LOOP_MTU_DEFAULT);
    private int loopRingFrames = intProperty(LOOP_RING_FRAMES_PROP, LOOP_RING_FRAMES_DEFAULT);
    private String shmDirectory = System.getProperty(SHM_DIRECTORY_PROP, SHM_DIRECTORY_DEFAULT);
    private int shmMtu = intProperty(SHM_MTU_PROP, SHM_MTU_DEFAULT);
    private int shmRingFrames = intProperty(SHM_RING_FRAMES_PROP, SHM_RING_FRAMES_DEFAULT);
    private int shmSpinUs = intProperty(SHM_SPIN_US_PROP, SHM_SPIN_US_DEFAULT);
    private int ethEtherType = intProperty(ETH_ETHER_TYPE_PROP, ETH_ETHER_TYPE_DEFAULT);
    private int ethSpinUs = intProperty(ETH_SPIN_US_PROP, ETH_SPIN_US_DEFAULT);
    private int udpSpinUs = intProperty(UDP_SPIN_US_PROP, UDP_SPIN_US_DEFAULT);
    private FaultPlan faults = FaultPlan.NONE;
    private CollectiveTuning collectives = rendezvousProperty();
    private String capture = emptyToNull(System.getProperty(CAPTURE_PROP));
    private boolean jmx = booleanProperty(JMX_PROP, JMX_DEFAULT);
    private int unknownRepliesPerSecond = intProperty(UNKNOWN_REPLIES_PROP, UNKNOWN_REPLIES_DEFAULT);
    private int challengeAcksPerSecond = intProperty(CHALLENGE_ACKS_PROP, CHALLENGE_ACKS_DEFAULT);
    private int cmPendingPerSource = intProperty(CM_PENDING_PER_SOURCE_PROP, CM_PENDING_PER_SOURCE_DEFAULT);
    private Security security = Security.NONE;

    /**
     * Creates a configuration from the defaults and system properties.
     *
     * @throws DetException EINVAL if a property is set to something that is not a number (decimal, {@code 0x}
     *                      hexadecimal or {@code 0} octal, as {@link Integer#decode}), or a boolean property to
     *                      other than {@code true} or {@code false}; its range is checked by {@link #conclude()}
     */
    public Configuration() {
    }

    private static int intProperty(final String name, final int defaultValue) {
        final long value = longProperty(name, defaultValue);
        if ((int) value != value) {
            throw new DetException(Errno.EINVAL, "system property " + name + "=" + value + " is not an int");
        }
        return (int) value;
    }

    private static long longProperty(final String name, final long defaultValue) {
        final String value = System.getProperty(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            return Long.decode(value.strip());
        } catch (final NumberFormatException e) {
            throw new DetException(Errno.EINVAL, "system property " + name + "=" + value + " is not a number");
        }
    }

    private static CollectiveTuning rendezvousProperty() {
        final long bytes = longProperty(CO_RENDEZVOUS_BYTES_PROP, CollectiveTuning.AUTO_RENDEZVOUS);
        if (bytes < 0) {
            throw new DetException(Errno.EINVAL, "system property " + CO_RENDEZVOUS_BYTES_PROP + "=" + bytes
                + " is negative");
        }
        return bytes == CollectiveTuning.AUTO_RENDEZVOUS ? CollectiveTuning.DEFAULT
            : CollectiveTuning.DEFAULT.withRendezvousBytes(bytes);
    }

    private static boolean booleanProperty(final String name, final boolean defaultValue) {
        final String value = System.getProperty(name);
        if (value == null) {
            return defaultValue;
        }
        if (!"true".equalsIgnoreCase(value.strip()) && !"false".equalsIgnoreCase(value.strip())) {
            throw new DetException(Errno.EINVAL, "system property " + name + "=" + value + " is not true or false");
        }
        return Boolean.parseBoolean(value.strip());
    }

    /**
     * Checks every value.
     *
     * @return this
     * @throws DetException EINVAL if a value is out of range
     */
    public Configuration conclude() {
        check(windowFrames >= 4 && windowFrames <= 1024, "windowFrames must be in [4, 1024]");
        check(timerPeriodUs >= 50 && timerPeriodUs <= 1_000_000, "timerPeriodUs must be in [50, 1000000]");
        check(ackTimeoutMs >= 10, "ackTimeoutMs must be at least 10");
        check(minRtoUs >= 10 && maxRtoUs >= minRtoUs, "need 10 <= minRtoUs <= maxRtoUs");
        check(ackDelayUs >= 0, "ackDelayUs must not be negative");
        check(rnrRetryCount >= 0 && rnrDelayUs >= 0, "rnr settings must not be negative");
        check(maxRegisteredBytes > 0, "maxRegisteredBytes must be positive");
        check(loopMtu >= 512 && loopMtu <= 65_507, "loopMtu must be in [512, 65507]");
        check(loopRingFrames >= 8 && loopRingFrames <= LOOP_RING_FRAMES_MAX && Integer.bitCount(loopRingFrames) == 1,
            "loopRingFrames must be a power of 2 in [8, " + LOOP_RING_FRAMES_MAX + "]");
        check(shmDirectory != null && !shmDirectory.isEmpty(), "shmDirectory must be a directory");
        check(unknownRepliesPerSecond >= 0 && challengeAcksPerSecond >= 0,
            "reply rates must not be negative");
        check(cmPendingPerSource >= 1 && cmPendingPerSource <= 4096, "cmPendingPerSource must be in [1, 4096]");
        check(shmMtu >= 512 && shmMtu <= 65_535, "shmMtu must be in [512, 65535]");
        check(shmRingFrames >= 8 && shmRingFrames <= 65_536 && Integer.bitCount(shmRingFrames) == 1,
            "shmRingFrames: a power of 2 in [8, 65536]");
        check(shmSpinUs >= 0 && shmSpinUs <= 1_000_000, "shmSpinUs must be in [0, 1000000]");
        // 0x8100 and 0x88A8 (802.1Q, 802.1ad): the kernel strips such a "tag" before a packet socket sees the frame
        check(ethEtherType >= 0x0600 && ethEtherType <= 0xFFFF && ethEtherType != 0x0800 && ethEtherType != 0x0806
            && ethEtherType != 0x86DD && ethEtherType != 0x8100 && ethEtherType != 0x88A8, "ethEtherType must be in "
            + "[0x0600, 0xFFFF] and not IPv4, ARP, IPv6 or VLAN (0x8100, 0x88A8)");
        check(ethSpinUs >= 0 && ethSpinUs <= 1_000_000, "ethSpinUs must be in [0, 1000000]");
        check(udpSpinUs >= 0 && udpSpinUs <= 1_000_000, "udpSpinUs must be in [0, 1000000]");
        check(faults != null, "faults must not be null");
        check(collectives != null, "collectives must not be null");
        check(security != null, "security must not be null");
        check(capture == null || !capture.isBlank(), "capture must name a file, or be null");
        return this;
    }

    private static void check(final boolean ok, final String message) {
        if (!ok) {
            throw new DetException(Errno.EINVAL, message);
        }
    }

    @Override
    public Configuration clone() {
        try {
            return (Configuration) super.clone();
        } catch (final CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The most unacknowledged frames per stream; on a request stream four times as many while every frame beyond these
     * is a send or write of at most 2 KiB, since the window bounds the bytes in flight.
     *
     * @return the most unacknowledged frames per stream
     */
    public int windowFrames() {
        return windowFrames;
    }

    /**
     * Sets the most unacknowledged frames per stream; checked when a device opens with this configuration.
     *
     * @param value the most unacknowledged frames per stream
     * @return this
     */
    public Configuration windowFrames(final int value) {
        windowFrames = value;
        return this;
    }

    /**
     * The background timer period in microseconds.
     *
     * @return the background timer period in microseconds
     */
    public int timerPeriodUs() {
        return timerPeriodUs;
    }

    /**
     * Sets the background timer period in microseconds; checked when a device opens with this configuration.
     *
     * @param value the background timer period in microseconds
     * @return this
     */
    public Configuration timerPeriodUs(final int value) {
        timerPeriodUs = value;
        return this;
    }

    /**
     * The time without acknowledgement progress after which a sender gives up, in milliseconds.
     *
     * @return the time without acknowledgement progress after which a sender gives up, in milliseconds
     */
    public long ackTimeoutMs() {
        return ackTimeoutMs;
    }

    /**
     * Sets the give-up time in milliseconds; checked when a device opens with this configuration.
     *
     * @param value the give-up time in milliseconds
     * @return this
     */
    public Configuration ackTimeoutMs(final long value) {
        ackTimeoutMs = value;
        return this;
    }

    /**
     * The smallest retransmission timeout in microseconds.
     *
     * @return the smallest retransmission timeout in microseconds
     */
    public int minRtoUs() {
        return minRtoUs;
    }

    /**
     * Sets the smallest retransmission timeout in microseconds; checked when a device opens with this configuration.
     *
     * @param value the smallest retransmission timeout in microseconds
     * @return this
     */
    public Configuration minRtoUs(final int value) {
        minRtoUs = value;
        return this;
    }

    /**
     * The largest retransmission timeout in microseconds.
     *
     * @return the largest retransmission timeout in microseconds
     */
    public int maxRtoUs() {
        return maxRtoUs;
    }

    /**
     * Sets the largest retransmission timeout in microseconds; checked when a device opens with this configuration.
     *
     * @param value the largest retransmission timeout in microseconds
     * @return this
     */
    public Configuration maxRtoUs(final int value) {
        maxRtoUs = value;
        return this;
    }

    /**
     * How long an acknowledgement may wait for data to ride on, in microseconds.
     *
     * @return how long an acknowledgement may wait for data to ride on, in microseconds
     */
    public int ackDelayUs() {
        return ackDelayUs;
    }

    /**
     * Sets the delayed-ack time in microseconds; checked when a device opens with this configuration.
     *
     * @param value the delayed-ack time in microseconds
     * @return this
     */
    public Configuration ackDelayUs(final int value) {
        ackDelayUs = value;
        return this;
    }

    /**
     * Receiver-not-ready retries before failing.
     *
     * @return receiver-not-ready retries before failing
     */
    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /**
     * Sets receiver-not-ready retries before failing; checked when a device opens with this configuration.
     *
     * @param value receiver-not-ready retries before failing
     * @return this
     */
    public Configuration rnrRetryCount(final int value) {
        rnrRetryCount = value;
        return this;
    }

    /**
     * The wait before a receiver-not-ready retry, in microseconds.
     *
     * @return the wait before a receiver-not-ready retry, in microseconds
     */
    public int rnrDelayUs() {
        return rnrDelayUs;
    }

    /**
     * Sets the wait before a receiver-not-ready retry, in microseconds;
     * checked when a device opens with this configuration.
     *
     * @param value the wait before a receiver-not-ready retry, in microseconds
     * @return this
     */
    public Configuration rnrDelayUs(final int value) {
        rnrDelayUs = value;
        return this;
    }

    /**
     * The registration quota in bytes.
     *
     * @return the registration quota in bytes
     */
    public long maxRegisteredBytes() {
        return maxRegisteredBytes;
    }

    /**
     * Sets the registration quota in bytes; checked when a device opens with this configuration.
     *
     * @param value the registration quota in bytes
     * @return this
     */
    public Configuration maxRegisteredBytes(final long value) {
        maxRegisteredBytes = value;
        return this;
    }

    /**
     * The frame size asked for on an in-process fabric. A fabric has one frame size, fixed by the first NIC that
     * opens it (from its device's configuration) and kept while any NIC is open on it; a NIC opened on an existing
     * fabric adopts the fabric's frame size whatever its own configuration says, as a NIC on a network takes the
     * network's MTU, and reports it in {@link NicAttributes#mtu()}. When the last NIC on a fabric closes, the next
     * one to open it fixes the size again.
     *
     * @return the frame size of the in-process fabric, in bytes
     */
    public int loopMtu() {
        return loopMtu;
    }

    /**
     * Sets the frame size a new in-process fabric gets; see {@link #loopMtu()}. Checked by {@link #conclude()}:
     * in [512, 65507], else EINVAL.
     *
     * @param value the frame size of the in-process fabric, in bytes
     * @return this
     */
    public Configuration loopMtu(final int value) {
        loopMtu = value;
        return this;
    }

    /**
     * The inbound ring size of an in-process NIC, in frames.
     *
     * @return the inbound ring size of an in-process NIC, in frames
     */
    public int loopRingFrames() {
        return loopRingFrames;
    }

    /**
     * Sets the inbound ring size of an in-process NIC. Checked by {@link #conclude()}: a power of two in
     * [8, {@link #LOOP_RING_FRAMES_MAX}], else EINVAL.
     *
     * @param value the inbound ring size of an in-process NIC, in frames (a power of two)
     * @return this
     */
    public Configuration loopRingFrames(final int value) {
        loopRingFrames = value;
        return this;
    }

    /**
     * The directory under which shared-memory NICs keep their ring files.
     *
     * @return the directory under which shared-memory NICs keep their ring files
     */
    public String shmDirectory() {
        return shmDirectory;
    }

    /**
     * Sets the directory under which shared-memory NICs keep their ring files.
     *
     * @param value the directory under which shared-memory NICs keep their ring files (in
     *              {@code jdet-<uid>/<group>/}); every process of a group must use the same one
     * @return this
     */
    public Configuration shmDirectory(final String value) {
        shmDirectory = value;
        return this;
    }

    /**
     * The frame size of a new shared-memory group, in bytes.
     *
     * @return the frame size of a new shared-memory group, in bytes
     */
    public int shmMtu() {
        return shmMtu;
    }

    /**
     * Sets the frame size of a new shared-memory group, in bytes.
     *
     * @param value the frame size of a new shared-memory group, in bytes (a group keeps the size of its first
     *              NIC still open)
     * @return this
     */
    public Configuration shmMtu(final int value) {
        shmMtu = value;
        return this;
    }

    /**
     * The inbound ring size of a shared-memory NIC, in frames.
     *
     * @return the inbound ring size of a shared-memory NIC, in frames
     */
    public int shmRingFrames() {
        return shmRingFrames;
    }

    /**
     * Sets the inbound ring size of a shared-memory NIC, in frames.
     *
     * @param value the inbound ring size of a shared-memory NIC, in frames (a power of two)
     * @return this
     */
    public Configuration shmRingFrames(final int value) {
        shmRingFrames = value;
        return this;
    }

    /**
     * How long an idle shared-memory NIC spins before sleeping, in microseconds.
     *
     * @return how long an idle shared-memory NIC spins before sleeping, in microseconds
     */
    public int shmSpinUs() {
        return shmSpinUs;
    }

    /**
     * Sets how long an idle shared-memory NIC spins before sleeping, in microseconds.
     *
     * @param value how long an idle shared-memory NIC spins before sleeping, in microseconds
     * @return this
     */
    public Configuration shmSpinUs(final int value) {
        shmSpinUs = value;
        return this;
    }

    /**
     * The EtherType of raw Ethernet NICs ({@code eth:<interface>}): every jdet frame, the connection manager's
     * included, travels in an Ethernet frame of this type, and a NIC takes no other. Peers must agree on it.
     *
     * @return the EtherType
     */
    public int ethEtherType() {
        return ethEtherType;
    }

    /**
     * Sets the EtherType of raw Ethernet NICs; see {@link #ethEtherType()}. A second NIC on the same interface
     * needs a different one (one NIC per interface and EtherType in a network namespace).
     *
     * @param value the EtherType, in [0x0600, 0xFFFF], not IPv4's, ARP's, IPv6's or VLAN's (0x8100, 0x88A8)
     * @return this
     */
    public Configuration ethEtherType(final int value) {
        ethEtherType = value;
        return this;
    }

    /**
     * How long an idle raw Ethernet NIC busy-polls its socket before blocking, in microseconds.
     *
     * @return the spin, in microseconds
     */
    public int ethSpinUs() {
        return ethSpinUs;
    }

    /**
     * Sets how long an idle raw Ethernet NIC busy-polls its socket before blocking.
     *
     * @param value the spin in microseconds, in [0, 1000000]
     * @return this
     */
    public Configuration ethSpinUs(final int value) {
        ethSpinUs = value;
        return this;
    }

    /**
     * How long a thread blocked in {@link EventQueue#waitOn} on a UDP NIC busy-polls the socket before it sleeps
     * in {@code ppoll}, in microseconds (the NIC's progress thread never spins on UDP). 0 sleeps at once, as a
     * blocking socket read does.
     *
     * @return the spin, in microseconds
     */
    public int udpSpinUs() {
        return udpSpinUs;
    }

    /**
     * Sets how long a thread blocked in {@link EventQueue#waitOn} on a UDP NIC busy-polls the socket before it
     * sleeps; checked when a device opens with this configuration.
     *
     * @param value the spin in microseconds, in [0, 1000000]
     * @return this
     */
    public Configuration udpSpinUs(final int value) {
        udpSpinUs = value;
        return this;
    }

    /**
     * The faults every link of the device injects into the frames it sends.
     *
     * @return the faults every link of the device injects into the frames it sends
     */
    public FaultPlan faults() {
        return faults;
    }

    /**
     * Sets the faults every link of the device injects into the frames it sends;
     * checked when a device opens with this configuration.
     *
     * @param value the faults every link of the device injects into the frames it sends
     * @return this
     */
    public Configuration faults(final FaultPlan value) {
        faults = value;
        return this;
    }

    /**
     * The tunables of collective groups.
     *
     * @return the tunables of collective groups
     */
    public CollectiveTuning collectives() {
        return collectives;
    }

    /**
     * Sets the tunables of collective groups; checked when a device opens with this configuration.
     *
     * @param value the tunables of collective groups
     * @return this
     */
    public Configuration collectives(final CollectiveTuning value) {
        collectives = value;
        return this;
    }

    /**
     * The pcapng file every link of the device records its frames in, or null (the default) for none. Links of
     * all devices that name the same file share it; it is truncated when the first opens it. Off, it costs nothing;
     * on, every frame is copied once more. Read it with Wireshark and {@code tools/wireshark/jdet.lua}.
     *
     * @return the capture file, or null
     */
    public String capture() {
        return capture;
    }

    /**
     * Sets the capture file; see {@link #capture()}.
     *
     * @param file the pcapng file to record every frame in, or null for none; a NIC that cannot create it fails to
     *             open with EINVAL
     * @return this
     */
    public Configuration capture(final String file) {
        capture = file;
        return this;
    }

    /**
     * Whether each NIC publishes its counters as a JMX MBean, named {@code io.jdet:type=Nic,name="<address>"}.
     *
     * @return whether each NIC publishes its counters as a JMX MBean
     */
    public boolean jmx() {
        return jmx;
    }

    /**
     * Sets whether each NIC publishes its counters as a JMX MBean.
     *
     * @param value whether each NIC publishes its counters as a JMX MBean (read by {@code ./jdet stat})
     * @return this
     */
    public Configuration jmx(final boolean value) {
        jmx = value;
        return this;
    }

    /**
     * Replies per second a NIC sends to frames for unknown queue pairs (0: none).
     *
     * @return the rate
     */
    public int unknownRepliesPerSecond() {
        return unknownRepliesPerSecond;
    }

    /**
     * Sets the replies per second to frames for unknown queue pairs; checked when a device opens with this
     * configuration (not negative; 0 sends none, as WireGuard stays silent).
     *
     * @param value the rate
     * @return this
     */
    public Configuration unknownRepliesPerSecond(final int value) {
        unknownRepliesPerSecond = value;
        return this;
    }

    /**
     * How the connection managers of this device's NICs protect the connections they make, unless a NIC's
     * {@link ConnectionManager#security(Security)} says otherwise: {@link Security#NONE} by default.
     *
     * @return the settings
     */
    public Security security() {
        return security;
    }

    /**
     * Sets how connection managers protect their connections; checked when a device opens with this configuration
     * (not null).
     *
     * @param value the settings, say {@code Security.of(Security.Mode.ENCRYPT).withPreSharedKey(key)}
     * @return this
     */
    public Configuration security(final Security value) {
        security = value;
        return this;
    }

    /**
     * Challenge ACKs per second per NIC (RFC 5961).
     *
     * @return the rate
     */
    public int challengeAcksPerSecond() {
        return challengeAcksPerSecond;
    }

    /**
     * Sets the challenge ACKs per second per NIC; checked when a device opens with this configuration (not
     * negative; 0 sends none, and a peer's inexact DISCONNECT is then simply ignored).
     *
     * @param value the rate
     * @return this
     */
    public Configuration challengeAcksPerSecond(final int value) {
        challengeAcksPerSecond = value;
        return this;
    }

    /**
     * Validated connection requests one source address (on UDP its IPv4 address, whatever the port) may have
     * unanswered at a NIC: waiting for {@link ConnectionListener#take} and the application's answer, or for the
     * requester's confirmation of an acceptance. Answered requests, remembered only to repeat their answer, do not
     * count. A request beyond it is refused as if nobody listened
     * ({@link ConnectionRejectedException.Reason#NO_LISTENER}).
     *
     * @return the limit
     */
    public int cmPendingPerSource() {
        return cmPendingPerSource;
    }

    /**
     * Sets the validated connection requests one source address may have unanswered (see
     * {@link #cmPendingPerSource()}); checked when a device opens with this configuration (in [1, 4096]).
     *
     * @param value the limit
     * @return this
     */
    public Configuration cmPendingPerSource(final int value) {
        cmPendingPerSource = value;
        return this;
    }

    private static String emptyToNull(final String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    @Override
    public String toString() {
        return "Configuration[windowFrames=" + windowFrames + ", timerPeriodUs=" + timerPeriodUs + ", ackTimeoutMs="
            + ackTimeoutMs + ", minRtoUs=" + minRtoUs + ", maxRtoUs=" + maxRtoUs + ", ackDelayUs=" + ackDelayUs
            + ", rnrRetryCount=" + rnrRetryCount + ", rnrDelayUs=" + rnrDelayUs + ", maxRegisteredBytes="
            + maxRegisteredBytes + ", loopMtu=" + loopMtu + ", loopRingFrames=" + loopRingFrames + ", shmDirectory="
            + shmDirectory + ", shmMtu=" + shmMtu + ", shmRingFrames=" + shmRingFrames + ", shmSpinUs=" + shmSpinUs
            + ", ethEtherType=0x" + Integer.toHexString(ethEtherType) + ", ethSpinUs=" + ethSpinUs
            + ", faults=" + faults + ", collectives=" + collectives + ", capture=" + capture + ", jmx=" + jmx
            + ", unknownRepliesPerSecond=" + unknownRepliesPerSecond + ", challengeAcksPerSecond="
            + challengeAcksPerSecond + ", cmPendingPerSource=" + cmPendingPerSource + ", security=" + security + "]";
    }
}
