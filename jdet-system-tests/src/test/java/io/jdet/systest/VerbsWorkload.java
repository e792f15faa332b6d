package io.jdet.systest;

import io.jdet.WcFlags;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;
import io.jdet.WrFlags;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.BitSet;
import java.util.List;

/**
 * Every verb between a client and a server endpoint, each byte and completion checked: sends of many sizes both
 * ways, RDMA writes followed by a send with immediate (the writes must be visible when it arrives), RDMA reads,
 * fetch-and-adds that must each return a distinct original value and add up exactly, a compare-and-swap chain
 * that must succeed step by step, and a write with immediate. Run the two roles in two threads or two processes;
 * the client needs the server buffer's address and remote key. A failed check throws {@link AssertionError}.
 */
final class VerbsWorkload {
    /** Buffer layout (both ends use the same one). */
    static final int BUFFER_BYTES = 8 << 20;
    static final long SEND_AREA = 0;
    static final long RECV_AREA = 2 << 20;
    static final long WRITE_AREA = 4 << 20;
    static final long READ_AREA = 6 << 20;
    static final long COUNTER = 7L << 20;
    static final long CHAIN = COUNTER + 8;
    static final long RESULTS = COUNTER + 4096;

    static final int[] SIZES = {0, 1, 7, 80, 1392, 1393, 4096, 65_427, 65_428, 100_000, 131_072};
    static final int MESSAGES = 60;
    static final int SLOT = 128 << 10;
    /** Receives each end keeps posted: twice the sends in flight, so no send finds the receiver unready. */
    static final int SLOTS = 16;
    static final int IN_FLIGHT = 8;
    static final int WRITES = 40;
    static final int WRITE_SIZE = 50_000;
    static final int READS = 12;
    static final int READ_SIZE = 90_000;
    static final int FETCH_ADDS = 200;
    static final int CHAIN_STEPS = 50;
    static final int WRITES_DONE_IMM = 0x0D0E;
    static final int WRITE_IMM = 0x1A2B3C4D;
    static final int DONE_IMM = 0x0E0D;
    static final long TIMEOUT_MS = 60_000;

    private VerbsWorkload() {
    }

    /**
     * The configuration both ends run with: defaults, except that a send finding no receive is retried for up to
     * about 10 s instead of 7 ms, because a cold JVM checking 128 KiB messages byte by byte can fall that far
     * behind in reposting receives (receiver-not-ready is flow control here, not an error).
     */
    static io.jdet.Configuration configuration() {
        return new io.jdet.Configuration().rnrRetryCount(10_000);
    }

    static int size(final int message) {
        return SIZES[message % SIZES.length];
    }

    static byte pattern(final int stream, final int message, final long at) {
        return (byte) (stream * 131 + message * 31 + at * 7 + (at >>> 8));
    }

    static void fill(final MemorySegment m, final long offset, final int length, final int stream, final int message) {
        for (int i = 0; i < length; i++) {
            m.set(ValueLayout.JAVA_BYTE, offset + i, pattern(stream, message, i));
        }
    }

    static void check(final MemorySegment m, final long offset, final int length, final int stream,
                      final int message, final String what) {
        for (int i = 0; i < length; i++) {
            if (m.get(ValueLayout.JAVA_BYTE, offset + i) != pattern(stream, message, i)) {
                throw new AssertionError(what + " " + message + ": byte " + i + " of " + length + " is wrong");
            }
        }
    }

