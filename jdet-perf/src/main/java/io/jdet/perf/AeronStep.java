package io.jdet.perf;

import io.aeron.Aeron;
import io.aeron.Subscription;
import io.jdet.perf.aeron.AeronLink;
import io.jdet.perf.aeron.AeronMedia;
import io.jdet.perf.aeron.AeronPingPong;
import io.jdet.perf.aeron.AeronStream;
import io.jdet.perf.report.Figure;

/**
 * One Aeron baseline at one size, at either end, through the process's embedded media driver
 * ({@link AeronMedia}): each end subscribes (over UDP on the side channel's local address, or over IPC when both
 * ends share this JVM's driver), they swap stream ids and ports over the side channel, each publishes to the
 * other, and they run the same two {@link Phases} as the jdet tests.
 */
final class AeronStep {
    private AeronStep() {
    }

    /**
     * The client's part: it measures.
     *
     * @param step the baseline and its counts
     * @param end  this end
     * @return the figures
     */
    static Figure active(final Step step, final End end) {
        final SideChannel side = end.side();
        final boolean ipc = step.kind().aeronIpc();
        final Aeron aeron = AeronMedia.client(end.settings().waitMode());
        final int streams = AeronLink.nextStreams();
        final Subscription in = AeronLink.subscribe(aeron, ipc, side.localAddress(), streams);
        final Figure figure;
        try {
            final int port = ipc ? 0 : AeronLink.port(in, end.settings().timeoutNs());
            side.send(Message.of("BASE").with(step.toMessage("BASE").fields()).with("streams", streams)
                .with("port", port).build());
            final int peerPort = (int) side.expect("READY").number("port");
            try (AeronLink link = AeronLink.open(aeron, in, ipc, side.peerAddress(), peerPort, streams + 1,
                step.size(), end.settings().timeoutNs(), end.abort())) {
                figure = measure(step, end, link);
            }
        } catch (final RuntimeException e) {
            in.close();
            throw e;
        }
        side.send(Message.of("END").build());
        side.expect("DONE"); // the server's link is closed: in an embedded run the driver may go
        AeronMedia.stepDone();
        return figure;
    }

    private static Figure measure(final Step step, final End end, final AeronLink link) {
        final String transport = step.kind().aeronIpc() ? "aeron/ipc" : "aeron/udp";
        final boolean wait = end.settings().waitMode();
        if (step.kind().latency()) {
            try (AeronPingPong pingPong = new AeronPingPong(link, step.size(), wait, end.settings().verify(),
                end.pattern(), end.spinner(step, true), step.kind().label())) {
                return Phases.initiate(step, end, pingPong, transport);
            }
        }
        try (AeronStream stream = new AeronStream(link, step.size(), wait, end.settings().verify(), end.pattern(),
            end.spinner(step, true), step.kind().label())) {
            return Phases.send(step, end, stream, transport);
        }
    }

    /**
     * The server's part: it echoes or receives.
     *
     * @param base the client's BASE message
     * @param end  this end
     */
    static void passive(final Message base, final End end) {
        final Step step = Step.of(base);
        final SideChannel side = end.side();
        final boolean ipc = step.kind().aeronIpc();
        final Aeron aeron = AeronMedia.client(end.settings().waitMode());
        final int streams = (int) base.number("streams");
        final Subscription in = AeronLink.subscribe(aeron, ipc, side.localAddress(), streams + 1);
        try {
            final int port = ipc ? 0 : AeronLink.port(in, end.settings().timeoutNs());
            side.send(Message.of("READY").with("port", port).build());
            try (AeronLink link = AeronLink.open(aeron, in, ipc, side.peerAddress(), (int) base.number("port"),
                streams, step.size(), end.settings().timeoutNs(), end.abort())) {
                final boolean wait = end.settings().waitMode();
                if (step.kind().latency()) {
                    try (AeronPingPong pingPong = new AeronPingPong(link, step.size(), wait,
                        end.settings().verify(), end.pattern(), end.spinner(step, false), step.kind().label())) {
                        Phases.respond(step, end, pingPong);
                    }
                } else {
                    try (AeronStream stream = new AeronStream(link, step.size(), wait, end.settings().verify(),
                        end.pattern(), end.spinner(step, false), step.kind().label())) {
                        Phases.receive(step, end, stream);
                    }
                }
            }
        } catch (final RuntimeException e) {
            in.close();
            throw e;
        }
        // The phases ended with the client's END.
        side.send(Message.of("DONE").build());
    }
}
