package io.jdet.internal.cm;

import io.jdet.Security;
import org.junit.jupiter.api.Test;

import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The key agreement of a protected connection, both ends in one test: they agree only when their modes, pre-shared
 * keys, pinned static keys and transcripts agree.
 */
class CmHandshakeTest {
    private static final byte[] TAIL = CmHandshake.fields(1, 2, 3, 4, 5, 6, 7, 8, 9L, 11L, 12L, new byte[] {1, 2},
        new byte[] {3});
    private static final byte[] PSK = "sixteen byte psk".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private static KeyPair x25519() throws Exception {
        return KeyPairGenerator.getInstance("X25519").generateKeyPair();
    }

    /** Runs the exchange; whether each side accepts the other's confirmation. */
    private static boolean[] agree(final Security client, final Security server, final byte[] clientTail,
                                   final byte[] serverTail) {
        final CmHandshake c = new CmHandshake(client);
        final CmHandshake s = new CmHandshake(server);
        assertNull(s.takePeer(c.block()));
        assertNull(c.takePeer(s.block()));
        assertNull(c.derive(true, clientTail));
        assertNull(s.derive(false, serverTail));
        return new boolean[] {c.peerMacValid(true, s.serverMac()), s.peerMacValid(false, c.clientMac())};
    }

    private static boolean both(final boolean[] r) {
        assertEquals(r[0], r[1], "the two sides disagree about agreeing");
        return r[0];
    }

    @Test
    void equalSettingsAgreeInBothModes() {
        assertTrue(both(agree(Security.of(Security.Mode.AUTH), Security.of(Security.Mode.AUTH), TAIL, TAIL)));
        assertTrue(both(agree(Security.of(Security.Mode.ENCRYPT), Security.of(Security.Mode.ENCRYPT), TAIL, TAIL)));
    }

    @Test
    void aDifferentTranscriptOrPreSharedKeyDisagrees() {
        final Security auth = Security.of(Security.Mode.AUTH);
        final byte[] other = CmHandshake.fields(1, 2, 3, 4, 5, 6, 7, 8, 10L, 11L, 12L, new byte[] {1, 2},
            new byte[] {3});
        assertFalse(both(agree(auth, auth, TAIL, other)), "the cookie differs");
        final byte[] limits = CmHandshake.fields(1, 2, 3, 4, 5, 6, 7, 8, 9L, 11L, 13L, new byte[] {1, 2},
            new byte[] {3});
        assertFalse(both(agree(auth, auth, TAIL, limits)), "the acceptor's read and atomic limits differ");
        final Security psk = auth.withPreSharedKey(PSK);
        assertTrue(both(agree(psk, psk, TAIL, TAIL)));
        assertFalse(both(agree(psk, auth, TAIL, TAIL)), "only one side has the pre-shared key");
        final byte[] wrong = PSK.clone();
        wrong[15] ^= 1;
        assertFalse(both(agree(psk, auth.withPreSharedKey(wrong), TAIL, TAIL)));
    }

    @Test
    void staticKeysArePinnedAndMixedIntoTheKeys() throws Exception {
        final KeyPair serverKey = x25519();
        final KeyPair clientKey = x25519();
        final Security auth = Security.of(Security.Mode.AUTH);
        final Security server = auth.withStaticKey(serverKey).withPeerKeys(clientKey.getPublic());
        final Security client = auth.withStaticKey(clientKey).withPeerKeys(serverKey.getPublic());
        assertTrue(both(agree(client, server, TAIL, TAIL)), "mutual");
        assertTrue(both(agree(auth.withPeerKeys(serverKey.getPublic()), auth.withStaticKey(serverKey), TAIL, TAIL)),
            "only the server has a static key");
        assertTrue(both(agree(auth.withStaticKey(clientKey), auth, TAIL, TAIL)), "only the client has one");

        final CmHandshake pinning = new CmHandshake(auth.withPeerKeys(serverKey.getPublic(), x25519().getPublic()));
        assertNull(pinning.takePeer(new CmHandshake(auth.withStaticKey(serverKey)).block()), "any trusted key");
        assertNotNull(new CmHandshake(auth.withPeerKeys(serverKey.getPublic())).takePeer(
            new CmHandshake(auth.withStaticKey(x25519())).block()), "an untrusted static key is refused");
        assertNotNull(new CmHandshake(auth.withPeerKeys(serverKey.getPublic())).takePeer(
            new CmHandshake(auth).block()), "no static key where one is required");
    }

