package io.jdet.internal.cm;

import io.jdet.Security;
import io.jdet.internal.protocol.FrameSeal;
import io.jdet.internal.verbs.NicImpl;

import javax.crypto.KDF;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.HKDFParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Arrays;

/**
 * One side of a protected connection's key agreement, Noise-like (see {@code docs/PROTOCOL.md}): each side sends a
 * fresh ephemeral X25519 public key and, if it has one, its static public key; both derive, with HKDF-SHA256 salted
 * by the pre-shared key, the keys of both directions and two confirmation keys from the Diffie-Hellman results
 * (ephemeral-ephemeral, and ephemeral-static for each static key present) and a hash of the whole transcript. The
 * acceptor proves its keys with a MAC in its ACCEPT, the requester with a MAC in its READY. Control path: allocates
 * freely.
 */
final class CmHandshake {
    /** Bytes of a key-exchange block: mode, flags, 2 reserved, ephemeral key, static key (0s if none). */
    static final int BLOCK_LENGTH = 68;
    /** Bytes of a confirmation MAC (HMAC-SHA256). */
    static final int MAC_LENGTH = 32;
    private static final int KEY_LENGTH = 32;
    private static final int HAS_STATIC = 1;
    private static final byte[] LABEL = "jdet handshake v2".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REJECT_LABEL = "jdet reject v1".getBytes(StandardCharsets.US_ASCII);

    private final Security security;
    /** Made when first needed ({@link #block}, {@link #derive}): a request refused never pays for a key pair. */
    private KeyPair ephemeral;
    private byte[] peerEphemeral;
    private byte[] peerStatic;
    private byte[] clientToServer;
    private byte[] serverToClient;
    private byte[] serverConfirm;
    private byte[] clientConfirm;
    private byte[] controlKey;
    private byte[] transcript;

    CmHandshake(final Security security) {
        this.security = security;
    }

    /**
     * This side's ephemeral key pair, generated on first use: an X25519 key generation costs about 150 µs, which a
     * listener must not spend on requests it refuses (per-source limit, backlog, untrusted key) before
     * {@code accept} calls for it.
     */
    private KeyPair ephemeral() {
        if (ephemeral == null) {
            try {
                ephemeral = KeyPairGenerator.getInstance("X25519").generateKeyPair();
            } catch (final GeneralSecurityException e) {
                throw new IllegalStateException("the JDK lacks X25519", e);
            }
        }
        return ephemeral;
    }

    /** @return the mode this side asks for */
    Security.Mode mode() {
        return security.mode();
    }

    /** @return this side's pre-shared key, or null */
    byte[] preSharedKey() {
        return security.preSharedKey();
    }

