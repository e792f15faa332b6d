package io.jdet.perf;

import io.jdet.perf.jdet.JdetPeer;
import io.jdet.perf.rig.Abort;
import io.jdet.perf.rig.Pattern;
import io.jdet.perf.rig.Spinner;

/**
 * What one end of a run works with: the side channel to the other end, its jdet device and NIC, the shared
 * settings, the verification pattern and the abort flag.
 *
 * @param side          the side channel
 * @param peer          this end's jdet device and NIC
 * @param settings      the run's shared settings
 * @param pattern       the bytes verified runs send
 * @param abort         raised when the run must stop
 * @param jdetTransport how jdet figures are labelled ({@code jdet/udp}, {@code jdet/loop})
 * @param measureNs     how long this end (a client without {@code --iters}) makes a measurement, sizing it from
 *                      the warm-up's pace; 0 when the counts are fixed (a server follows the client's counts)
 */
public record End(SideChannel side, JdetPeer peer, RunSettings settings, Pattern pattern, Abort abort,
                  String jdetTransport, long measureNs) {

    /**
     * Whether this end sizes warm-up and measured phases by time.
     *
     * @return true for a client without {@code --iters}
     */
    public boolean adaptive() {
        return measureNs > 0;
    }

    /**
     * A fresh busy-poll deadline for a step.
     *
     * @param step   the step
     * @param active whether this is the client (which also watches the side channel for the server's errors)
     * @return the spinner
     */
    public Spinner spinner(final Step step, final boolean active) {
        final Spinner spinner = new Spinner(settings.timeoutNs(), abort)
            .waitingFor("the peer in " + step.kind().label() + " at " + Sizes.format(step.size()) + " bytes");
        return active ? spinner.watching(side) : spinner;
    }

    /**
     * The side channel's peer host, to reach the other end's sockets and wildcard NIC addresses.
     *
     * @return an IP address literal
     */
    public String peerHost() {
        return side.peerAddress().getHostAddress();
    }
}
