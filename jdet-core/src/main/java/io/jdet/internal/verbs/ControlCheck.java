package io.jdet.internal.verbs;

/**
 * RFC 5961's rule for frames that end a connection (DISCONNECT, CM_DISCONNECT): obeyed only when their sequence
 * number is exactly the next request the queue pair expects. One close to it (within a window) is answered with a
 * rate-limited challenge ACK to the true peer and otherwise ignored; one far from it is ignored. Either way it is
 * counted ({@code rx.control_inexact}). A blind spoofer must guess a random 32-bit number exactly.
 */
public final class ControlCheck {
    private ControlCheck() {
    }

    /**
     * Checks a connection-ending frame's sequence number; challenges and counts an inexact one.
     *
     * @param qp  the connected queue pair it names
     * @param seq the sequence number it carries
     * @return whether to obey it
     */
    public static boolean exact(final QpImpl qp, final int seq) {
        final int expected = qp.responder.reqExpected;
        if (seq == expected) {
            return true;
        }
        qp.nic.counters.controlInexact++;
        if (Math.abs((long) (seq - expected)) <= qp.nic.smallWindow) { // long: the int abs of MIN_VALUE is negative
            qp.nic.challenge(qp);
        }
        return false;
    }
}
