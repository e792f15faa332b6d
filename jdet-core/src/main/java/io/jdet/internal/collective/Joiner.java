package io.jdet.internal.collective;

import io.jdet.Access;
import io.jdet.CollectiveTuning;
import io.jdet.CompletionQueue;
import io.jdet.ConnectionListener;
import io.jdet.ConnectionRejectedException;
import io.jdet.ConnectionRequest;
import io.jdet.DataSegment;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;
import io.jdet.internal.verbs.MwImpl;
import io.jdet.internal.verbs.QpImpl;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The join, on its own virtual thread (it waits on the connection manager): every member makes one queue pair per
 * peer and posts its receive slots; rank 0 listens on a service derived from the tag, the others connect to it (the
 * request carries the tag, size, rank and {@link #tuningDigest}: the root refuses a member whose tunings differ) and
 * send their record (NIC address and queue pair numbers); rank 0 answers each with its table (every member's
 * address and the queue pair number meant for it, as long as the group needs: no one-frame limit); each member
 * connects its mesh, tells rank 0, and waits for rank 0's release, so no data ever reaches an unconnected queue
 * pair. Failing or timing out, it hands everything it created back to the group.
 */
final class Joiner implements Runnable {
    private static final int MAX_ADDRESS = 255;
    /** A member's join request: tag (8 bytes), size (4), rank (4), {@link #tuningDigest} (8). */
    private static final int JOIN_REQUEST = 24;
    /** How the root's refusal of a member whose tunings differ begins. */
    private static final String TUNINGS_DIFFER = "jdet-co: tunings differ";
    /** One queue pair in a join record or table: its number (4 bytes) and start sequence numbers (8). */
    private static final int ENTRY = 12;
    /** This member's mesh queue pairs' start sequence numbers, by peer rank. */
    private long[] myPsns;
    private static final long RECORD = 1;
    private static final long CONNECTED = 2;
    private static final long TABLE = 3;
    private static final long RELEASE = 4;
    private static final long SEND = 5;

    private final CollectiveImpl co;
    private final String rootAddress;
    private final List<AutoCloseable> owned = new ArrayList<>();
    private final WorkCompletion[] wcs = new WorkCompletion[16];
    private CompletionQueue ctrlCq;
    private CompletionQueue dataCq;
    private final int p;
    private final int r;
    private final long deadline;
    private int[] received;

    Joiner(final CollectiveImpl co, final String rootAddress) {
        this.co = co;
        this.rootAddress = rootAddress;
        this.p = co.size;
        this.r = co.rank;
        this.deadline = System.nanoTime() + co.timeoutNs();
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    /**
     * The connection manager service a group's root listens on: 24 bits of the tag, well mixed (SplitMix64's
     * finalizer), so that tags which differ only in how their parts are arranged do not share a service (a fold of
     * the tag's 24-bit thirds gave {@code a << 24 | b} and {@code b << 24 | a} the same one, and the second group's
     * root then failed its join with EEXIST). Distinct tags still share a service with odds of 1 in 2^24 per pair
     * of groups joining through one NIC at once; the root listens only until every member is in. Raises nothing.
     *
     * @param tag the group's tag
     * @return the service id
     */
    static int serviceId(final long tag) {
        long z = tag;
        z = (z ^ z >>> 30) * 0xbf58476d1ce4e5b9L;
        z = (z ^ z >>> 27) * 0x94d049bb133111ebL;
        z ^= z >>> 31;
        return 0x4a00_0000 | (int) (z & 0x00ff_ffff);
    }

    @Override
    public void run() {
        boolean exchanging = false; // whether a failure from here on is the exchange's, not this member's own
        try {
            final Nic nic = co.pd.nic();
            final String self = nic.address();
            if (self.getBytes(StandardCharsets.UTF_8).length > MAX_ADDRESS) {
                throw new DetException(Errno.EINVAL, "NIC address longer than " + MAX_ADDRESS + " bytes");
            }
            final int dataSlots = co.tuning.slotsFor(p);
            final int perPeer = Channel.slotsPerPeer(dataSlots);
            final int slotBytes = co.tuning.slotBytes();
            final int sqDepth = sendQueueDepth(dataSlots);
            dataCq = own(nic.createCq((int) meshCqEntries(p, co.tuning), null));
            final Arena arena = own(Arena.ofShared());
            final int regionSlots = Channel.regionSlots(dataSlots);
            final MemorySegment slotMem = arena.allocate(slotRegionBytes(p, co.tuning), 64);
            final MemoryRegion slotMr = own(co.pd.regMr(slotMem, Access.LOCAL_READ | Access.LOCAL_WRITE));
            final Channel[] mesh = new Channel[p];
            final int[] myQps = new int[p];
            myPsns = new long[p];
            int k = 0;
            for (int j = 0; j < p; j++) {
                if (j == r) {
                    continue;
                }
                final QueuePair qp = silent(own(co.pd.createQp(new QpCreate(dataCq, dataCq, sqDepth, perPeer,
                    Channel.MAX_SGE, 1, 1, 1))));
                ((QpImpl) qp).lazyAcks(); // acks ride on chunks and credit returns (QpImpl.lazyAcks)
                final long base = (long) k * regionSlots * slotBytes;
                final MwImpl window = (MwImpl) own(co.pd.createMw(2));
                mesh[j] = new Channel(j, qp, sqDepth, slotMem.asSlice(base, (long) regionSlots * slotBytes),
                    slotMr.address() + base, slotMr.lKey(), slotBytes, dataSlots, co.tuning.rendezvousBytesFor(self),
                    window);
                mesh[j].postAll();
                myQps[j] = qp.number();
                myPsns[j] = qp.query().localPsn();
                k++;
            }
            ctrlCq = own(nic.createCq(4 * p + 64, null));
            final String[] addresses = new String[p];
            final int[] qpForMe = new int[p];
            final long[] psnForMe = new long[p];
            final ConnectionListener listener = r == 0 ? own(nic.connectionManager().listen(serviceId(co.tag)))
                : null;
            exchanging = true;
            if (r == 0) {
                root(nic, listener, self, myQps, addresses, qpForMe, psnForMe);
                connectMesh(mesh, addresses, qpForMe, psnForMe);
                releaseAll();
            } else {
                member(nic, self, myQps, addresses, qpForMe, psnForMe, mesh);
            }
            co.joined(mesh, dataCq, owned);
        } catch (final DetException e) {
            co.joinFailed(!exchanging ? WcStatus.LOCAL_OP_ERR : lostConnection(e.errno()) ? WcStatus.RETRY_EXCEEDED
                : WcStatus.REMOTE_OP_ERR, e.getMessage(), owned);
        } catch (final RuntimeException e) {
            co.joinFailed(exchanging ? WcStatus.REMOTE_OP_ERR : WcStatus.LOCAL_OP_ERR, String.valueOf(e), owned);
        } catch (final Error e) {
            // Say an OutOfMemoryError from the slot region: the group must not stay JOINING, its resources held.
            co.joinFailed(WcStatus.LOCAL_OP_ERR, String.valueOf(e), owned);
        }
    }

    /**
     * The statuses of the Collective javadoc: a timeout or a lost connection (ETIMEDOUT, EINTR, or ECONNRESET from a
     * control message flushed because its connection went) is RETRY_EXCEEDED, as on the data path; this member's own
     * failure to set up (before the exchange) LOCAL_OP_ERR; a refusal by the root REMOTE_OP_ERR.
     */
    private static boolean lostConnection(final Errno errno) {
        return errno == Errno.ETIMEDOUT || errno == Errno.EINTR || errno == Errno.ECONNRESET;
    }

    /** The group's queue pairs raise no events of their own: the user sees the group's CO events only. */
    private static QueuePair silent(final QueuePair qp) {
        ((QpImpl) qp).silence();
        return qp;
    }

    private <T extends AutoCloseable> T own(final T resource) {
        owned.add(resource);
        return resource;
    }

    /**
     * The longest the root waits for one member's confirmation of an acceptance: a quarter of the join's timeout,
     * at least 2 s. A live member confirms within a few round trips (it repeats its request until answered and
     * its READY three times); a request it gave up is never confirmed.
     */
    private long acceptMs() {
        return Math.max(2_000, co.tuning.timeoutMs() / 4);
    }

    private long remainingMs() {
        final long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0 || co.closing() || Thread.currentThread().isInterrupted()) {
            throw new DetException(Errno.ETIMEDOUT, "the join did not complete within " + co.tuning.timeoutMs()
                + " ms");
        }
        return left;
    }

    // ------------------------------------------------------------------ root

    private QueuePair[] ctrl;
    private MemorySegment ctrlMem;
    private MemoryRegion ctrlMr;
    private int recordMax;
    /** The control queue pair of an acceptance that failed, while its flushed receives are reaped. */
    private final Set<QueuePair> abandoned = Collections.newSetFromMap(new IdentityHashMap<>());
    private int tableMax;

    /** Each mesh queue pair's send queue: a send and a credit per data slot, and spares. */
    private static int sendQueueDepth(final int dataSlots) {
        return 2 * dataSlots + Channel.SPARE;
    }

    /**
     * The entries of a member's mesh completion queue (every mesh queue pair's sends and receives), which
     * {@code Collective.join} checks against the NIC's largest completion queue before it starts.
     *
     * @param p the group size
     * @param t the tunables
     * @return the entries
     */
    static long meshCqEntries(final int p, final CollectiveTuning t) {
        final int slots = t.slotsFor(p);
        return (long) (p - 1) * (sendQueueDepth(slots) + Channel.slotsPerPeer(slots)) + 64;
    }

    /**
     * The bytes of a member's slot region (every peer's receive and bounce slots, one region), which
     * {@code Collective.join} checks against the NIC's largest region before it starts.
     *
     * @param p the group size
     * @param t the tunables
     * @return the bytes
     */
    static long slotRegionBytes(final int p, final CollectiveTuning t) {
        return (long) (p - 1) * Channel.regionSlots(t.slotsFor(p)) * t.slotBytes();
    }

    private void ctrlMemory(final int slotsNeeded) {
        recordMax = 2 + MAX_ADDRESS + ENTRY * p;
        tableMax = p * (2 + MAX_ADDRESS + ENTRY);
        final Arena arena = own(Arena.ofShared());
        ctrlMem = arena.allocate((long) slotsNeeded * (recordMax + tableMax), 64);
        ctrlMr = own(co.pd.regMr(ctrlMem, Access.LOCAL_READ | Access.LOCAL_WRITE));
    }

    private long recordOff(final int j) {
        return (long) j * (recordMax + tableMax);
    }

    private long tableOff(final int j) {
        return recordOff(j) + recordMax;
    }

    private QueuePair ctrlQp() {
        return silent(own(co.pd.createQp(new QpCreate(ctrlCq, ctrlCq, 4, 4, 1, 1, 1, 1))));
    }

    private void root(final Nic nic, final ConnectionListener listener, final String self, final int[] myQps,
                      final String[] addresses, final int[] qpForMe, final long[] psnForMe) {
        ctrlMemory(p);
        ctrl = new QueuePair[p];
        received = new int[8];
        int joined = 1;
        while (joined < p) {
            final ConnectionRequest req = listener.take(remainingMs());
            final ByteBuffer pd = ByteBuffer.wrap(req.privateData());
            if (pd.remaining() != JOIN_REQUEST) {
                req.reject(null);
                continue;
            }
            final long tag = pd.getLong();
            final int size = pd.getInt();
            final int rank = pd.getInt();
            final long digest = pd.getLong();
            if (tag != co.tag || size != p || rank <= 0 || rank >= p || ctrl[rank] != null) {
                req.reject("jdet-co: wrong tag, size or rank".getBytes(StandardCharsets.UTF_8));
                continue;
            }
            if (digest != tuningDigest(co.tuning, p, self)) {
                // the member learns at once and fails its join; the root waits for a member that agrees
                req.reject((TUNINGS_DIFFER + ": rank " + rank + "'s collective tunings (slots, rendezvous threshold "
                    + "or switch points) are not the root's").getBytes(StandardCharsets.UTF_8));
                continue;
            }
            final QueuePair qp = ctrlQp();
            recv(qp, RECORD, rank, recordOff(rank), recordMax);
            recv(qp, CONNECTED, rank, 0, 0);
            final long left = remainingMs();
            try {
                req.accept(qp, null, Math.min(left, acceptMs()));
            } catch (final DetException e) {
                if (e.errno() != Errno.ECONNRESET && e.errno() != Errno.EACCES
                    && (e.errno() != Errno.ETIMEDOUT || left <= acceptMs())) {
                    throw e;
                }
                // A retransmission of a request the member gave up (refused while this side did not listen yet):
                // its live request is queued behind this one. The member says so (ECONNRESET); if that answer or
                // the acceptance was lost, the shorter wait for its confirmation ends it. A requester that cannot
                // prove the connection manager's keys (EACCES) is no member: one unauthenticated request must not
                // end the join. The queue pair goes at once, and its flushed receives are reaped now, so that
                // requests repeated without end fill neither the domain nor the control queue.
                abandon(qp);
                continue;
            }
            ctrl[rank] = qp;
            joined++;
        }
        listener.close(); // every member is in: the service is free for another group's join at once
        await(RECORD, p - 1);
        // every record is in: build each member's table
        final MemorySegment[] records = new MemorySegment[p];
        for (int j = 1; j < p; j++) {
            records[j] = ctrlMem.asSlice(recordOff(j), recordMax);
            addresses[j] = readAddress(records[j], 0);
        }
        addresses[0] = self;
        for (int m = 1; m < p; m++) {
            qpForMe[m] = qpOf(records[m], 0);
            psnForMe[m] = psnOf(records[m], 0);
        }
        for (int dest = 1; dest < p; dest++) {
            long at = tableOff(dest);
            for (int j = 0; j < p; j++) {
                final int qpn = j == 0 ? myQps[dest] : j == dest ? 0 : qpOf(records[j], dest);
                final long psn = j == 0 ? myPsns[dest] : j == dest ? 0 : psnOf(records[j], dest);
                at = writeEntry(at, addresses[j], qpn, psn);
            }
            send(ctrl[dest], tableOff(dest), (int) (at - tableOff(dest)));
        }
    }

    private int qpOf(final MemorySegment record, final int index) {
        final int len = Short.toUnsignedInt(record.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0));
        return record.get(ValueLayout.JAVA_INT_UNALIGNED, 2 + len + (long) ENTRY * index);
    }

    private long psnOf(final MemorySegment record, final int index) {
        final int len = Short.toUnsignedInt(record.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0));
        return record.get(ValueLayout.JAVA_LONG_UNALIGNED, 2 + len + (long) ENTRY * index + 4);
    }

    private static String readAddress(final MemorySegment m, final long at) {
        final int len = Short.toUnsignedInt(m.get(ValueLayout.JAVA_SHORT_UNALIGNED, at));
        if (len > MAX_ADDRESS) {
            throw new DetException(Errno.EINVAL, "malformed join record");
        }
        final byte[] b = new byte[len];
        MemorySegment.copy(m, ValueLayout.JAVA_BYTE, at + 2, b, 0, len);
        return new String(b, StandardCharsets.UTF_8);
    }

    private long writeEntry(final long at, final String address, final int qpn, final long psn) {
        final byte[] b = address.getBytes(StandardCharsets.UTF_8);
        ctrlMem.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, (short) b.length);
        MemorySegment.copy(b, 0, ctrlMem, ValueLayout.JAVA_BYTE, at + 2, b.length);
        ctrlMem.set(ValueLayout.JAVA_INT_UNALIGNED, at + 2 + b.length, qpn);
        ctrlMem.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 2 + b.length + 4, psn);
        return at + 2 + b.length + ENTRY;
    }

    private void releaseAll() {
        await(CONNECTED, p - 1);
        for (int j = 1; j < p; j++) {
            send(ctrl[j], 0, 0);
        }
        await(SEND, 2 * (p - 1));
    }

    /**
     * A digest of what every member of a group must agree on to run the same steps with the same chunks: the slot
     * size and count, the rendezvous threshold as this member's link resolves it, and the algorithm switch points.
     * Members that differ in any (another build, another {@code jdet.co.rendezvous.bytes}) would wait for each
     * other's messages until the timeout or misread them; the root refuses them at the join instead.
     */
    static long tuningDigest(final CollectiveTuning t, final int size, final String nicAddress) {
        final long[] values = {t.slotBytes(), t.slotsFor(size), t.rendezvousBytesFor(nicAddress), t.bcastShortMsg(),
            t.bcastLongMsg(), t.bcastMinProcs(), t.allgatherShortMsg(), t.allgatherLongMsg(), t.alltoallShortMsg(),
            t.alltoallMediumMsg(), t.alltoallMinProcs(), t.allreduceShortMsg(), t.allreduceRingMsg()};
        long h = 0xCBF2_9CE4_8422_2325L; // FNV-1a, one long at a time
        for (final long v : values) {
            h = (h ^ v) * 0x0000_0100_0000_01B3L;
        }
        return h;
    }

    // ------------------------------------------------------------------ member

    private void member(final Nic nic, final String self, final int[] myQps, final String[] addresses,
                        final int[] qpForMe, final long[] psnForMe, final Channel[] mesh) {
        ctrlMemory(1);
        received = new int[8];
        final QueuePair qp = ctrlQp();
        recv(qp, TABLE, 0, tableOff(0), tableMax);
        recv(qp, RELEASE, 0, 0, 0);
        final byte[] priv = ByteBuffer.allocate(JOIN_REQUEST).putLong(co.tag).putInt(p).putInt(r)
            .putLong(tuningDigest(co.tuning, p, self)).array();
        while (true) {
            // One attempt may last the whole join (the request is retransmitted until the root answers): a shorter
            // one that expired while the root was accepting it left the root waiting for a confirmation that never
            // came, and the join failed under load. Outside the try: its ETIMEDOUT ends the join.
            final long wait = remainingMs();
            try {
                nic.connectionManager().connect(rootAddress, serviceId(co.tag), qp, priv, wait);
                break;
            } catch (final ConnectionRejectedException e) {
                if (e.privateData().length > 0) {
                    final String why = new String(e.privateData(), StandardCharsets.UTF_8);
                    throw new DetException(why.startsWith(TUNINGS_DIFFER) ? Errno.EINVAL : Errno.EEXIST, why);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // the root does not listen yet
            } catch (final DetException e) {
                if (e.errno() != Errno.ETIMEDOUT) {
                    throw e;
                }
            }
        }
        long at = recordOff(0);
        at = writeEntry(at, self, 0, 0) - ENTRY;
        for (int j = 0; j < p; j++) {
            ctrlMem.set(ValueLayout.JAVA_INT_UNALIGNED, at + (long) ENTRY * j, myQps[j]);
            ctrlMem.set(ValueLayout.JAVA_LONG_UNALIGNED, at + (long) ENTRY * j + 4, myPsns[j]);
        }
        send(qp, recordOff(0), (int) (at + (long) ENTRY * p - recordOff(0)));
        await(TABLE, 1);
        long t = tableOff(0);
        for (int j = 0; j < p; j++) {
            addresses[j] = readAddress(ctrlMem, t);
            final int len = Short.toUnsignedInt(ctrlMem.get(ValueLayout.JAVA_SHORT_UNALIGNED, t));
            qpForMe[j] = ctrlMem.get(ValueLayout.JAVA_INT_UNALIGNED, t + 2 + len);
            psnForMe[j] = ctrlMem.get(ValueLayout.JAVA_LONG_UNALIGNED, t + 2 + len + 4);
            t += 2 + len + ENTRY;
        }
        connectMesh(mesh, addresses, qpForMe, psnForMe);
        send(qp, 0, 0);
        await(RELEASE, 1);
    }

    // ------------------------------------------------------------------ common

    private void connectMesh(final Channel[] mesh, final String[] addresses, final int[] qpForMe,
                             final long[] psnForMe) {
        for (int j = 0; j < p; j++) {
            if (j != r) {
                mesh[j].qp.modify(new QpModify().connect(addresses[j], qpForMe[j], psnForMe[j]));
            }
        }
    }

    private final DataSegment[] one = {new DataSegment()};

    private void recv(final QueuePair qp, final long kind, final int peer, final long off, final int len) {
        one[0].set(ctrlMr.address() + off, len, ctrlMr.lKey());
        qp.recv(kind << 32 | peer, one, len == 0 ? 0 : 1);
    }

    private void send(final QueuePair qp, final long off, final int len) {
        one[0].set(ctrlMr.address() + off, len, ctrlMr.lKey());
        qp.send(SEND << 32, one, len == 0 ? 0 : 1, 0, 0);
    }

    /** Polls the control queue until {@code count} completions of a kind have come. */
    private void await(final long kind, final int count) {
        while (received[(int) kind] < count) {
            final int n = ctrlCq.poll(wcs);
            for (int i = 0; i < n; i++) {
                count(wcs[i]);
            }
            if (n == 0) {
                remainingMs();
                LockSupport.parkNanos(20_000);
            }
        }
    }

    /** Counts one control completion; one of an abandoned acceptance's queue pairs that failed is expected. */
    private void count(final WorkCompletion wc) {
        if (wc.status() != WcStatus.SUCCESS && abandoned.contains(wc.queuePair())) {
            return;
        }
        if (wc.status() == WcStatus.FLUSHED) { // its connection went: lost, as on the data path
            throw new DetException(Errno.ECONNRESET, "a join message was flushed: " + wc);
        }
        if (wc.status() != WcStatus.SUCCESS) {
            throw new DetException(Errno.ECONNREFUSED, "a join message failed: " + wc);
        }
        received[(int) (wc.id() >>> 32)]++;
    }

    /**
     * Closes the queue pair of an acceptance that failed (its receives are flushed to the control queue, at once)
     * and reaps what the control queue holds, counting the completions of the members already accepted; then no
     * completion of that queue pair remains, and it is forgotten.
     */
    private void abandon(final QueuePair qp) {
        abandoned.add(qp);
        owned.remove(qp);
        qp.close();
        int n;
        while ((n = ctrlCq.poll(wcs)) > 0) {
            for (int i = 0; i < n; i++) {
                count(wcs[i]);
            }
        }
        abandoned.remove(qp);
    }
}
