package io.jdet.internal.cm;

import io.jdet.Security;
import io.jdet.internal.protocol.Isn;
import org.junit.jupiter.api.Test;

import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The handshake's keys and MACs against the key schedule of {@code docs/PROTOCOL.md} section 14.1, computed here
 * from the specification (X25519, HKDF as RFC 5869 writes it, HMAC-SHA256) with the ephemeral private keys each
 * side drew: both sides agreeing is not enough, they must agree on what the protocol says. Catches a term left out
 * of the key material (the ephemeral-ephemeral one leaves keys made of public data only when no static or
 * pre-shared key is set), a transcript in another order or without its label, and a salt or label changed alike on
 * both sides.
 */
class CmHandshakeVectorTest {
    private static final byte[] PSK = "sixteen byte psk".getBytes(StandardCharsets.US_ASCII);

    private static KeyPair x25519() throws Exception {
        return KeyPairGenerator.getInstance("X25519").generateKeyPair();
    }

    private static Object field(final CmHandshake h, final String name) throws Exception {
        final Field f = CmHandshake.class.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(h);
    }

    private static byte[] dh(final PrivateKey own, final PublicKey peer) throws Exception {
        final KeyAgreement ka = KeyAgreement.getInstance("XDH");
        ka.init(own);
        ka.doPhase(peer, true);
        return ka.generateSecret();
    }

    private static byte[] hmac(final byte[] key, final byte[]... parts) throws Exception {
        final Mac m = Mac.getInstance("HmacSHA256");
        m.init(new SecretKeySpec(key, "HmacSHA256"));
        for (final byte[] p : parts) {
            m.update(p);
        }
        return m.doFinal();
    }

