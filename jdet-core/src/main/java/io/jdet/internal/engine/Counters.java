package io.jdet.internal.engine;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every protocol event a NIC counts. Written under the engine lock; read as a snapshot. The data path logs
 * nothing: tests and the perf tool read these instead.
 */
final class Counters {
    long framesSent;
    long framesReceived;
    long bytesSent;
    long acksSent;
    long acksReceived;
    long naksSent;
    long naksReceived;
    long naksIgnored;
    /** Frames whose acknowledgement named a sequence number never sent (or far behind): dropped whole. */
    long ackUnsent;
    /** DISCONNECTs (and CM disconnects) from the peer's address whose sequence number was not the exact one. */
    long controlInexact;
    /** Challenge ACKs sent (RFC 5961), within {@code Configuration.challengeAcksPerSecond}. */
    long challengeAcks;
    /** Replies to unattributable frames (unknown queue pair) or challenges left out by the rate limits. */
    long repliesLimited;
    /** Connection requests answered with a cookie instead of state (address not yet validated). */
    long cmCookies;
    /** Connection requests whose cookie was wrong or stale: dropped. */
    long cmBadCookie;
    /** Validated connection requests refused because their source address had too many pending. */
    long cmSourceLimited;
    long rnrNaksSent;
    long rnrNaksReceived;
    long retransmitted;
    long timeouts;
    long retryExceeded;
    long duplicates;
    long outOfOrder;
    long badHeader;
    long badOpcode;
    long unknownQp;
    long notConnected;
    long foreignSource;
    long badResponses;
    long disconnectsSent;
    long linkBusy;
    long wrPosted;
    long wrCompleted;
    long wrFlushed;
    long recvPosted;
    long messagesReceived;
    long atomicsExecuted;
    long cqOverruns;
    long engineErrors;
    long stashed;
    long sackRetransmitted;
    long cmSent;
    long cmReceived;
    long cmRetransmitted;
    long cmIgnored;
    /** Frames from the connected peer with a value out of range: each failed its connection. */
    long protocolErrors;
    /** Connection manager frames with a value out of range (a limit, a queue pair number): refused. */
    long cmMalformed;

    Map<String, Long> snapshot() {
        final Map<String, Long> m = new LinkedHashMap<>();
        m.put("frames.sent", framesSent);
        m.put("frames.received", framesReceived);
        m.put("bytes.sent", bytesSent);
        m.put("acks.sent", acksSent);
        m.put("acks.received", acksReceived);
        m.put("naks.sent", naksSent);
        m.put("naks.received", naksReceived);
        m.put("naks.ignored", naksIgnored);
        m.put("rnr.naks.sent", rnrNaksSent);
        m.put("rnr.naks.received", rnrNaksReceived);
        m.put("frames.retransmitted", retransmitted);
        m.put("retransmit.timeouts", timeouts);
        m.put("retry.exceeded", retryExceeded);
        m.put("rx.duplicates", duplicates);
        m.put("rx.out_of_order", outOfOrder);
        m.put("rx.bad_header", badHeader);
        m.put("rx.bad_opcode", badOpcode);
        m.put("rx.unknown_qp", unknownQp);
        m.put("rx.not_connected", notConnected);
        m.put("rx.foreign_source", foreignSource);
        m.put("rx.bad_response", badResponses);
        m.put("disconnects.sent", disconnectsSent);
        m.put("link.busy", linkBusy);
        m.put("wr.posted", wrPosted);
        m.put("wr.completed", wrCompleted);
        m.put("wr.flushed", wrFlushed);
        m.put("recv.posted", recvPosted);
        m.put("messages.received", messagesReceived);
        m.put("atomics.executed", atomicsExecuted);
        m.put("cq.overruns", cqOverruns);
        m.put("engine.errors", engineErrors);
        m.put("rx.stashed", stashed);
        m.put("frames.sack_retransmitted", sackRetransmitted);
        m.put("cm.sent", cmSent);
        m.put("cm.received", cmReceived);
        m.put("cm.retransmitted", cmRetransmitted);
        m.put("cm.ignored", cmIgnored);
        m.put("rx.protocol_error", protocolErrors);
        m.put("cm.malformed", cmMalformed);
        m.put("rx.ack_unsent", ackUnsent);
        m.put("rx.control_inexact", controlInexact);
        m.put("tx.challenge_acks", challengeAcks);
        m.put("tx.replies_limited", repliesLimited);
        m.put("cm.cookies", cmCookies);
        m.put("cm.bad_cookie", cmBadCookie);
        m.put("cm.source_limited", cmSourceLimited);
        return m;
    }
}
