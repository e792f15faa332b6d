package io.jdet.internal.cm;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

/**
 * Stateless address validation for the connection manager, as TCP's SYN cookies and QUIC's retry tokens: a
 * CM_REQUEST without a valid cookie gets a CM_COOKIE back (no larger than the request, and nothing remembered);
 * only a request that returns the cookie, which only a client that receives at its claimed address can, gets
 * state. The cookie is HMAC-SHA256 (from the JDK), truncated to 64 bits, over the client's link address (IPv4
 * address and port), its connection id, the service id, its queue pair number and a time slot of
 * {@link #SLOT_NS}, under a random per-NIC secret. A cookie of the current or the previous slot is accepted.
 * Control path; engine lock held.
 */
final class CmCookie {
    /** A cookie's time slot: 4 s; one stays valid for 4 to 8 s. */
    static final long SLOT_NS = 4_000_000_000L;

    private final Mac mac;
    private final byte[] input = new byte[28];

    CmCookie() {
        final byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        try {
            mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HmacSHA256", e);
        }
    }

    /**
     * The cookie for a request now.
     *
     * @return a value other than 0 (0 on the wire means "no cookie")
     */
    long issue(final long peer, final int id, final int serviceId, final int srcQp, final long now) {
        return compute(peer, id, serviceId, srcQp, Math.floorDiv(now, SLOT_NS));
    }

    /** Whether a request's cookie is the one issued to it in this time slot or the last. */
    boolean valid(final long cookie, final long peer, final int id, final int serviceId, final int srcQp,
                  final long now) {
        if (cookie == 0) {
            return false;
        }
        final long slot = Math.floorDiv(now, SLOT_NS);
        return cookie == compute(peer, id, serviceId, srcQp, slot)
            || cookie == compute(peer, id, serviceId, srcQp, slot - 1);
    }

    private long compute(final long peer, final int id, final int serviceId, final int srcQp, final long slot) {
        putLong(0, peer);
        putInt(8, id);
        putInt(12, serviceId);
        putInt(16, srcQp);
        putLong(20, slot);
        final byte[] tag = mac.doFinal(input);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | tag[i] & 0xFF;
        }
        return v == 0 ? 1 : v;
    }

    private void putInt(final int at, final int v) {
        for (int i = 0; i < 4; i++) {
            input[at + i] = (byte) (v >>> 8 * i);
        }
    }

    private void putLong(final int at, final long v) {
        for (int i = 0; i < 8; i++) {
            input[at + i] = (byte) (v >>> 8 * i);
        }
    }
}