    static void expect(final boolean ok, final String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static void expectSuccess(final WorkCompletion wc, final long id, final WcType type) {
        expect(wc.status() == WcStatus.SUCCESS && wc.id() == id && wc.type() == type,
            "expected " + type + " " + id + " to succeed, got " + wc);
    }

    /**
     * The server's part: prepares its buffer, checks what arrives, answers with its own messages.
     *
     * @param ready run once receives are posted: the client may start then
     */
    static void server(final Endpoint e, final Runnable ready) {
        fill(e.buffer, READ_AREA, READS * (READ_SIZE / READS) + READ_SIZE, 3, 0);
        e.buffer.set(ValueLayout.JAVA_LONG, COUNTER, 0);
        e.buffer.set(ValueLayout.JAVA_LONG, CHAIN, 0);
        // Receives: the client's messages, then "writes done", the write with immediate, and "done".
        final int expected = MESSAGES + 3;
        int posted = 0;
        int received = 0;
        while (received < expected) {
            while (posted < expected && posted - received < SLOTS) {
                e.qp.recv(posted, e.at(RECV_AREA + (long) (posted % SLOTS) * SLOT, SLOT), 1);
                posted++;
            }
            if (received == 0) {
                ready.run();
            }
            final WorkCompletion wc = e.received(1, TIMEOUT_MS).get(0);
            expect(wc.status() == WcStatus.SUCCESS && wc.type() == WcType.RECV && wc.id() == received,
                "receive " + received + " completed as " + wc);
            final long slot = RECV_AREA + (long) (received % SLOTS) * SLOT;
            if (received < MESSAGES) {
                expect(wc.length() == size(received), "message " + received + " has length " + wc.length());
                expect((wc.flags() & WcFlags.IMMEDIATE) == 0, "message " + received + " carries an immediate");
                check(e.buffer, slot, wc.length(), 1, received, "client message");
            } else if (received == MESSAGES) {
                expect((wc.flags() & WcFlags.IMMEDIATE) != 0 && wc.immediate() == WRITES_DONE_IMM,
                    "writes-done carries " + wc);
                for (int w = 0; w < WRITES; w++) {
                    check(e.buffer, WRITE_AREA + (long) w * WRITE_SIZE, WRITE_SIZE, 2, w, "RDMA write");
                }
            } else if (received == MESSAGES + 1) {
                expect((wc.flags() & WcFlags.IMMEDIATE) != 0 && wc.immediate() == WRITE_IMM
                    && wc.length() == 1000, "write with immediate completed as " + wc);
                check(e.buffer, WRITE_AREA + (long) WRITES * WRITE_SIZE, 1000, 4, 0, "write with immediate");
                sendMessages(e, 5);
            } else {
                expect(wc.immediate() == DONE_IMM, "done carries " + wc);
            }
            received++;
        }
        expect(e.buffer.get(ValueLayout.JAVA_LONG, COUNTER) == (long) FETCH_ADDS * 3,
            "the counter holds " + e.buffer.get(ValueLayout.JAVA_LONG, COUNTER) + ", not " + FETCH_ADDS * 3);
        expect(e.buffer.get(ValueLayout.JAVA_LONG, CHAIN) == CHAIN_STEPS, "the chain ends at "
            + e.buffer.get(ValueLayout.JAVA_LONG, CHAIN));
    }

    private static void sendMessages(final Endpoint e, final int stream) {
        for (int m = 0; m < MESSAGES; m++) {
            final long at = SEND_AREA + (long) (m % IN_FLIGHT) * SLOT;
            if (m >= IN_FLIGHT) {
                expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 1_000 + m - IN_FLIGHT, WcType.SEND);
            }
            fill(e.buffer, at, size(m), stream, m);
            e.qp.send(1_000 + m, e.at(at, size(m)), 1, 0, 0);
        }
        for (int m = MESSAGES - IN_FLIGHT; m < MESSAGES; m++) {
            expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 1_000 + m, WcType.SEND);
        }
    }

    /** The client's part, against the server buffer at {@code remote} with key {@code rKey}. */
    static void client(final Endpoint e, final long remote, final int rKey) {
        for (int r = 0; r < SLOTS; r++) {
            e.qp.recv(r, e.at(RECV_AREA + (long) r * SLOT, SLOT), 1);
        }
        sendMessages(e, 1);

        for (int w = 0; w < WRITES; w++) {
            fill(e.buffer, WRITE_AREA + (long) w * WRITE_SIZE, WRITE_SIZE, 2, w);
        }
        for (int w = 0; w < WRITES; w++) {
            final long at = WRITE_AREA + (long) w * WRITE_SIZE;
            e.qp.write(2_000 + w, e.at(at, WRITE_SIZE), 1, remote + at, rKey, w % 2 == 0 ? WrFlags.SUPPRESSED : 0,
                0);
            if (w % 2 == 1) {
                expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 2_000 + w, WcType.RDMA_WRITE);
            }
        }
        e.qp.send(2_100, e.at(0, 0), 0, WrFlags.IMMEDIATE, WRITES_DONE_IMM);
        expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 2_100, WcType.SEND);

        final int chunk = READ_SIZE / READS;
        for (int r = 0; r < READS; r++) {
            e.qp.read(3_000 + r, e.at(READ_AREA + (long) r * chunk, READ_SIZE), 1, remote + READ_AREA
                + (long) r * chunk, rKey, 0);
        }
        final List<WorkCompletion> reads = e.sent(READS, TIMEOUT_MS);
        for (int r = 0; r < READS; r++) {
            expectSuccess(reads.get(r), 3_000 + r, WcType.RDMA_READ);
            expect(reads.get(r).length() == READ_SIZE, "read " + r + " returned " + reads.get(r).length());
        }
        check(e.buffer, READ_AREA, READS * chunk + READ_SIZE - chunk, 3, 0, "RDMA read");
        fetchAdds(e, remote, rKey);
        chain(e, remote, rKey);

        fill(e.buffer, WRITE_AREA, 1000, 4, 0);
        e.qp.write(5_000, e.at(WRITE_AREA, 1000), 1, remote + WRITE_AREA + (long) WRITES * WRITE_SIZE, rKey,
            WrFlags.IMMEDIATE, WRITE_IMM);
        expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 5_000, WcType.RDMA_WRITE);

        for (int m = 0; m < MESSAGES; m++) {
            final WorkCompletion wc = e.received(1, TIMEOUT_MS).get(0);
            final long slot = RECV_AREA + (long) (m % SLOTS) * SLOT;
            expect(wc.status() == WcStatus.SUCCESS && wc.type() == WcType.RECV && wc.id() == m
                && wc.length() == size(m), "server message " + m + " completed as " + wc);
            check(e.buffer, slot, size(m), 5, m, "server message");
            if (m + SLOTS < MESSAGES) {
                e.qp.recv(m + SLOTS, e.at(slot, SLOT), 1);
            }
        }
        e.qp.send(6_000, e.at(0, 0), 0, WrFlags.IMMEDIATE, DONE_IMM);
        expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 6_000, WcType.SEND);
    }

    private static void fetchAdds(final Endpoint e, final long remote, final int rKey) {
        final BitSet seen = new BitSet();
        int posted = 0;
        int done = 0;
        while (done < FETCH_ADDS) {
            while (posted < FETCH_ADDS && posted - done < 16) {
                e.qp.fetchAdd(4_000 + posted, 3, e.at(RESULTS + 8L * posted, 8)[0], remote + COUNTER, rKey, 0);
                posted++;
            }
            final WorkCompletion wc = e.sent(1, TIMEOUT_MS).get(0);
            expectSuccess(wc, 4_000 + done, WcType.FETCH_ADD);
            final long original = e.buffer.get(ValueLayout.JAVA_LONG, RESULTS + 8L * done);
            expect(original % 3 == 0 && original >= 0 && original < 3L * FETCH_ADDS && !seen.get((int) original),
                "fetch-and-add " + done + " saw " + original);
            seen.set((int) original);
            done++;
        }
    }

    private static void chain(final Endpoint e, final long remote, final int rKey) {
        for (int s = 0; s < CHAIN_STEPS; s++) {
            e.qp.compExch(4_500 + s, s, s + 1, e.at(RESULTS, 8)[0], remote + CHAIN, rKey, 0);
            expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 4_500 + s, WcType.COMP_EXCH);
            expect(e.buffer.get(ValueLayout.JAVA_LONG, RESULTS) == s, "compare-and-swap " + s + " saw "
                + e.buffer.get(ValueLayout.JAVA_LONG, RESULTS));
        }
        // One that must fail: the value moved on.
        e.qp.compExch(4_999, 0, 99, e.at(RESULTS, 8)[0], remote + CHAIN, rKey, 0);
        expectSuccess(e.sent(1, TIMEOUT_MS).get(0), 4_999, WcType.COMP_EXCH);
        expect(e.buffer.get(ValueLayout.JAVA_LONG, RESULTS) == CHAIN_STEPS, "the failed swap saw "
            + e.buffer.get(ValueLayout.JAVA_LONG, RESULTS));
    }
}
