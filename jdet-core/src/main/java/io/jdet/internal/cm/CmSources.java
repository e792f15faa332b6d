package io.jdet.internal.cm;

import java.util.Collection;
import java.util.Iterator;

/**
 * Per-source limits of the connection manager ({@code Configuration.cmPendingPerSource}): how many validated
 * requests one source address (whatever its port) may have unanswered at a NIC, waiting for the application's
 * {@code take} and answer or for the requester's READY, so that one host cannot fill a listener's backlog. On UDP
 * the source is the IPv4 address (the link handle without its port); on other links, the link handle. Answered
 * requests, remembered only to repeat their answer, do not count; when the NIC's table of them is full the
 * oldest answered one is forgotten to make room, so no source can fill it for the others. Control path (a scan
 * of at most {@link CmImpl#MAX_REMEMBERED} entries per validated request); engine lock held.
 */
final class CmSources {
    private final boolean udp;
    private final int limit;

    CmSources(final boolean udp, final int limit) {
        this.udp = udp;
        this.limit = limit;
    }

    private long source(final long peer) {
        return udp ? peer >>> 16 : peer;
    }

    /** Whether the peer's source has fewer than its limit of requests unanswered. */
    boolean allows(final Collection<CmRequest> requests, final long peer) {
        final long source = source(peer);
        int open = 0;
        for (final CmRequest r : requests) {
            if (source(r.peer) == source && (r.state == CmRequest.PENDING || r.state == CmRequest.ACCEPTED)) {
                open++;
            }
        }
        return open < limit;
    }

    /**
     * Forgets one answered request to make room (its late duplicate is then judged anew).
     *
     * @return whether one was forgotten
     */
    static boolean evictAnswered(final Collection<CmRequest> requests) {
        for (final Iterator<CmRequest> i = requests.iterator(); i.hasNext();) {
            final CmRequest r = i.next();
            if (r.state != CmRequest.PENDING && r.state != CmRequest.ACCEPTED) {
                i.remove();
                return true;
            }
        }
        return false;
    }
}