    private static byte[] cat(final byte[]... parts) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (final byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** HKDF-Expand (RFC 5869) of 32 bytes: one block, T(1) = HMAC(prk, info ‖ 0x01). */
    private static byte[] expand32(final byte[] prk, final String label, final byte[] th) throws Exception {
        return hmac(prk, label.getBytes(StandardCharsets.US_ASCII), th, new byte[] {1});
    }

    /** HKDF-Expand of 48 bytes (a frame key, 14.1): T(1) ‖ the first 16 bytes of T(2) = HMAC(prk, T(1) ‖ info ‖ 0x02). */
    private static byte[] expand48(final byte[] prk, final String label, final byte[] th) throws Exception {
        final byte[] t1 = expand32(prk, label, th);
        final byte[] t2 = hmac(prk, t1, label.getBytes(StandardCharsets.US_ASCII), th, new byte[] {2});
        return cat(t1, Arrays.copyOf(t2, 16));
    }

    /** The connection's fields as section 14.1 lists them, integers 32-bit little-endian. */
    private static byte[] specFields(final int service, final int id, final int reqQp, final int accQp,
                                     final int reqReqIsn, final int reqRspIsn, final int accReqIsn,
                                     final int accRspIsn, final long cookie, final int reqMaxOr,
                                     final int reqMaxIr, final int accMaxOr, final int accMaxIr,
                                     final byte[] reqData, final byte[] accData) {
        final ByteBuffer b = ByteBuffer.allocate(64 + reqData.length + accData.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(service).putInt(id).putInt(reqQp).putInt(accQp).putInt(reqReqIsn).putInt(reqRspIsn)
            .putInt(accReqIsn).putInt(accRspIsn).putLong(cookie).putInt(reqMaxOr).putInt(reqMaxIr).putInt(accMaxOr)
            .putInt(accMaxIr).putInt(reqData.length).put(reqData).putInt(accData.length).put(accData);
        return b.array();
    }

    /** Runs both sides and checks every key and MAC against the specification. */
    private static void check(final Security requester, final Security acceptor, final byte[] tail)
        throws Exception {
        final CmHandshake c = new CmHandshake(requester);
        final CmHandshake s = new CmHandshake(acceptor);
        final byte[] cBlock = c.block();
        final byte[] sBlock = s.block();
        assertNull(s.takePeer(cBlock));
        assertNull(c.takePeer(sBlock));
        assertNull(c.derive(true, tail));
        assertNull(s.derive(false, tail));

        final KeyPair ec = (KeyPair) field(c, "ephemeral");
        final KeyPair es = (KeyPair) field(s, "ephemeral");
        final byte[] th = MessageDigest.getInstance("SHA-256").digest(
            cat("jdet handshake v2".getBytes(StandardCharsets.US_ASCII), cBlock, sBlock, tail));
        final ByteArrayOutputStream ikm = new ByteArrayOutputStream();
        ikm.writeBytes(dh(ec.getPrivate(), es.getPublic()));
        if (acceptor.staticKey() != null) {
            ikm.writeBytes(dh(ec.getPrivate(), acceptor.staticKey().getPublic()));
        }
        if (requester.staticKey() != null) {
            ikm.writeBytes(dh(requester.staticKey().getPrivate(), es.getPublic()));
        }
        final byte[] salt = acceptor.preSharedKey() == null ? new byte[] {0}
            : cat(new byte[] {1}, acceptor.preSharedKey());
        final byte[] prk = hmac(salt, ikm.toByteArray());
        final byte[] c2s = expand48(prk, "c2s key", th);
        final byte[] s2c = expand48(prk, "s2c key", th);
        final byte[] serverMac = hmac(expand32(prk, "s confirm", th), th);
        final byte[] clientMac = hmac(expand32(prk, "c confirm", th), th);

        for (final CmHandshake side : new CmHandshake[] {c, s}) {
            assertArrayEquals(th, (byte[]) field(side, "transcript"), "th");
            assertArrayEquals(c2s, (byte[]) field(side, "clientToServer"), "k_c2s");
            assertArrayEquals(s2c, (byte[]) field(side, "serverToClient"), "k_s2c");
            assertArrayEquals(serverMac, side.serverMac(), "the acceptor's MAC in CM_ACCEPT");
            assertArrayEquals(clientMac, side.clientMac(), "the requester's MAC in CM_READY");
        }
    }

    private static final byte[] TAIL = specFields(4711, 0x01020304, 0x55, 0x66, 1, 2, 3, 4, 0x1122334455667788L,
        4, 3, 2, 1, new byte[] {9, 8, 7}, new byte[] {6});

    @Test
    void ephemeralKeysOnlyGiveTheSpecifiedKeys() throws Exception {
        check(Security.of(Security.Mode.AUTH), Security.of(Security.Mode.AUTH), TAIL);
        check(Security.of(Security.Mode.ENCRYPT), Security.of(Security.Mode.ENCRYPT), TAIL);
    }

    @Test
    void aPreSharedKeySaltsTheSpecifiedKeys() throws Exception {
        final Security psk = Security.of(Security.Mode.ENCRYPT).withPreSharedKey(PSK);
        check(psk, psk, TAIL);
    }

    @Test
    void eachStaticKeyAddsItsTermToTheSpecifiedKeys() throws Exception {
        final KeyPair requester = x25519();
        final KeyPair acceptor = x25519();
        final Security auth = Security.of(Security.Mode.AUTH);
        check(auth.withStaticKey(requester), auth.withStaticKey(acceptor), TAIL);
        check(auth.withPeerKeys(acceptor.getPublic()), auth.withStaticKey(acceptor), TAIL);
        check(auth.withStaticKey(requester), auth.withPeerKeys(requester.getPublic()), TAIL);
    }

    @Test
    void theFieldsAreWrittenAsSpecified() {
        final byte[] reqData = {9, 8, 7};
        final byte[] accData = {6};
        assertArrayEquals(specFields(4711, 0x01020304, 0x55, 0x66, 1, 2, 3, 4, 0x1122334455667788L, 4, 3, 2, 1, reqData,
            accData), CmHandshake.fields(4711, 0x01020304, 0x55, 0x66, 1, 2, 3, 4, 0x1122334455667788L,
            Isn.pack(4, 3), Isn.pack(2, 1), reqData, accData));
    }

    @Test
    void aRejectMacIsTheSpecifiedOneAndBindsEveryField() throws Exception {
        final byte[] block = new CmHandshake(Security.of(Security.Mode.AUTH)).block();
        final byte[] data = {1, 2, 3};
        final byte[] fields = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(7).putInt(4711)
            .putInt(CmImpl.REJECTED_BY_PEER).array();
        final byte[] mac = hmac(PSK, "jdet reject v1".getBytes(StandardCharsets.US_ASCII), block, fields, data);
        assertArrayEquals(mac, CmHandshake.rejectMac(PSK, block, 7, 4711, CmImpl.REJECTED_BY_PEER, data));
        assertTrue(CmHandshake.rejectMacValid(PSK, block, 7, 4711, CmImpl.REJECTED_BY_PEER, data, mac));
        assertFalse(CmHandshake.rejectMacValid(PSK, block, 7, 4711, CmImpl.REJECTED_BY_PEER, data, null));
        assertFalse(CmHandshake.rejectMacValid(PSK, block, 8, 4711, CmImpl.REJECTED_BY_PEER, data, mac), "id");
        assertFalse(CmHandshake.rejectMacValid(PSK, block, 7, 4712, CmImpl.REJECTED_BY_PEER, data, mac), "service");
        assertFalse(CmHandshake.rejectMacValid(PSK, block, 7, 4711, CmImpl.NO_LISTENER, data, mac), "reason");
        assertFalse(CmHandshake.rejectMacValid(PSK, block, 7, 4711, CmImpl.REJECTED_BY_PEER, new byte[] {1, 2},
            mac), "private data");
        final byte[] other = block.clone();
        other[10] ^= 1;
        assertFalse(CmHandshake.rejectMacValid(PSK, other, 7, 4711, CmImpl.REJECTED_BY_PEER, data, mac), "block");
        final byte[] psk2 = PSK.clone();
        psk2[0] ^= 1;
        assertFalse(CmHandshake.rejectMacValid(psk2, block, 7, 4711, CmImpl.REJECTED_BY_PEER, data, mac), "key");
    }
}
