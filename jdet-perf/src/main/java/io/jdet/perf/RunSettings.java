package io.jdet.perf;

import io.jdet.Configuration;
import io.jdet.FaultPlan;
import io.jdet.Security;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The settings both ends of a run share; the client sends them to the server in its HELLO.
 *
 * @param waitMode  wait on events and block (else busy-poll)
 * @param verify    check the bytes received (what {@code --verify} says)
 * @param maxRd     reads and atomics in flight
 * @param timeoutMs the longest wait
 * @param faults    faults jdet's links inject
 * @param secure    the protection of jdet's connections
 */
public record RunSettings(boolean waitMode, boolean verify, int maxRd, long timeoutMs, FaultPlan faults,
                          Security.Mode secure) {

    /**
     * Settings with plain connections.
     *
     * @param waitMode  wait on events and block (else busy-poll)
     * @param verify    check the bytes received (what {@code --verify} says)
     * @param maxRd     reads and atomics in flight
     * @param timeoutMs the longest wait
     * @param faults    faults jdet's links inject
     */
    public RunSettings(final boolean waitMode, final boolean verify, final int maxRd, final long timeoutMs,
                       final FaultPlan faults) {
        this(waitMode, verify, maxRd, timeoutMs, faults, Security.Mode.NONE);
    }

    /**
     * The settings of a configuration.
     *
     * @param config the client's or embedded run's configuration
     * @return its settings
     */
    public static RunSettings of(final PerfConfig config) {
        return new RunSettings(config.waitMode(), config.verify(), config.maxRd(), config.timeoutMs(),
            config.faults(), config.secure());
    }

    /**
     * The HELLO message.
     *
     * @return the message
     */
    public Message toMessage() {
        return Message.of("HELLO").with("wait", waitMode).with("verify", verify).with("maxrd", maxRd)
            .with("timeout", timeoutMs).with("loss", faults.lossRate()).with("dup", faults.duplicateRate())
            .with("reorder", faults.reorderRate()).with("corrupt", faults.corruptRate())
            .with("seed", faults.seed()).with("secure", secureName(secure)).build();
    }

    /**
     * Reads the HELLO message.
     *
     * @param hello the client's HELLO
     * @return its settings
     * @throws PerfException if a field is missing or of the wrong type
     * @throws io.jdet.DetException EINVAL if a fault rate is outside [0, 1]
     */
    public static RunSettings of(final Message hello) {
        return new RunSettings(hello.flag("wait"), hello.flag("verify"),
            (int) hello.number("maxrd"), hello.number("timeout"), new FaultPlan(hello.decimal("loss"),
            hello.decimal("dup"), hello.decimal("reorder"), hello.decimal("corrupt"), hello.number("seed")),
            Security.Mode.valueOf(hello.text("secure").toUpperCase(Locale.ROOT)));
    }

    /**
     * A protection mode as {@code --secure} names it, in the HELLO, the run options' differences and the report.
     *
     * @param mode the mode
     * @return {@code none}, {@code auth} or {@code encrypt}
     */
    public static String secureName(final Security.Mode mode) {
        return mode.name().toLowerCase(Locale.ROOT);
    }

    /**
     * The device configuration of a jdet end.
     *
     * @return a configuration with the faults and the protection
     */
    public Configuration deviceConfiguration() {
        return new Configuration().faults(faults).security(Security.of(secure));
    }

    /**
     * The longest wait in nanoseconds.
     *
     * @return the timeout
     */
    public long timeoutNs() {
        return TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    }
}
