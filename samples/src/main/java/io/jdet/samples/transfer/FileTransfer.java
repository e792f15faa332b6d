package io.jdet.samples.transfer;

import io.jdet.Access;
import io.jdet.ConnectionListener;
import io.jdet.ConnectionRequest;
import io.jdet.RemoteRegion;
import io.jdet.WcFlags;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.WrFlags;
import io.jdet.samples.Endpoint;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A file transfer by RDMA write. The server registers {@value #SLOTS} chunk buffers for remote writing and gives
 * the client their {@link RemoteRegion} in the connection manager's private data. The client writes the file into
 * them chunk by chunk, each an RDMA write with immediate (the immediate names the slot, so the server's receive
 * completes with the slot and the byte count); the server appends each chunk to the output file and returns the
 * slot with a small send, the client's credit to reuse it. A last send carries the length and the SHA-256 of the
 * file; with {@code --verify} the server hashes what it wrote and answers whether it matches.
 *
 * <pre>
 * java -cp ... io.jdet.samples.transfer.FileTransfer server udp:127.0.0.1:7200 received.bin
 * java -cp ... io.jdet.samples.transfer.FileTransfer client udp:127.0.0.1:7200 some.file [--verify]
 * </pre>
 */
public final class FileTransfer {
    /** The service id both ends agree on. */
    public static final int SERVICE = 0x4654;
    /** Chunk buffers at the server: the client may have this many writes in flight. */
    public static final int SLOTS = 4;
    /** The bytes of one chunk. */
    public static final int CHUNK = 256 * 1024;
    /** The longest wait for one step, in milliseconds. */
    static final long TIMEOUT_MS = 10_000;
    /** The longest wait for a client, in milliseconds: a person may start it by hand. */
    static final long CLIENT_WAIT_MS = 600_000;
    /** Bytes of a control message: a credit, the end of the file (length, SHA-256, verify flag) or a verdict. */
    static final int MESSAGE = 64;
    /** Receives each end keeps posted: one per chunk in flight, and one for the last message. */
    static final int RECEIVES = SLOTS + 1;

    private FileTransfer() {
    }

    /**
     * Runs one end.
     *
     * @param args {@code server <nic> <output file>} or {@code client <server address> <file> [--verify]}
     */
    public static void main(final String[] args) {
        if (args.length == 3 && args[0].equals("server")) {
            receive(args[1], Path.of(args[2]), System.out);
        } else if ((args.length == 3 || args.length == 4 && args[3].equals("--verify")) && args[0].equals("client")) {
            if (!send(args[1], Path.of(args[2]), args.length == 4, System.out)) {
                System.exit(1);
            }
        } else {
            System.err.println("usage: FileTransfer server <udp:address:port> <output file>\n"
                + "       FileTransfer client <udp:address:port> <file> [--verify]");
            System.exit(2);
        }
    }

    /**
     * The server: receives one file into {@code output}, then waits for the client to disconnect.
     *
     * @param nicName the NIC to listen on ({@code :0} for any free port)
     * @param output  the file to write
     * @param out     where it reports; the first line is {@code listening on <address>}
     * @return the bytes received
     */
    public static long receive(final String nicName, final Path output, final PrintStream out) {
        final int access = Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_WRITE;
        // The chunks, then a buffer per receive, then one per slot for the credits sent back.
        final long bytes = (long) SLOTS * CHUNK + (long) (RECEIVES + SLOTS) * MESSAGE;
        try (Endpoint end = new Endpoint(nicName, bytes, access, 2 * RECEIVES);
             ConnectionListener listener = end.nic.connectionManager().listen(SERVICE);
             FileChannel file = FileChannel.open(output, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                 StandardOpenOption.TRUNCATE_EXISTING)) {
            out.println("listening on " + end.nic.address());
            out.flush();
            final ConnectionRequest request = listener.take(CLIENT_WAIT_MS);
            for (int i = 0; i < RECEIVES; i++) {
                end.qp.recv(i, end.at(message(i), MESSAGE), 1); // a write with immediate consumes a receive too
            }
            final RemoteRegion chunks = new RemoteRegion(end.mr.address(), (long) SLOTS * CHUNK, end.mr.rKey());
            request.accept(end.qp, chunks.encode(), TIMEOUT_MS);
            final MessageDigest digest = sha256();
            long received = 0;
            while (true) {
                final WorkCompletion wc = end.next(TIMEOUT_MS);
                if (wc.type() != WcType.RECV) {
                    continue; // a credit went out
                }
                final int receive = (int) wc.id();
                if ((wc.flags() & WcFlags.IMMEDIATE) == 0) { // the last message: no more chunks
                    received = finish(end, receive, received, digest, request.remoteAddress(), out);
                    break;
                }
                final int slot = wc.immediate();
                final int length = wc.length();
                final ByteBuffer chunk = end.buffer.asSlice((long) slot * CHUNK, length).asByteBuffer();
                digest.update(chunk.duplicate());
                while (chunk.hasRemaining()) {
                    file.write(chunk);
                }
                received += length;
                end.qp.recv(receive, end.at(message(receive), MESSAGE), 1);
                final long credit = message(RECEIVES + slot);
                end.buffer.set(ValueLayout.JAVA_INT, credit, slot);
                end.qp.send(slot, end.at(credit, 4), 1, 0, 0); // the credit: the client may write this slot again
            }
            end.awaitDisconnect(CLIENT_WAIT_MS);
            return received;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Checks the client's last message against what arrived and, if asked, sends the verdict. */
    private static long finish(final Endpoint end, final int slot, final long received, final MessageDigest digest,
                               final String client, final PrintStream out) {
        final MemorySegment last = end.buffer.asSlice(message(slot), MESSAGE);
        final long length = last.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        final byte[] theirs = last.asSlice(8, 32).toArray(ValueLayout.JAVA_BYTE);
        final boolean verify = last.get(ValueLayout.JAVA_BYTE, 40) != 0;
        final byte[] ours = digest.digest();
        final boolean match = length == received && Arrays.equals(ours, theirs);
        out.println("received " + received + " bytes from " + client + ", sha-256 " + HexFormat.of().formatHex(ours)
            + (match ? "" : " (the client sent " + length + " bytes, sha-256 " + HexFormat.of().formatHex(theirs)
            + ")"));
        if (verify) {
            end.buffer.set(ValueLayout.JAVA_BYTE, message(slot), (byte) (match ? 1 : 0));
            MemorySegment.copy(ours, 0, end.buffer, ValueLayout.JAVA_BYTE, message(slot) + 1, ours.length);
            end.qp.send(SLOTS, end.at(message(slot), 1 + ours.length), 1, 0, 0);
        }
        return received;
    }

    /**
     * The client: writes a file into the server's chunk buffers and, with {@code verify}, waits for the server's
     * verdict on the SHA-256 of what it wrote.
     *
     * @param server the server's address, as it printed it
     * @param input  the file to send
     * @param verify whether to ask the server to check the file it wrote
     * @param out    where it reports
     * @return true unless the server found a mismatch
     */
    public static boolean send(final String server, final Path input, final boolean verify, final PrintStream out) {
        final long receives = (long) SLOTS * CHUNK; // the chunks, then a buffer per receive, then the last message
        final long last = receives + (long) RECEIVES * MESSAGE;
        try (Endpoint end = new Endpoint(Endpoint.nicNameFor(server), last + MESSAGE,
            Access.LOCAL_READ | Access.LOCAL_WRITE, 4 * RECEIVES);
             FileChannel file = FileChannel.open(input, StandardOpenOption.READ)) {
            for (int i = 0; i < RECEIVES; i++) {
                end.qp.recv(i, end.at(receives + (long) i * MESSAGE, MESSAGE), 1);
            }
            final long start = System.nanoTime();
            final RemoteRegion chunks = RemoteRegion.decode(end.nic.connectionManager().connect(server, SERVICE,
                end.qp, null, TIMEOUT_MS));
            final MessageDigest digest = sha256();
            // A slot is free again once its write completed here (the bytes are jdet's until then) and the
            // server's credit says it has stored the chunk: two events per use.
            final int[] busy = new int[SLOTS];
            long sent = 0;
            for (int slot = 0;; slot = (slot + 1) % SLOTS) {
                while (busy[slot] > 0) {
                    final WorkCompletion wc = end.next(TIMEOUT_MS);
                    if (wc.type() == WcType.RDMA_WRITE) {
                        busy[(int) wc.id()]--;
                    } else if (wc.type() == WcType.RECV) {
                        final long at = receives + wc.id() * MESSAGE;
                        busy[end.buffer.get(ValueLayout.JAVA_INT, at)]--;
                        end.qp.recv(wc.id(), end.at(at, MESSAGE), 1);
                    }
                }
                final ByteBuffer chunk = end.buffer.asSlice((long) slot * CHUNK, CHUNK).asByteBuffer();
                final int length = Math.max(0, file.read(chunk));
                if (length == 0) {
                    break;
                }
                digest.update(chunk.flip());
                end.qp.write(slot, end.at((long) slot * CHUNK, length), 1, chunks.address() + (long) slot * CHUNK,
                    chunks.rKey(), WrFlags.IMMEDIATE, slot);
                busy[slot] = 2;
                sent += length;
            }
            final byte[] hash = digest.digest();
            end.buffer.set(ValueLayout.JAVA_LONG_UNALIGNED, last, sent);
            MemorySegment.copy(hash, 0, end.buffer, ValueLayout.JAVA_BYTE, last + 8, hash.length);
            end.buffer.set(ValueLayout.JAVA_BYTE, last + 40, (byte) (verify ? 1 : 0));
            end.qp.send(RECEIVES, end.at(last, MESSAGE), 1, 0, 0);
            final boolean match = !verify || awaitVerdict(end, receives, hash, out);
            end.nic.connectionManager().disconnect(end.qp, TIMEOUT_MS);
            final double seconds = (System.nanoTime() - start) / 1e9;
            out.printf("sent %d bytes in %.3f s (%.1f MB/s), sha-256 %s%n", sent, seconds, sent / seconds / 1e6,
                HexFormat.of().formatHex(hash));
            return match;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Takes completions until the server's verdict arrives; credits still in flight are skipped. */
    private static boolean awaitVerdict(final Endpoint end, final long receives, final byte[] hash,
                                        final PrintStream out) {
        while (true) {
            final WorkCompletion wc = end.next(TIMEOUT_MS);
            if (wc.type() != WcType.RECV || wc.length() != 1 + hash.length) {
                continue;
            }
            final MemorySegment verdict = end.buffer.asSlice(receives + wc.id() * MESSAGE, wc.length());
            final boolean match = verdict.get(ValueLayout.JAVA_BYTE, 0) == 1
                && Arrays.equals(hash, verdict.asSlice(1).toArray(ValueLayout.JAVA_BYTE));
            out.println(match ? "verified: the server's copy has the same sha-256"
                : "VERIFY FAILED: the server's copy differs");
            return match;
        }
    }

    /** Where the server's control message {@code index} lies: after the chunks. */
    private static long message(final int index) {
        return (long) SLOTS * CHUNK + (long) index * MESSAGE;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (final NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
