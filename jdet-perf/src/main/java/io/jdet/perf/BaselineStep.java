package io.jdet.perf;

import io.jdet.perf.baseline.Baselines;
import io.jdet.perf.report.Figure;
import io.jdet.perf.rig.PingPong;
import io.jdet.perf.rig.Stream;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ByteChannel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;

/**
 * One baseline at one size, at either end: the ends open their UDP or TCP sockets on the side channel's addresses,
 * swap port numbers, and run the same two {@link Phases} as the jdet tests.
 */
final class BaselineStep {
    private BaselineStep() {
    }

    /**
     * The client's part: it measures.
     *
     * @param step the baseline and its counts
     * @param end  this end
     * @return the figures
     */
    static Figure active(final Step step, final End end) {
        if (step.kind().aeron()) {
            return AeronStep.active(step, end);
        }
        final SideChannel side = end.side();
        final ByteChannel channel;
        if (Baselines.udp(step.kind())) {
            final DatagramChannel udp = Baselines.openUdp(side.localAddress());
            side.send(Message.of("BASE").with(step.toMessage("BASE").fields()).with("port", Baselines.port(udp))
                .build());
            Baselines.connect(udp, new InetSocketAddress(side.peerAddress(), port(side)));
            channel = udp;
        } else {
            side.send(step.toMessage("BASE"));
            channel = Baselines.connectTcp(new InetSocketAddress(side.peerAddress(), port(side)),
                end.settings().timeoutMs());
        }
        final Baselines.Setup setup = new Baselines.Setup(end.settings().waitMode(), end.settings().verify(),
            end.pattern(), end.spinner(step, true));
        final String transport = Baselines.udp(step.kind()) ? "udp" : "tcp";
        final Figure figure;
        if (step.kind().latency()) {
            try (PingPong pingPong = pingPong(step, channel, setup)) {
                figure = Phases.initiate(step, end, pingPong, transport);
            }
        } else {
            try (Stream stream = stream(step, channel, setup)) {
                figure = Phases.send(step, end, stream, transport);
            }
        }
        side.send(Message.of("END").build());
        side.expect("DONE");
        return figure;
    }

    /**
     * The server's part: it echoes or receives.
     *
     * @param base the client's BASE message
     * @param end  this end
     */
    static void passive(final Message base, final End end) {
        final Step step = Step.of(base);
        if (step.kind().aeron()) {
            AeronStep.passive(base, end);
            return;
        }
        final SideChannel side = end.side();
        final ByteChannel channel;
        if (Baselines.udp(step.kind())) {
            final DatagramChannel udp = Baselines.openUdp(side.localAddress());
            Baselines.connect(udp, new InetSocketAddress(side.peerAddress(), port(base)));
            side.send(Message.of("READY").with("port", Baselines.port(udp)).build());
            channel = udp;
        } else {
            try (ServerSocketChannel listener = Baselines.listenTcp(side.localAddress())) {
                side.send(Message.of("READY").with("port", Baselines.port(listener)).build());
                channel = Baselines.accept(listener, end.settings().timeoutMs());
            } catch (final IOException e) {
                throw new PerfException("closing the TCP baseline listener: " + e, e);
            }
        }
        final Baselines.Setup setup = new Baselines.Setup(end.settings().waitMode(), end.settings().verify(),
            end.pattern(), end.spinner(step, false));
        if (step.kind().latency()) {
            try (PingPong pingPong = pingPong(step, channel, setup)) {
                Phases.respond(step, end, pingPong);
            }
        } else {
            try (Stream stream = stream(step, channel, setup)) {
                Phases.receive(step, end, stream);
            }
        }
        // The phases ended with the client's END.
        side.send(Message.of("DONE").build());
    }

    private static int port(final SideChannel side) {
        return port(side.expect("READY"));
    }

    /** A port the peer sent, checked: a bad one is the peer's error, not this tool's. */
    static int port(final Message message) {
        final long port = message.number("port");
        if (port < 1 || port > 65_535) {
            throw new PerfException("side channel: " + message.verb() + " port " + port + " is outside [1, 65535]");
        }
        return (int) port;
    }

    private static PingPong pingPong(final Step step, final ByteChannel channel, final Baselines.Setup setup) {
        return channel instanceof DatagramChannel udp ? Baselines.udpPingPong(udp, step.size(), setup)
            : Baselines.tcpPingPong((java.nio.channels.SocketChannel) channel, step.size(), setup);
    }

    private static Stream stream(final Step step, final ByteChannel channel, final Baselines.Setup setup) {
        return channel instanceof DatagramChannel udp ? Baselines.udpStream(udp, step.size(), setup)
            : Baselines.tcpStream((java.nio.channels.SocketChannel) channel, step.size(), setup);
    }
}
