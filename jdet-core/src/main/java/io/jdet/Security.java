package io.jdet;

import java.security.KeyPair;
import java.security.PublicKey;
import java.security.interfaces.XECPublicKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * How the connection manager protects the connections it makes: {@link Mode#NONE} (plain frames, the default),
 * {@link Mode#AUTH} (every frame carries a 128-bit Poly1305-AES tag: nothing can be forged, injected or replayed,
 * but the payload travels in the clear) or {@link Mode#ENCRYPT} (the payload is also encrypted with AES-128-CTR
 * under the same tag: also hidden). The handshake runs an X25519 key agreement with fresh ephemeral keys per
 * connection; on its own that stops off-path and passive attackers and any injection after the handshake, but not a
 * man in the middle of the handshake itself. To stop that too, give both ends a {@linkplain #withPreSharedKey
 * pre-shared key} and/or {@linkplain #withStaticKey static X25519 key pairs} plus the {@linkplain #withPeerKeys
 * public keys they trust}.
 * Both ends must use the same mode and the same pre-shared key, or the connect fails. With a pre-shared key, a
 * refusal (CM_REJECT) counts only if the listener proves it holds the key, so a spoofed one cannot fail the
 * connect; a listener without the key cannot refuse it either, and the connect fails with ETIMEDOUT instead of
 * ECONNREFUSED. See {@code docs/PROTOCOL.md} and {@code docs/SECURITY.md}.
 *
 * <p>Immutable; the {@code with*} methods return copies.
 */
public final class Security {
    /** What a protected connection guarantees. */
    public enum Mode {
        /** Plain frames: only the sequence-number and identifier checks protect the connection. */
        NONE,
        /** Every frame authenticated (Poly1305-AES, 128-bit tag) and checked against replay; payload in clear. */
        AUTH,
        /** Every frame authenticated and its payload encrypted (AES-128-CTR, then the tag), checked against replay. */
        ENCRYPT
    }

    /** No protection. */
    public static final Security NONE = new Security(Mode.NONE, null, null, List.of());

    /** The shortest pre-shared key accepted, in bytes. */
    public static final int MIN_PSK_LENGTH = 16;

    private final Mode mode;
    private final byte[] psk;
    private final KeyPair staticKey;
    private final List<PublicKey> peerKeys;

    private Security(final Mode mode, final byte[] psk, final KeyPair staticKey, final List<PublicKey> peerKeys) {
        this.mode = mode;
        this.psk = psk;
        this.staticKey = staticKey;
        this.peerKeys = peerKeys;
    }

    /**
     * A mode without pre-shared or static keys.
     *
     * @param mode the mode
     * @return the settings
     * @throws IllegalArgumentException if mode is null
     */
    public static Security of(final Mode mode) {
        if (mode == null) {
            throw new IllegalArgumentException("mode must not be null");
        }
        return mode == Mode.NONE ? NONE : new Security(mode, null, null, List.of());
    }

    /**
     * The same settings bound to a pre-shared key, mixed into every connection's keys: a peer or a man in the middle
     * without it cannot complete the handshake.
     *
     * @param key at least {@link #MIN_PSK_LENGTH} bytes, copied
     * @return the settings
     * @throws DetException EINVAL if the key is shorter, or the mode is NONE
     */
    public Security withPreSharedKey(final byte[] key) {
        requireProtected();
        if (key == null || key.length < MIN_PSK_LENGTH) {
            throw new DetException(Errno.EINVAL, "a pre-shared key needs at least " + MIN_PSK_LENGTH + " bytes");
        }
        return new Security(mode, key.clone(), staticKey, peerKeys);
    }

    /**
     * The same settings with this end's static X25519 key pair (say from {@code KeyPairGenerator.getInstance("X25519")}),
     * whose public key this end presents in every handshake and proves it owns.
     *
     * @param keyPair an X25519 key pair
     * @return the settings
     * @throws DetException EINVAL if it is not an X25519 key pair, or the mode is NONE
     */
    public Security withStaticKey(final KeyPair keyPair) {
        requireProtected();
        if (keyPair == null || !isX25519(keyPair.getPublic()) || keyPair.getPrivate() == null
            || !"XDH".equals(keyPair.getPrivate().getAlgorithm()) && !"X25519".equals(keyPair.getPrivate().getAlgorithm())) {
            throw new DetException(Errno.EINVAL, "the static key must be an X25519 key pair");
        }
        return new Security(mode, psk, keyPair, peerKeys);
    }

    /**
     * The same settings trusting only these peers: a handshake succeeds only if the peer presents one of these static
     * X25519 public keys and proves it owns the private key. Without any, a peer need not present a static key.
     *
     * @param keys the trusted peers' X25519 public keys
     * @return the settings
     * @throws DetException EINVAL if a key is not an X25519 public key, none is given, or the mode is NONE
     */
    public Security withPeerKeys(final PublicKey... keys) {
        requireProtected();
        if (keys == null || keys.length == 0) {
            throw new DetException(Errno.EINVAL, "give at least one trusted peer key");
        }
        final List<PublicKey> list = new ArrayList<>();
        for (final PublicKey key : keys) {
            if (!isX25519(key)) {
                throw new DetException(Errno.EINVAL, "a peer key is not an X25519 public key: " + key);
            }
            list.add(key);
        }
        return new Security(mode, psk, staticKey, List.copyOf(list));
    }

    /**
     * The mode.
     *
     * @return the mode
     */
    public Mode mode() {
        return mode;
    }

    /**
     * The pre-shared key.
     *
     * @return a copy of it, or null
     */
    public byte[] preSharedKey() {
        return psk == null ? null : psk.clone();
    }

    /**
     * This end's static key pair.
     *
     * @return it, or null
     */
    public KeyPair staticKey() {
        return staticKey;
    }

    /**
     * The trusted peers' public keys.
     *
     * @return them, empty when any peer is accepted
     */
    public List<PublicKey> peerKeys() {
        return peerKeys;
    }

    private void requireProtected() {
        if (mode == Mode.NONE) {
            throw new DetException(Errno.EINVAL, "keys need mode AUTH or ENCRYPT");
        }
    }

    private static boolean isX25519(final PublicKey key) {
        return key instanceof XECPublicKey xec && xec.getParams() instanceof java.security.spec.NamedParameterSpec n
            && "X25519".equalsIgnoreCase(n.getName());
    }

    @Override
    public String toString() {
        return "Security[" + mode + (psk != null ? ", psk" : "") + (staticKey != null ? ", static key" : "")
            + (peerKeys.isEmpty() ? "" : ", " + peerKeys.size() + " peer key(s)") + "]";
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof Security s && s.mode == mode && Arrays.equals(s.psk, psk)
            && java.util.Objects.equals(s.staticKey, staticKey) && s.peerKeys.equals(peerKeys);
    }

    @Override
    public int hashCode() {
        return mode.hashCode() * 31 + Arrays.hashCode(psk);
    }
}