    @Test
    void aPinnedPublicKeyWithoutItsPrivateKeyDoesNotAgree() throws Exception {
        final KeyPair serverKey = x25519();
        final KeyPair clientKey = x25519();
        final KeyPair impostor = x25519();
        final Security auth = Security.of(Security.Mode.AUTH);
        final Security fakeServer = auth.withStaticKey(new KeyPair(serverKey.getPublic(), impostor.getPrivate()));
        assertFalse(both(agree(auth.withPeerKeys(serverKey.getPublic()), fakeServer, TAIL, TAIL)),
            "a server presenting the pinned key must hold its private key");
        final Security fakeClient = auth.withStaticKey(new KeyPair(clientKey.getPublic(), impostor.getPrivate()));
        assertFalse(both(agree(fakeClient, auth.withPeerKeys(clientKey.getPublic()), TAIL, TAIL)),
            "so must a client");
    }

    @Test
    void aBlockCarriesTheModeTheStaticKeyFlagAndBothPublicKeys() throws Exception {
        final KeyPair key = x25519();
        final byte[] plain = new CmHandshake(Security.of(Security.Mode.ENCRYPT)).block();
        assertEquals(CmHandshake.BLOCK_LENGTH, plain.length);
        assertEquals(Security.Mode.ENCRYPT.ordinal(), plain[0]);
        assertEquals(0, plain[1]);
        assertTrue(Arrays.equals(new byte[32], Arrays.copyOfRange(plain, 36, 68)), "no static key: zeros");
        assertFalse(Arrays.equals(new byte[32], Arrays.copyOfRange(plain, 4, 36)), "the ephemeral key");
        final byte[] withKey = new CmHandshake(Security.of(Security.Mode.AUTH).withStaticKey(key)).block();
        assertEquals(1, withKey[1]);
        assertArrayEquals(CmHandshake.encode(key.getPublic()), Arrays.copyOfRange(withKey, 36, 68));
        final java.math.BigInteger u = ((java.security.interfaces.XECPublicKey) key.getPublic()).getU();
        final byte[] le = CmHandshake.encode(key.getPublic());
        final byte[] be = new byte[33];
        for (int i = 0; i < 32; i++) {
            be[32 - i] = le[i];
        }
        assertEquals(u, new java.math.BigInteger(be), "the u-coordinate, little-endian (RFC 7748)");
    }

    @Test
    void onlyProtectedModesAreReadFromABlock() {
        final byte[] block = new byte[CmHandshake.BLOCK_LENGTH];
        for (int m = -2; m < 5; m++) {
            block[0] = (byte) m;
            final Security.Mode expected = m == 1 || m == 2 ? Security.Mode.values()[m] : null;
            assertEquals(expected, CmHandshake.modeOf(block), "mode byte " + m);
        }
        final CmHandshake auth = new CmHandshake(Security.of(Security.Mode.AUTH));
        assertNotNull(auth.takePeer(new CmHandshake(Security.of(Security.Mode.ENCRYPT)).block()), "modes differ");
    }

    @Test
    void aSmallOrderPeerKeyOrAMissingMacFails() {
        final CmHandshake c = new CmHandshake(Security.of(Security.Mode.AUTH));
        final byte[] zero = new byte[CmHandshake.BLOCK_LENGTH];
        zero[0] = (byte) Security.Mode.AUTH.ordinal();
        assertNull(c.takePeer(zero));
        assertNotNull(c.derive(true, TAIL), "an all-zero ephemeral key gives no shared secret");
        final CmHandshake s = new CmHandshake(Security.of(Security.Mode.AUTH));
        final CmHandshake c2 = new CmHandshake(Security.of(Security.Mode.AUTH));
        s.takePeer(c2.block());
        s.derive(false, TAIL);
        assertFalse(s.peerMacValid(false, null));
        assertFalse(s.peerMacValid(false, s.serverMac()), "the server's own confirmation is not the client's");
    }
}
