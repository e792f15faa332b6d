package io.jdet.perf;

import io.jdet.perf.jdet.ConnectInfo;
import io.jdet.perf.jdet.JdetPingPong;
import io.jdet.perf.jdet.JdetQp;
import io.jdet.perf.jdet.JdetStream;
import io.jdet.perf.jdet.QpShape;
import io.jdet.perf.report.Figure;

/**
 * One jdet test at one size, at either end, as det_perf runs it: both ends build the test's resources, swap their
 * connect info over the side channel, connect, post their receives, run the two {@link Phases}, and finish with the
 * client's END and the server's DONE.
 */
final class JdetStep {
    private JdetStep() {
    }

    /**
     * The client's part: it measures.
     *
     * @param step the test and its counts
     * @param end  this end
     * @return the figures
     */
    static Figure active(final Step step, final End end) {
        final SideChannel side = end.side();
        side.send(step.toMessage("TEST"));
        try (JdetQp q = open(step, end, true)) {
            side.send(Message.of("INFO").with(q.localInfo().toFields()).build());
            q.connect(ConnectInfo.fromFields(side.expect("INFO").texts()).reachableFrom(end.peerHost()), true);
            final Figure figure = step.kind().latency()
                ? Phases.initiate(step, end, new JdetPingPong(q, end.settings().verify(), end.pattern()),
                    end.jdetTransport())
                : Phases.send(step, end, new JdetStream(q, end.settings().verify(), end.pattern()),
                    end.jdetTransport());
            q.awaitSends(0);
            side.send(Message.of("END").build());
            side.expect("DONE");
            return figure;
        }
    }

    /**
     * The server's part: it answers, serves, and checks what it received.
     *
     * @param step the test and its counts, from the client's TEST
     * @param end  this end
     */
    static void passive(final Step step, final End end) {
        final SideChannel side = end.side();
        try (JdetQp q = open(step, end, false)) {
            final ConnectInfo remote = ConnectInfo.fromFields(side.expect("INFO").texts());
            side.send(Message.of("INFO").with(q.localInfo().toFields()).build());
            q.connect(remote.reachableFrom(end.peerHost()), false);
            if (step.kind().latency()) {
                Phases.respond(step, end, new JdetPingPong(q, end.settings().verify(), end.pattern()));
            } else {
                Phases.receive(step, end, new JdetStream(q, end.settings().verify(), end.pattern()));
            }
            // The phases ended with the client's END.
            q.awaitSends(0);
            side.send(Message.of("DONE").with("polls", q.polls()).build());
        }
    }

    private static JdetQp open(final Step step, final End end, final boolean active) {
        final QpShape shape = QpShape.of(step.kind(), step.size(), step.burst(), step.total(),
            end.settings().waitMode());
        return new JdetQp(end.peer(), shape, end.settings().waitMode(), end.settings().maxRd(),
            end.spinner(step, active));
    }
}