    /**
     * The MAC a listener with a pre-shared key puts on a CM_REJECT of a protected request, so that the requester
     * (holding the same key) can tell it from one an off-path or on-path attacker made up: HMAC-SHA256(PSK,
     * "jdet reject v1" ‖ the request's key-exchange block ‖ id ‖ service ‖ reason ‖ private data), integers 32-bit
     * little-endian. The block's fresh ephemeral key ties it to this one request. Control path: allocates.
     *
     * @param psk          the pre-shared key
     * @param requestBlock the key-exchange block the request carried
     * @param id           the connection id
     * @param serviceId    the service
     * @param reason       the reject reason
     * @param privateData  the reject's private data
     * @return the 32-byte MAC
     */
    static byte[] rejectMac(final byte[] psk, final byte[] requestBlock, final int id, final int serviceId,
                            final int reason, final byte[] privateData) {
        final ByteBuffer b = ByteBuffer.allocate(REJECT_LABEL.length + requestBlock.length + 12 + privateData.length)
            .order(ByteOrder.LITTLE_ENDIAN);
        b.put(REJECT_LABEL).put(requestBlock).putInt(id).putInt(serviceId).putInt(reason).put(privateData);
        try {
            final Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(psk, "HmacSHA256"));
            return m.doFinal(b.array());
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HmacSHA256", e);
        }
    }

    /**
     * Whether a CM_REJECT's MAC is the one {@link #rejectMac} gives for this side's request.
     *
     * @param mac the MAC the REJECT carried, or null when it carried none
     * @return true only for the right MAC (compared in constant time)
     */
    static boolean rejectMacValid(final byte[] psk, final byte[] requestBlock, final int id, final int serviceId,
                                  final int reason, final byte[] privateData, final byte[] mac) {
        return mac != null
            && MessageDigest.isEqual(mac, rejectMac(psk, requestBlock, id, serviceId, reason, privateData));
    }

    /** @return this side's key-exchange block */
    byte[] block() {
        final ByteBuffer b = ByteBuffer.allocate(BLOCK_LENGTH);
        b.put((byte) security.mode().ordinal());
        b.put((byte) (security.staticKey() != null ? HAS_STATIC : 0));
        b.put((byte) 0).put((byte) 0);
        b.put(encode(ephemeral().getPublic()));
        b.put(security.staticKey() != null ? encode(security.staticKey().getPublic()) : new byte[KEY_LENGTH]);
        return b.array();
    }

    /**
     * The mode a peer's block asks for.
     *
     * @param block a block of {@link #BLOCK_LENGTH} bytes
     * @return the mode, or null if the byte names none
     */
    static Security.Mode modeOf(final byte[] block) {
        final int m = block[0];
        return m > 0 && m < Security.Mode.values().length ? Security.Mode.values()[m] : null;
    }

    /**
     * Takes the peer's block: its keys, and whether its static key is one this side trusts.
     *
     * @param block the peer's block
     * @return null if acceptable, else why not
     */
    String takePeer(final byte[] block) {
        if (modeOf(block) != security.mode()) {
            return "the peer asks for " + modeOf(block) + ", this side for " + security.mode();
        }
        peerEphemeral = Arrays.copyOfRange(block, 4, 4 + KEY_LENGTH);
        peerStatic = (block[1] & HAS_STATIC) != 0 ? Arrays.copyOfRange(block, 36, 36 + KEY_LENGTH) : null;
        if (!security.peerKeys().isEmpty()) {
            if (peerStatic == null) {
                return "the peer presented no static key";
            }
            boolean trusted = false;
            for (final PublicKey k : security.peerKeys()) {
                trusted |= MessageDigest.isEqual(encode(k), peerStatic);
            }
            if (!trusted) {
                return "the peer's static key is not a trusted one";
            }
        }
        return null;
    }

    /**
     * Derives every key from the transcript (both blocks, then the connection's fields in a fixed order).
     *
     * @param client        whether this side is the requester
     * @param transcriptTail the connection's fields, as {@link #fields} writes them
     * @return null on success, else why it failed (a peer key of small order)
     */
    String derive(final boolean client, final byte[] transcriptTail) {
        try {
            final byte[] mine = block();
            final ByteArrayOutputStream t = new ByteArrayOutputStream();
            t.writeBytes(LABEL);
            t.writeBytes(client ? mine : peerBlock());
            t.writeBytes(client ? peerBlock() : mine);
            t.writeBytes(transcriptTail);
            transcript = MessageDigest.getInstance("SHA-256").digest(t.toByteArray());
            final ByteArrayOutputStream ikm = new ByteArrayOutputStream();
            ikm.writeBytes(dh(ephemeral().getPrivate(), peerEphemeral));
            final byte[] serverStatic = client ? peerStatic : ownStatic();
            final byte[] clientStatic = client ? ownStatic() : peerStatic;
            if (serverStatic != null) { // es: the requester's ephemeral with the acceptor's static key
                ikm.writeBytes(client ? dh(ephemeral().getPrivate(), serverStatic)
                    : dh(security.staticKey().getPrivate(), peerEphemeral));
            }
            if (clientStatic != null) { // se: the requester's static key with the acceptor's ephemeral
                ikm.writeBytes(client ? dh(security.staticKey().getPrivate(), peerEphemeral)
                    : dh(ephemeral().getPrivate(), clientStatic));
            }
            final byte[] psk = security.preSharedKey();
            final byte[] salt = psk == null ? new byte[] {0} : concat(new byte[] {1}, psk);
            final KDF hkdf = KDF.getInstance("HKDF-SHA256");
            final SecretKey prk = hkdf.deriveKey("Generic",
                HKDFParameterSpec.ofExtract().addIKM(ikm.toByteArray()).addSalt(salt).extractOnly());
            final int keyLength = FrameSeal.KEY_LENGTH; // AES-128 key, Poly1305 r, AES-128-GCM key; both modes
            clientToServer = expand(hkdf, prk, "c2s key", keyLength);
            serverToClient = expand(hkdf, prk, "s2c key", keyLength);
            serverConfirm = expand(hkdf, prk, "s confirm", 32);
            clientConfirm = expand(hkdf, prk, "c confirm", 32);
            controlKey = expand(hkdf, prk, "cm control", 32);
            return null;
        } catch (final GeneralSecurityException | IllegalStateException e) {
            return "key agreement failed: " + e.getMessage();
        }
    }

    /** @return the acceptor's confirmation MAC over the transcript */
    byte[] serverMac() {
        return mac(serverConfirm);
    }

    /** @return the requester's confirmation MAC over the transcript */
    byte[] clientMac() {
        return mac(clientConfirm);
    }

    /**
     * Whether a MAC from the peer is right.
     *
     * @param client whether this side is the requester (then the MAC is the acceptor's)
     * @param mac    the received MAC
     * @return true if it matches
     */
    boolean peerMacValid(final boolean client, final byte[] mac) {
        return mac != null && MessageDigest.isEqual(client ? serverMac() : clientMac(), mac);
    }

    /**
     * The frame protection for this side's queue pair.
     *
     * @param client whether this side is the requester
     * @param nic    the NIC (its scratch memory and counters)
     * @return the seal
     */
    FrameSeal seal(final boolean client, final NicImpl nic) {
        return new FrameSeal(security.mode(), client ? clientToServer : serverToClient,
            client ? serverToClient : clientToServer, client, controlKey, nic.sealBuffers(), nic.counters);
    }

    /**
     * The connection's fields, in the transcript's order: service, connection id, both queue pairs, all four initial
     * sequence numbers, the cookie, both sides' read and atomic limits (the REQUEST's and the ACCEPT's operand 1:
     * max_or low, max_ir high; each side acts on the other's), both private data (length first).
     */
    static byte[] fields(final int serviceId, final int id, final int clientQp, final int serverQp,
                         final int clientReqIsn, final int clientRspIsn, final int serverReqIsn, final int serverRspIsn,
                         final long cookie, final long clientLimits, final long serverLimits, final byte[] clientData,
                         final byte[] serverData) {
        final ByteBuffer b = ByteBuffer.allocate(64 + clientData.length + serverData.length)
            .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(serviceId).putInt(id).putInt(clientQp).putInt(serverQp);
        b.putInt(clientReqIsn).putInt(clientRspIsn).putInt(serverReqIsn).putInt(serverRspIsn).putLong(cookie);
        b.putLong(clientLimits).putLong(serverLimits);
        b.putInt(clientData.length).put(clientData).putInt(serverData.length).put(serverData);
        return b.array();
    }

    private byte[] peerBlock() {
        final ByteBuffer b = ByteBuffer.allocate(BLOCK_LENGTH);
        b.put((byte) security.mode().ordinal()).put((byte) (peerStatic != null ? HAS_STATIC : 0));
        b.put((byte) 0).put((byte) 0).put(peerEphemeral);
        b.put(peerStatic != null ? peerStatic : new byte[KEY_LENGTH]);
        return b.array();
    }

    private byte[] ownStatic() {
        return security.staticKey() == null ? null : encode(security.staticKey().getPublic());
    }

    private byte[] mac(final byte[] key) {
        try {
            final Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(key, "HmacSHA256"));
            return m.doFinal(transcript);
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("the JDK lacks HmacSHA256", e);
        }
    }

    private byte[] expand(final KDF hkdf, final SecretKey prk, final String label, final int length)
        throws GeneralSecurityException {
        return hkdf.deriveData(HKDFParameterSpec.expandOnly(prk,
            concat(label.getBytes(StandardCharsets.US_ASCII), transcript), length));
    }

    private static byte[] dh(final PrivateKey own, final byte[] peer) throws GeneralSecurityException {
        final KeyAgreement ka = KeyAgreement.getInstance("XDH");
        ka.init(own);
        ka.doPhase(decode(peer), true);
        return ka.generateSecret(); // the JDK refuses an all-zero result (a small-order peer key)
    }

    /** An X25519 public key as RFC 7748's 32 little-endian bytes. */
    static byte[] encode(final PublicKey key) {
        final byte[] be = ((XECPublicKey) key).getU().toByteArray();
        final byte[] le = new byte[KEY_LENGTH];
        for (int i = 0; i < Math.min(be.length, KEY_LENGTH + 1); i++) {
            final int at = be.length - 1 - i;
            if (i < KEY_LENGTH) {
                le[i] = be[at];
            }
        }
        return le;
    }

    private static PublicKey decode(final byte[] le) throws GeneralSecurityException {
        final byte[] be = new byte[KEY_LENGTH + 1];
        for (int i = 0; i < KEY_LENGTH; i++) {
            be[KEY_LENGTH - i] = le[i];
        }
        be[1] &= 0x7F; // RFC 7748: the top bit is masked
        return KeyFactory.getInstance("XDH").generatePublic(
            new XECPublicKeySpec(NamedParameterSpec.X25519, new BigInteger(be)));
    }

    private static byte[] concat(final byte[] a, final byte[] b) {
        final byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
