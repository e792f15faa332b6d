package io.jdet.testing;

import org.junit.jupiter.api.Assertions;
import org.opentest4j.TestAbortedException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A veth pair in this process's network namespace, for the raw Ethernet link: a frame sent on one end arrives at
 * the other, so NIC {@code eth:<a>} reaches NIC {@code eth:<b>} within one JVM. Needs root and iproute2; without
 * them the test is skipped with the reason, except in CI ({@code CI=true}), where it fails. Names are unique to
 * this process; closing deletes the pair (deleting one end deletes both).
 */
public final class VethPair implements AutoCloseable {
    private static final AtomicInteger PAIRS = new AtomicInteger();

    /** The first end's interface name. */
    public final String a;
    /** The second end's interface name. */
    public final String b;
    private boolean created;

    /**
     * Creates a pair, both ends up.
     *
     * @param mtu the MTU of both ends
     */
    public VethPair(final int mtu) {
        final String suffix = (ProcessHandle.current().pid() % 100_000) + "x" + PAIRS.incrementAndGet();
        this.a = "jeA" + suffix;
        this.b = "jeB" + suffix;
        require(Files.isExecutable(Path.of("/usr/sbin/ip")) || Files.isExecutable(Path.of("/sbin/ip"))
            || Files.isExecutable(Path.of("/usr/bin/ip")), "the ip tool (iproute2) is not installed");
        require("0".equals(run("id", "-u").trim()), "a veth pair needs root");
        created = ip("link", "add", a, "mtu", String.valueOf(mtu), "type", "veth", "peer", "name", b, "mtu",
            String.valueOf(mtu)).isEmpty();
        require(created, "cannot create a veth pair here (no CAP_NET_ADMIN?)");
        must("link", "set", a, "up");
        must("link", "set", b, "up");
    }

    /**
     * Gives one end an IPv4 address, so that UDP can run between two local addresses that are not on loopback.
     *
     * @param end  {@link #a} or {@link #b}
     * @param cidr the address and prefix, say {@code 198.18.213.1/30}
     */
    public void address(final String end, final String cidr) {
        must("addr", "add", cidr, "dev", end);
    }

    /**
     * Gives the ends the first and second addresses of a /30 in {@code 198.18.<subnet>.0/24} (RFC 2544,
     * benchmarking: on no real network), the /30 chosen by this process's id, so that UDP can run between two
     * local addresses that are not on loopback.
     *
     * @param subnet the third byte, one per test, so that tests of one run never share an address
     * @return the addresses of {@link #a} and {@link #b}, without prefix
     */
    public String[] addresses(final int subnet) {
        final int net = (int) (ProcessHandle.current().pid() % 60) * 4;
        final String[] both = {"198.18." + subnet + "." + (net + 1), "198.18." + subnet + "." + (net + 2)};
        address(a, both[0] + "/30");
        address(b, both[1] + "/30");
        return both;
    }

    /** @return {@code eth:<a>} */
    public String nicA() {
        return "eth:" + a;
    }

    /** @return {@code eth:<b>} */
    public String nicB() {
        return "eth:" + b;
    }

    @Override
    public void close() {
        if (created) {
            created = false;
            ip("link", "del", a);
        }
    }

    private static void require(final boolean met, final String what) {
        if (met) {
            return;
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            Assertions.fail(what + ": CI=true, where this test must run rather than be skipped");
        }
        throw new TestAbortedException("skipped: " + what + " (with CI=true this fails instead)");
    }

    private void must(final String... args) {
        final String error = ip(args);
        if (!error.isEmpty()) {
            close();
            Assertions.fail("ip " + String.join(" ", args) + ": " + error);
        }
    }

    /** Runs {@code ip}; returns "" on success, else its output. */
    private static String ip(final String... args) {
        final List<String> command = new ArrayList<>();
        command.add("ip");
        command.addAll(List.of(args));
        try {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "timed out";
            }
            return p.exitValue() == 0 ? "" : "exit " + p.exitValue() + ": " + out;
        } catch (final IOException e) {
            return e.toString();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return e.toString();
        }
    }

    private static String run(final String... command) {
        try {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return p.waitFor(20, TimeUnit.SECONDS) ? out : "";
        } catch (final IOException e) {
            return "";
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
