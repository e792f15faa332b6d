package io.jdet;

import io.jdet.internal.protocol.FrameSeal;
import io.jdet.internal.verbs.NicImpl;
import io.jdet.internal.wire.Frame;
import io.jdet.testing.Loopback;
import io.jdet.testing.Pcapng;
import io.jdet.testing.Tests;
import io.jdet.testing.VethPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Connections protected by {@link Security}: every verb over AUTH and ENCRYPT (fabric and UDP), payload hidden from
 * a capture, injected, forged and replayed frames dropped, handshake mismatches refused, faults survived.
 */
@Timeout(120)
class SecureConnectionTest {
    private static final int SERVICE = 0x5EC;
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final byte[] PSK = "a pre-shared key of 32 bytes....".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    @TempDir
    Path dir;

    /** Sets both connection managers and connects A (requester) to B (acceptor) through them. */
    private static void connect(final Loopback pair, final Security a, final Security b) {
        pair.nicA.connectionManager().security(a);
        pair.nicB.connectionManager().security(b);
        final CompletableFuture<Void> accepted;
        try (ConnectionListener listener = pair.nicB.connectionManager().listen(SERVICE)) {
            accepted = CompletableFuture.runAsync(() -> listener.take(10_000).accept(pair.qpB, null, 10_000));
            try {
                pair.nicA.connectionManager().connect(pair.nicB.address(), SERVICE, pair.qpA, null, 10_000);
            } catch (final RuntimeException refused) {
                listener.close(); // a refused request never reaches the listener: its take ends here
                try {
                    accepted.join();
                } catch (final CompletionException acceptorFailedToo) {
                    refused.addSuppressed(acceptorFailedToo.getCause());
                }
                throw refused;
            }
        }
        try {
            accepted.join();
        } catch (final CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    private static Loopback pair(final Configuration configuration, final String nic) {
        return Loopback.open(new Loopback.Options().configuration(configuration).connect(false).nic(nic)
            .bufferBytes(1 << 20));
    }

    /** Sends, writes (with immediate), reads and both atomics, checking every byte; a multi-frame message too. */
    private static void everyVerb(final Loopback pair) {
        Tests.fill(pair.bufA.asSlice(0, 256 * 1024), 7);
        pair.qpB.recv(1, sge(pair.mrB, 0, 200_000), 1);
        pair.qpA.send(2, sge(pair.mrA, 0, 150_000), 1, WrFlags.IMMEDIATE, 0x1234);
        Tests.expectSuccess(pair.cqA, 1);
        final WorkCompletion got = Tests.expectSuccess(pair.cqB, 1).getFirst();
        assertEquals(150_000, got.length());
        assertEquals(0x1234, got.immediate());
        Tests.assertSameBytes(pair.bufA.asSlice(0, 150_000), pair.bufB.asSlice(0, 150_000));

        pair.qpA.write(3, sge(pair.mrA, 1000, 70_000), 1, pair.mrB.address() + 300_000, pair.mrB.rKey(), 0, 0);
        Tests.expectSuccess(pair.cqA, 1);
        Tests.assertSameBytes(pair.bufA.asSlice(1000, 70_000), pair.bufB.asSlice(300_000, 70_000));

        Tests.fill(pair.bufB.asSlice(500_000, 90_000), 11);
        pair.qpA.read(4, sge(pair.mrA, 500_000, 90_000), 1, pair.mrB.address() + 500_000, pair.mrB.rKey(), 0);
        Tests.expectSuccess(pair.cqA, 1);
        Tests.assertSameBytes(pair.bufB.asSlice(500_000, 90_000), pair.bufA.asSlice(500_000, 90_000));

        pair.bufB.set(LE_LONG, 800_000, 40);
        pair.qpA.fetchAdd(5, 2, new DataSegment().set(pair.mrA, 800_000, 8), pair.mrB.address() + 800_000,
            pair.mrB.rKey(), 0);
        Tests.expectSuccess(pair.cqA, 1);
        assertEquals(40, pair.bufA.get(LE_LONG, 800_000));
        pair.qpA.compExch(6, 42, 99, new DataSegment().set(pair.mrA, 800_008, 8), pair.mrB.address() + 800_000,
            pair.mrB.rKey(), 0);
        Tests.expectSuccess(pair.cqA, 1);
        assertEquals(42, pair.bufA.get(LE_LONG, 800_008));
        assertEquals(99, pair.bufB.get(LE_LONG, 800_000));
    }

    private static long counter(final Nic nic, final String name) {
        return nic.counters().getOrDefault(name, 0L);
    }

    @ParameterizedTest
    @EnumSource(value = Security.Mode.class, names = {"AUTH", "ENCRYPT"})
    void everyVerbWorksOnTheFabric(final Security.Mode mode) {
        try (Loopback pair = pair(new Configuration(), null)) {
            connect(pair, Security.of(mode), Security.of(mode));
            everyVerb(pair);
            assertEquals(0, counter(pair.nicA, "rx.seal.bad_tag") + counter(pair.nicB, "rx.seal.bad_tag"));
        }
    }

    @ParameterizedTest
    @EnumSource(value = Security.Mode.class, names = {"AUTH", "ENCRYPT"})
    void everyVerbWorksOverUdpWithKeys(final Security.Mode mode) throws Exception {
        final KeyPairGenerator g = KeyPairGenerator.getInstance("X25519");
        final KeyPair a = g.generateKeyPair();
        final KeyPair b = g.generateKeyPair();
        try (Loopback pair = pair(new Configuration(), "udp:127.0.0.1")) {
            connect(pair, Security.of(mode).withPreSharedKey(PSK).withStaticKey(a).withPeerKeys(b.getPublic()),
                Security.of(mode).withPreSharedKey(PSK).withStaticKey(b).withPeerKeys(a.getPublic()));
            everyVerb(pair);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Security.Mode.class, names = {"AUTH", "ENCRYPT"})
    void everyVerbWorksOverRawEthernet(final Security.Mode mode) {
        // The raw Ethernet link trims the padding of short frames to the length a frame declares: a protected
        // frame's trailer must count, or no protected frame survives its CRC (needs root, see VethPair).
        try (VethPair veth = new VethPair(1500);
             Loopback pair = Loopback.open(new Loopback.Options().connect(false).nics(veth.nicA(), veth.nicB())
                 .bufferBytes(1 << 20))) {
            connect(pair, Security.of(mode), Security.of(mode));
            everyVerb(pair);
            assertEquals(0, counter(pair.nicA, "link.rx.bad_crc") + counter(pair.nicB, "link.rx.bad_crc"));
            assertEquals(0, counter(pair.nicA, "rx.seal.bad_tag") + counter(pair.nicB, "rx.seal.bad_tag"));
        }
    }

    @Test
    void encryptedPayloadNeverAppearsInACapture() throws IOException {
        final byte[] marker = "SECRET-MARKER-0123456789".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertFalse(payloadCaptured(Security.Mode.ENCRYPT, marker), "the marker was in the clear under ENCRYPT");
        assertTrue(payloadCaptured(Security.Mode.AUTH, marker), "AUTH leaves the payload visible (test control)");
    }

    private boolean payloadCaptured(final Security.Mode mode, final byte[] marker) throws IOException {
        final Path file = dir.resolve(mode + ".pcapng");
        try (Loopback pair = pair(new Configuration().capture(file.toString()), null)) {
            connect(pair, Security.of(mode), Security.of(mode));
            for (int i = 0; i < 2000; i++) {
                MemorySegment.copy(marker, 0, pair.bufA, ValueLayout.JAVA_BYTE, (long) i * marker.length,
                    marker.length);
            }
            // 48,000 bytes: a frame sealed with AES-GCM (FrameSeal.GCM_MIN_PAYLOAD and more); the send below is small
            pair.qpA.write(1, sge(pair.mrA, 0, 2000 * marker.length), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            Tests.assertSameBytes(pair.bufA.asSlice(0, 2000 * marker.length),
                pair.bufB.asSlice(0, 2000 * marker.length));
            pair.qpB.recv(2, sge(pair.mrB, 10_000, 5000), 1);
            pair.qpA.send(3, sge(pair.mrA, 0, 100 * marker.length), 1, 0, 0);
            Tests.expectSuccess(pair.cqB, 1);
            Tests.assertSameBytes(pair.bufA.asSlice(0, 100 * marker.length),
                pair.bufB.asSlice(10_000, 100 * marker.length));
        }
        final byte[] all = Files.readAllBytes(file);
        for (int i = 0; i + marker.length <= all.length; i++) {
            if (Arrays.equals(all, i, i + marker.length, marker, 0, marker.length)) {
                return true;
            }
        }
        return false;
    }

    /** Hands a frame to a NIC as if it came from the connected peer's address (an on-path attacker). */
    private static void inject(final Loopback pair, final Nic victim, final Nic from, final byte[] frame) {
        final NicImpl nic = (NicImpl) victim;
        final MemorySegment f = MemorySegment.ofArray(frame.clone());
        f.set(ValueLayout.JAVA_INT_UNALIGNED, Frame.CRC_OFFSET, 0); // as the link hands it over after its check
        nic.lock.lock();
        try {
            nic.onFrame(f, frame.length, nic.link.resolve(from.address()));
        } finally {
            nic.lock.unlock();
        }
    }

    /**
     * The frames of an opcode this side sent, from a capture still being written: a read that meets a block half
     * written (the parser's checks fail on it) reads the file again.
     */
    private static List<byte[]> sent(final Path file, final int opcode, final int srcPort) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return sentSoFar(file, opcode, srcPort);
            } catch (final AssertionError halfWritten) {
                if (attempt == 100) {
                    throw halfWritten;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
        }
    }

    private static List<byte[]> sentSoFar(final Path file, final int opcode, final int srcPort) throws IOException {
        final List<byte[]> frames = new ArrayList<>();
        for (final Pcapng.Packet p : Pcapng.read(file).packets) {
            final ByteBuffer f = p.frame();
            if (p.outbound() && (f.get(Frame.OPCODE_OFFSET) & 0xFF) == opcode && (srcPort < 0 || p.srcPort() == srcPort)) {
                final byte[] bytes = new byte[f.remaining()];
                f.get(bytes);
                frames.add(bytes);
            }
        }
        return frames;
    }

    private static byte[] plain(final byte[] sealed) {
        final byte[] f = Arrays.copyOf(sealed, sealed.length - FrameSeal.TRAILER_LENGTH);
        final ByteBuffer b = ByteBuffer.wrap(f).order(ByteOrder.LITTLE_ENDIAN);
        b.putShort(Frame.FLAGS_OFFSET, (short) (b.getShort(Frame.FLAGS_OFFSET) & ~Frame.FLAG_PROTECTED));
        return f;
    }

    @ParameterizedTest
    @EnumSource(value = Security.Mode.class, names = {"AUTH", "ENCRYPT"})
    void forgedInjectedAndReplayedFramesAreDropped(final Security.Mode mode) throws IOException {
        final Path file = dir.resolve("onpath.pcapng");
        try (Loopback pair = pair(new Configuration().capture(file.toString()), null)) {
            connect(pair, Security.of(mode), Security.of(mode));
            Tests.fill(pair.bufA.asSlice(0, 4096), 3);
            pair.qpA.write(1, sge(pair.mrA, 0, 1000), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            // The capture is flushed as frames go by: small writes elsewhere until the first ones are in the file.
            Tests.await("the write's frames captured", () -> {
                pair.qpA.write(9, sge(pair.mrA, 0, 8), 1, pair.mrB.address() + 2000, pair.mrB.rKey(), 0, 0);
                Tests.expectSuccess(pair.cqA, 1);
                try {
                    return !sent(file, Frame.OP_WRITE, -1).isEmpty() && !sent(file, Frame.OP_ACK, -1).isEmpty();
                } catch (final IOException | RuntimeException partlyWritten) {
                    return false;
                }
            });
            final byte[] write = sent(file, Frame.OP_WRITE, -1).getFirst();
            final byte[] ack = sent(file, Frame.OP_ACK, -1).getLast();

            // A replayed write: dropped, B's memory keeps what was put there since.
            pair.bufB.asSlice(0, 1000).fill((byte) 0x77);
            inject(pair, pair.nicB, pair.nicA, write);
            assertEquals(1, counter(pair.nicB, "rx.seal.replayed"));
            // The same write with another packet number or an altered byte: wrong tag.
            final int pnAt = write.length - FrameSeal.PN_LENGTH - FrameSeal.STREAM_LENGTH;
            final byte[] renumbered = write.clone();
            ByteBuffer.wrap(renumbered).order(ByteOrder.LITTLE_ENDIAN).putLong(pnAt, 1L << 40);
            inject(pair, pair.nicB, pair.nicA, renumbered);
            final byte[] altered = write.clone();
            altered[Frame.HEADER_LENGTH + 5] ^= 1;
            ByteBuffer.wrap(altered).order(ByteOrder.LITTLE_ENDIAN).putLong(pnAt, 1L << 41);
            inject(pair, pair.nicB, pair.nicA, altered);
            // Another keystream block (ENCRYPT would decrypt with other bytes; AUTH has none): wrong tag too.
            final byte[] moved = write.clone();
            final ByteBuffer m = ByteBuffer.wrap(moved).order(ByteOrder.LITTLE_ENDIAN);
            m.putLong(pnAt, 1L << 42);
            m.putLong(pnAt + FrameSeal.PN_LENGTH, m.getLong(pnAt + FrameSeal.PN_LENGTH) + 1);
            inject(pair, pair.nicB, pair.nicA, moved);
            assertEquals(3, counter(pair.nicB, "rx.seal.bad_tag"));
            // An injected plain write with exact sequence numbers: missing protection.
            inject(pair, pair.nicB, pair.nicA, plain(write));
            assertEquals(1, counter(pair.nicB, "rx.seal.missing"));
            assertTrue(pair.bufB.asSlice(0, 1000).elements(ValueLayout.JAVA_BYTE).allMatch(x -> x.get(ValueLayout.JAVA_BYTE, 0) == 0x77),
                "no injected byte landed");

            // A forged ACK (covering requests never sent), sealed with a stale trailer or plain: dropped.
            final byte[] forgedAck = ack.clone();
            final ByteBuffer fa = ByteBuffer.wrap(forgedAck).order(ByteOrder.LITTLE_ENDIAN);
            fa.putInt(Frame.REQ_ACK_OFFSET, fa.getInt(Frame.REQ_ACK_OFFSET) + 5);
            fa.putLong(forgedAck.length - FrameSeal.PN_LENGTH - FrameSeal.STREAM_LENGTH, 1L << 43);
            final Nic ackVictim = pair.nicA;
            final Nic ackFrom = pair.nicB;
            final long badTags = counter(ackVictim, "rx.seal.bad_tag");
            inject(pair, ackVictim, ackFrom, forgedAck);
            inject(pair, ackVictim, ackFrom, plain(forgedAck));
            assertEquals(badTags + 1, counter(ackVictim, "rx.seal.bad_tag"));
            // A spoofed DISCONNECT and NAK built from the ACK (exact numbers, no valid tag).
            final byte[] disconnect = plain(ack);
            disconnect[Frame.OPCODE_OFFSET] = Frame.OP_DISCONNECT;
            inject(pair, ackVictim, ackFrom, disconnect);
            final byte[] nak = plain(ack);
            nak[Frame.OPCODE_OFFSET] = Frame.OP_NAK;
            inject(pair, ackVictim, ackFrom, nak);
            assertEquals(3, counter(ackVictim, "rx.seal.missing"));
            assertEquals(QpState.CONNECTED, pair.qpA.query().state());
            assertEquals(QpState.CONNECTED, pair.qpB.query().state());

            // A spoofed connection manager disconnect with the exact sequence number, but no MAC: ignored.
            final byte[] cmDisconnect = new byte[Frame.HEADER_LENGTH];
            final MemorySegment d = MemorySegment.ofArray(cmDisconnect);
            Frame.writeBase(d, Frame.OP_CM_DISCONNECT, 0, 0, 0, pair.qpA.number(),
                ((io.jdet.internal.verbs.QpImpl) pair.qpA).nextRequestSeq(), 0, 0, 0x1234);
            Frame.writeExtension(d, 0, 0, 0, pair.qpB.number(), 0, 0, 0);
            final long badTagsB = counter(pair.nicB, "rx.seal.bad_tag");
            inject(pair, pair.nicB, pair.nicA, cmDisconnect);
            assertEquals(badTagsB + 1, counter(pair.nicB, "rx.seal.bad_tag"));
            assertEquals(QpState.CONNECTED, pair.qpB.query().state());

            // The connection still carries data, every byte right.
            Tests.fill(pair.bufA.asSlice(0, 50_000), 5);
            pair.qpA.write(2, sge(pair.mrA, 0, 50_000), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
            Tests.expectSuccess(pair.cqA, 1);
            Tests.assertSameBytes(pair.bufA.asSlice(0, 50_000), pair.bufB.asSlice(0, 50_000));
            // And the real, authenticated disconnect ends it at both ends.
            pair.nicA.connectionManager().disconnect(pair.qpA, 5_000);
            Loopback.awaitState(pair.qpB, QpState.IDLE);
            assertEquals(QpState.IDLE, pair.qpA.query().state());
        }
    }

    @Test
    void mismatchedModesAreRefused() {
        for (final Security[] ab : new Security[][] {
            {Security.of(Security.Mode.ENCRYPT), Security.NONE},
            {Security.NONE, Security.of(Security.Mode.AUTH)},
            {Security.of(Security.Mode.AUTH), Security.of(Security.Mode.ENCRYPT)}}) {
            try (Loopback pair = pair(new Configuration(), null)) {
                final DetException e = assertThrows(DetException.class, () -> connect(pair, ab[0], ab[1]));
                assertEquals(Errno.ECONNREFUSED, e.errno(), e.getMessage());
                assertEquals(QpState.IDLE, pair.qpA.query().state());
            }
        }
    }

    @Test
    void spoofedRejectCannotFailAConnectWithAPreSharedKey() throws Exception {
        final Path file = dir.resolve("reject.pcapng");
        try (Loopback pair = pair(new Configuration().capture(file.toString()), null)) {
            final Security s = Security.of(Security.Mode.AUTH).withPreSharedKey(PSK);
            pair.nicA.connectionManager().security(s);
            pair.nicB.connectionManager().security(s);
            try (ConnectionListener listener = pair.nicB.connectionManager().listen(SERVICE)) {
                final CompletableFuture<Void> connected = CompletableFuture.runAsync(() -> pair.nicA
                    .connectionManager().connect(pair.nicB.address(), SERVICE, pair.qpA, null, 20_000));
                final ConnectionRequest request = listener.take(10_000);
                // The attacker sees the request (its retries pass the capture while the listener waits).
                Tests.await("the request captured", () -> {
                    try {
                        return !sent(file, Frame.OP_CM_REQUEST, -1).isEmpty();
                    } catch (final IOException | RuntimeException partlyWritten) {
                        return false;
                    }
                });
                final int id = Frame.msgId(MemorySegment.ofArray(sent(file, Frame.OP_CM_REQUEST, -1).getFirst()));
                // A REJECT with the right id from the listener's address: without a MAC, then with a made-up one.
                inject(pair, pair.nicA, pair.nicB, reject(id, null));
                inject(pair, pair.nicA, pair.nicB, reject(id, new byte[32]));
                assertEquals(2, counter(pair.nicA, "cm.reject_unauthenticated"));
                request.accept(pair.qpB, null, 10_000);
                connected.get(20, java.util.concurrent.TimeUnit.SECONDS);
                assertEquals(QpState.CONNECTED, pair.qpA.query().state());
            }
        }
    }

    @Test
    void aListenerWithTheKeyStillRefusesOneWithoutItIsNotBelieved() {
        final Security s = Security.of(Security.Mode.AUTH).withPreSharedKey(PSK);
        try (Loopback pair = pair(new Configuration(), null)) {
            pair.nicA.connectionManager().security(s);
            pair.nicB.connectionManager().security(s);
            // No listener on the service: the refusal carries the listener's MAC and ends the connect at once.
            final DetException refused = assertThrows(DetException.class, () -> pair.nicA.connectionManager()
                .connect(pair.nicB.address(), SERVICE + 1, pair.qpA, null, 10_000));
            assertEquals(Errno.ECONNREFUSED, refused.errno(), refused.getMessage());
            assertEquals(0, counter(pair.nicA, "cm.reject_unauthenticated"));
            // A plain listener cannot prove its refusal: the requester waits for its timeout instead.
            pair.nicB.connectionManager().security(Security.NONE);
            final DetException waited = assertThrows(DetException.class, () -> pair.nicA.connectionManager()
                .connect(pair.nicB.address(), SERVICE + 1, pair.qpA, null, 1_500));
            assertEquals(Errno.ETIMEDOUT, waited.errno(), waited.getMessage());
            assertTrue(counter(pair.nicA, "cm.reject_unauthenticated") >= 1);
        }
    }

    /** A CM_REJECT as an attacker would make it: reason 1, and a MAC block when one is given. */
    private static byte[] reject(final int id, final byte[] mac) {
        final int n = mac == null ? 0 : mac.length;
        final byte[] frame = new byte[Frame.HEADER_LENGTH + n];
        final MemorySegment f = MemorySegment.ofArray(frame);
        Frame.writeBase(f, Frame.OP_CM_REJECT, mac == null ? 0 : Frame.FLAG_PROTECTED, n, 0, 0, 0, 0, 0, id);
        Frame.writeExtension(f, 0, 0, 0, SERVICE, 1, 0, 0);
        if (mac != null) {
            System.arraycopy(mac, 0, frame, Frame.HEADER_LENGTH, n);
        }
        return frame;
    }

    @Test
    void wrongPreSharedKeyFailsBothSides() {
        final byte[] other = PSK.clone();
        other[0] ^= 1;
        try (Loopback pair = pair(new Configuration(), null)) {
            final DetException e = assertThrows(DetException.class, () -> connect(pair,
                Security.of(Security.Mode.AUTH).withPreSharedKey(PSK),
                Security.of(Security.Mode.AUTH).withPreSharedKey(other)));
            assertEquals(Errno.EACCES, e.errno(), e.getMessage());
            assertTrue(counter(pair.nicA, "cm.auth_failed") + counter(pair.nicB, "cm.auth_failed") >= 1);
            assertFalse(pair.qpA.query().state() == QpState.CONNECTED);
        }
    }

    @Test
    void wrongStaticKeysFailTheConnect() throws Exception {
        final KeyPairGenerator g = KeyPairGenerator.getInstance("X25519");
        final KeyPair client = g.generateKeyPair();
        final KeyPair server = g.generateKeyPair();
        final KeyPair intruder = g.generateKeyPair();
        // The requester expects the server's key; a man in the middle presents its own.
        try (Loopback pair = pair(new Configuration(), null)) {
            final DetException e = assertThrows(DetException.class, () -> connect(pair,
                Security.of(Security.Mode.ENCRYPT).withStaticKey(client).withPeerKeys(server.getPublic()),
                Security.of(Security.Mode.ENCRYPT).withStaticKey(intruder)));
            assertEquals(Errno.EACCES, e.errno(), e.getMessage());
        }
        // The acceptor trusts only the client's key; the intruder's request is refused.
        try (Loopback pair = pair(new Configuration(), null)) {
            final DetException e = assertThrows(DetException.class, () -> connect(pair,
                Security.of(Security.Mode.ENCRYPT).withStaticKey(intruder),
                Security.of(Security.Mode.ENCRYPT).withStaticKey(server).withPeerKeys(client.getPublic())));
            assertEquals(Errno.EACCES, e.errno(), e.getMessage());
        }
    }

    @Test
    void securityRejectsBadKeys() {
        assertThrows(DetException.class, () -> Security.NONE.withPreSharedKey(PSK));
        assertThrows(DetException.class, () -> Security.of(Security.Mode.AUTH).withPreSharedKey(new byte[8]));
        assertThrows(IllegalArgumentException.class, () -> Security.of(null));
        assertInstanceOf(Security.class, new Configuration().security(Security.of(Security.Mode.AUTH)).conclude()
            .security());
    }

    @Test
    void faultsStillDeliverExactlyOnceUnderEncrypt() {
        final Configuration faulty = new Configuration().faults(new FaultPlan(0.05, 0.05, 0.05, 0.01, 9))
            .minRtoUs(300).maxRtoUs(10_000).rnrRetryCount(1_000_000).rnrDelayUs(200);
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(faulty).connect(false)
            .bufferBytes(1 << 20).depth(32, 32).maxOr(8).maxIr(8))) {
            connect(pair, Security.of(Security.Mode.ENCRYPT), Security.of(Security.Mode.ENCRYPT));
            pair.bufB.set(LE_LONG, 0, 0);
            final int adds = 200;
            for (int i = 0; i < adds; i += 8) {
                for (int j = 0; j < 8; j++) {
                    pair.qpA.fetchAdd(i + j, 1, new DataSegment().set(pair.mrA, 8L * (i + j), 8), pair.mrB.address(),
                        pair.mrB.rKey(), 0);
                }
                Tests.expectSuccess(pair.cqA, 8);
            }
            assertEquals(adds, pair.bufB.get(LE_LONG, 0), "every add applied exactly once");
            Tests.fill(pair.bufA.asSlice(100_000, 300_000), 13);
            pair.qpB.recv(1, sge(pair.mrB, 100_000, 300_000), 1);
            pair.qpA.send(2, sge(pair.mrA, 100_000, 300_000), 1, 0, 0);
            Tests.expectSuccess(pair.cqB, 1);
            Tests.assertSameBytes(pair.bufA.asSlice(100_000, 300_000), pair.bufB.asSlice(100_000, 300_000));
            final Map<String, Long> a = pair.nicA.counters();
            assertTrue(a.getOrDefault("rx.seal.replayed", 0L) + pair.nicB.counters().getOrDefault("rx.seal.replayed",
                0L) > 0, "duplicated frames met the replay window");
        }
    }
}
