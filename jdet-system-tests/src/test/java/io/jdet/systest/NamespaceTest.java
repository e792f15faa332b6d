package io.jdet.systest;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The verbs workload between two network namespaces joined by a veth pair (MTU 1500, so 1472-byte frames), each
 * end a JVM started with {@code ip netns exec}, each NIC opened by interface name. Needs root and iproute2: without
 * them it is skipped with the reason, except in CI ({@code CI=true}), where it fails (see {@link Preconditions}).
 * The namespaces, and with them the veth pair and its 10.231.77.0/24 addresses, exist only for the test and are
 * removed afterwards, also on failure.
 */
@Timeout(150)
class NamespaceTest {
    private final String suffix = String.valueOf(ProcessHandle.current().pid() % 1_000_000);
    private final String nsA = "jdetA" + suffix;
    private final String nsB = "jdetB" + suffix;
    private final String ifA = "jdA" + suffix;
    private final String ifB = "jdB" + suffix;
    private final List<String> created = new ArrayList<>();

    @BeforeEach
    void createNamespaces() throws Exception {
        Preconditions.require(Files.isExecutable(Path.of("/usr/sbin/ip")) || Files.isExecutable(Path.of("/sbin/ip"))
            || Files.isExecutable(Path.of("/usr/bin/ip")), "the ip tool (iproute2) is not installed");
        Preconditions.require(isRoot(), "creating network namespaces needs root");
        final boolean first = ip("netns", "add", nsA) == 0;
        if (first) {
            created.add(nsA);
        }
        Preconditions.require(first, "cannot create a network namespace here (no CAP_SYS_ADMIN?)");
        final boolean second = ip("netns", "add", nsB) == 0;
        if (second) {
            created.add(nsB);
        }
        Preconditions.require(second, "cannot create a second network namespace");
        must("link", "add", ifA, "type", "veth", "peer", "name", ifB);
        must("link", "set", ifA, "netns", nsA);
        must("link", "set", ifB, "netns", nsB);
        must("-n", nsA, "addr", "add", "10.231.77.1/24", "dev", ifA);
        must("-n", nsB, "addr", "add", "10.231.77.2/24", "dev", ifB);
        for (final String[] nsIf : new String[][] {{nsA, ifA}, {nsB, ifB}}) {
            must("-n", nsIf[0], "link", "set", nsIf[1], "mtu", "1500", "up");
            must("-n", nsIf[0], "link", "set", "lo", "up");
        }
    }

    @AfterEach
    void removeNamespaces() throws Exception {
        for (final String ns : created) {
            ip("netns", "del", ns); // takes the veth end (and so the pair) with it
        }
        created.clear();
    }

    @Test
    void shouldRunEveryVerbAcrossAVethPairBetweenNamespaces() throws Exception {
        try (PeerProcess server = new PeerProcess(List.of("ip", "netns", "exec", nsB), "server", ifB,
            String.valueOf(PeerMain.SERVICE), "-")) {
            final String address = server.awaitLine("ADDRESS", 60_000);
            assertEquals(true, address.startsWith("udp:10.231.77.2:"), address);
            try (PeerProcess client = new PeerProcess(List.of("ip", "netns", "exec", nsA), "client", ifA,
                String.valueOf(PeerMain.SERVICE), "-", address)) {
                final String ok = client.awaitLine("OK", 120_000);
                assertEquals(0, client.awaitExit(30_000), client.output());
                server.awaitLine("OK", 30_000);
                server.closeInput(); // the client has its last completion: the server may go
                assertEquals(0, server.awaitExit(30_000), server.output());
                System.out.println("across namespaces: client " + ok);
            }
        }
    }

    private static boolean isRoot() throws IOException, InterruptedException {
        final Process p = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return p.waitFor(10, TimeUnit.SECONDS) && out.equals("0");
    }

    private static int ip(final String... args) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>();
        command.add("ip");
        command.addAll(List.of(args));
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        if (p.exitValue() != 0) {
            System.err.println(command + ": " + out);
        }
        return p.exitValue();
    }

    private static void must(final String... args) throws IOException, InterruptedException {
        assertEquals(0, ip(args), "ip " + String.join(" ", args));
    }
}
