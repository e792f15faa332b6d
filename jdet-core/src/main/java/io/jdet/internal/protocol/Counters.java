package io.jdet.internal.protocol;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Every protocol event a NIC counts. Written under the engine lock; read as a snapshot. The data path logs
 * nothing: tests and the perf tool read these instead.
 */
public final class Counters {
    public long framesSent;
    public long framesReceived;
    public long bytesSent;
    public long acksSent;
    public long acksReceived;
    public long naksSent;
    public long naksReceived;
    public long naksIgnored;
    /** Frames whose acknowledgement named a sequence number never sent (or far behind): dropped whole. */
    public long ackUnsent;
    /** DISCONNECTs (and CM disconnects) from the peer's address whose sequence number was not the exact one. */
    public long controlInexact;
    /** Challenge ACKs sent (RFC 5961), within {@code Configuration.challengeAcksPerSecond}. */
    public long challengeAcks;
    /** Protected frames whose tag was wrong (forged, altered, or keyed for another connection): dropped. */
    public long sealBadTag;
    /** Protected frames whose packet number was seen before or is older than the replay window: dropped. */
    public long sealReplayed;
    /** ENCRYPT frames whose keystream block was not where the receiving stream stood (a frame lost or reordered
     *  before them): the stream cipher was re-initialised, the one step of a protected frame that allocates. */
    public long sealResync;
    /** Frames for a protected queue pair that were not protected (injected plain frames): dropped. */
    public long sealMissing;
    /** CM_REJECTs a connect with a pre-shared key ignored: without the listener's MAC over its request (spoofed,
     *  or from a listener without that key); the connect goes on until it is accepted or times out. */
    public long cmRejectUnauthenticated;
    /** Connection handshakes that failed authentication (a MAC, a static key, or the key agreement). */
    public long cmAuthFailed;
    /** Replies to unattributable frames (unknown queue pair) or challenges left out by the rate limits. */
    public long repliesLimited;
    /** Connection requests answered with a cookie instead of state (address not yet validated). */
    public long cmCookies;
    /** Connection requests whose cookie was wrong or stale: dropped. */
    public long cmBadCookie;
    /** Validated connection requests refused because their source address had too many pending. */
    public long cmSourceLimited;
    public long rnrNaksSent;
    public long rnrNaksReceived;
    public long retransmitted;
    public long timeouts;
    public long retryExceeded;
    long duplicates;
    long outOfOrder;
    public long badHeader;
    public long badOpcode;
    public long unknownQp;
    public long notConnected;
    public long foreignSource;
    public long badResponses;
    public long disconnectsSent;
    public long linkBusy;
    public long wrPosted;
    public long wrCompleted;
    public long wrFlushed;
    public long recvPosted;
    public long messagesReceived;
    public long atomicsExecuted;
    public long cqOverruns;
    public long engineErrors;
    /** Application polls that found the link idle and skipped their engine pass (the clock read with it). */
    public long idlePassesSkipped;
    long stashed;
    public long sackRetransmitted;
    public long cmSent;
    public long cmReceived;
    public long cmRetransmitted;
    public long cmIgnored;
    /** Frames from the connected peer with a value out of range: each failed its connection. */
    public long protocolErrors;
    /** Connection manager frames with a value out of range (a limit, a queue pair number): refused. */
    public long cmMalformed;

    public Map<String, Long> snapshot() {
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
        m.put("engine.idle_passes_skipped", idlePassesSkipped);
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
        m.put("rx.seal.bad_tag", sealBadTag);
        m.put("rx.seal.replayed", sealReplayed);
        m.put("rx.seal.missing", sealMissing);
        m.put("rx.seal.resync", sealResync);
        m.put("cm.auth_failed", cmAuthFailed);
        m.put("cm.reject_unauthenticated", cmRejectUnauthenticated);
        m.put("tx.replies_limited", repliesLimited);
        m.put("cm.cookies", cmCookies);
        m.put("cm.bad_cookie", cmBadCookie);
        m.put("cm.source_limited", cmSourceLimited);
        return m;
    }
}
