package io.jdet.internal.link;

import io.jdet.Configuration;
import io.jdet.DetException;
import io.jdet.Errno;
import io.jdet.internal.wire.FrameCrc;
import io.jdet.internal.wire.FrameGather;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.LinkOption;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The shared-memory link: NICs opened on {@code shm:<group>} on one host, in any processes of the same user, meet
 * through memory-mapped files in {@code <dir>/jdet-<uid>/<group>/} ({@code dir} is
 * {@link Configuration#shmDirectory}, {@code /dev/shm} by default). Each NIC owns an inbound {@link ShmRing} file
 * named after a random 63-bit id, so its address is {@code shm:<group>/<id in hex>}; a restarted process gets a new
 * id and a new file, and never sees frames meant for its predecessor. A peer is reached by mapping its file; its
 * handle is its id, which every frame in the ring carries, so a received frame names its sender without a lookup.
 *
 * <p>Sending copies the header and the payload pieces straight from registered memory into the peer's ring
 * slot; receiving hands the slot to the engine, which copies the payload once more, into the target memory. Memory
 * is no wire: frames carry no CRC (the engine does not compute one, {@link #checksummed}) unless fault injection
 * corrupts frames, and a full ring pushes back ({@link #send} returns false) instead of dropping. A peer whose
 * process is gone (its ring full and its pid no longer running, or its ring closed) has its frames dropped, so the
 * engine's retransmission timeout fails its connections with the usual statuses; its file is deleted. Files left by
 * dead processes are also deleted whenever a NIC opens the group.
 *
 * <p>Between {@link #cork} and {@link #uncork} (a post, an engine pass) small frames (under {@link #BATCH_MAX}
 * bytes) bound for the same peer are staged in the link and leave together in one slot of the peer's ring
 * ({@link ShmRing#offerBatch}): a burst of small messages then costs one claim, one publication and at most one
 * wake-up, as on the in-process fabric. Only into a ring whose owner says it accepts batch slots (its header's
 * feature word): an owner of an older build gets single frames, as before. The first small frame of a batch, with
 * nothing staged and no company announced, goes at once, alone, so a lone message (a ping-pong) pays no staging
 * copy; the frames after it are staged, and so are those after a post flagged {@code MORE} ({@link #uncorkHolding},
 * which leaves them staged for the next post or engine pass; {@link #mayHaveInput} says so meanwhile). A larger
 * frame goes alone, after what is staged for its peer. A peer whose ring is full keeps its staged frames (they leave
 * at the next send, uncork or flush that finds room) but holds up no other peer; those still staged at close that
 * cannot be published are dropped ({@code link.tx.errors}).
 *
 * <p>Waiting ({@link #await}) spins for {@link Configuration#shmSpinUs}, then sleeps on a futex in the ring file,
 * which a sender wakes only when the owner sleeps.
 */
public final class ShmLink implements Link {
    /** Group names: file-name safe. */
    private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final SecureRandom IDS = new SecureRandom();
    /** Frames shorter than this are staged for a batch (as on the fabric, {@link FrameRing#LEND_MIN}). */
    static final int BATCH_MAX = 2048;

    private final String group;
    private final Path directory;
    private final long id;
    private final String prefix;
    private final ShmRing ring;
    private final int mtu;
    private final int txFlags;
    private final long spinNs;
    private final ShmPeers peers = new ShmPeers();
    private final FrameCrc rxCrc = new FrameCrc();
    private volatile boolean closed;
    private long peerGone;
    private long ringFull;
    private long lost;
    private long oversize;
    private long deadPeers;
    private long sendErrors;
    /**
     * The batch of small frames (written on every post: padded, see {@link Staging.Batch}, so that the fields other
     * threads read, {@link #closed} and {@link #ring} for {@link #await}, never share its lines). Allocated last.
     */
    private final Staging.Batch tx;

    /**
     * Opens a NIC on a group: deletes rings of dead owners there and creates this NIC's ring.
     *
     * @param group         the group name (letters, digits, {@code _ . -}; at most 64)
     * @param configuration the device configuration: directory, MTU, ring size, spin time; if its faults corrupt
     *                      frames, frames are sealed with a CRC and checked
     * @throws DetException ENODEV if the name is not valid, the platform is not 64-bit Linux, or the files cannot
     *                      be made
     */
    public ShmLink(final String group, final Configuration configuration) {
        if (group == null || !GROUP.matcher(group).matches() || group.equals(".") || group.equals("..")) {
            throw new DetException(Errno.ENODEV, "shm group name must be 1-64 of [A-Za-z0-9_.-]: " + group);
        }
        if (!Posix.supported()) {
            throw new DetException(Errno.ENODEV, "the shm link needs 64-bit Linux");
        }
        this.group = group;
        this.prefix = "shm:" + group + "/";
        this.txFlags = configuration.faults().active() && configuration.faults().corruptRate() > 0
            ? ShmRingDescriptor.FLAG_CRC : 0;
        this.spinNs = TimeUnit.MICROSECONDS.toNanos(configuration.shmSpinUs());
        Path groupDirectory = null;
        ShmRing created = null;
        int groupMtu = configuration.shmMtu();
        for (int attempt = 0; created == null; attempt++) {
            try {
                groupDirectory = groupDirectory(Path.of(configuration.shmDirectory()), group);
                final int liveMtu = sweep(groupDirectory);
                groupMtu = liveMtu > 0 ? liveMtu : configuration.shmMtu();
                created = createRing(groupDirectory, configuration.shmRingFrames(), groupMtu);
            } catch (final NoSuchFileException removed) {
                // The last NIC of the group closed and removed the directory meanwhile: make it again.
                if (attempt >= 3) {
                    throw new DetException(Errno.ENODEV, "cannot open shm:" + group + ": " + removed);
                }
            } catch (final IOException | UnsupportedOperationException | SecurityException e) {
                throw new DetException(Errno.ENODEV, "cannot open shm:" + group + " in "
                    + configuration.shmDirectory() + ": " + e);
            }
        }
        this.directory = groupDirectory;
        this.mtu = groupMtu;
        this.ring = created;
        this.id = created.ownerId();
        peers.put(id, ring);
        this.tx = new Staging.Batch(groupMtu);
    }

    private static ShmRing createRing(final Path directory, final int slots, final int mtu) throws IOException {
        while (true) {
            final long candidate = IDS.nextLong() & Long.MAX_VALUE;
            if (candidate == 0) {
                continue;
            }
            try {
                return ShmRing.create(directory.resolve(Long.toHexString(candidate) + ".ring"), candidate, slots,
                    mtu);
            } catch (final FileAlreadyExistsException taken) {
                continue; // one chance in 2^63: draw again
            }
        }
    }

    private static Path groupDirectory(final Path base, final String group) throws IOException {
        final Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        final Path user = base.resolve("jdet-" + uid);
        final Path directory = user.resolve(group);
        final var owner = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
        for (final Path d : new Path[] {user, directory}) {
            if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    Files.createDirectory(d, owner);
                } catch (final FileAlreadyExistsException raced) {
                    // another NIC made it first (or something else has the name: checked below)
                }
            }
            requirePrivate(d, uid);
        }
        return directory;
    }

    /**
     * Refuses a directory that another user made or may write: the base directory ({@code /dev/shm}) is everyone's,
     * so another user could make {@code jdet-<uid>} first (a directory of its own, or a link to one) and then
     * rename, replace or read the rings made there. Only a real directory (no link) of this user, closed to group
     * and others, is used.
     */
    private static void requirePrivate(final Path d, final Object uid) throws IOException {
        final Map<String, Object> a = Files.readAttributes(d, "unix:uid,mode", LinkOption.NOFOLLOW_LINKS);
        final int mode = (Integer) a.get("mode");
        if ((mode & 0170000) != 0040000 || (mode & 077) != 0 || !uid.equals(a.get("uid"))) {
            throw new IOException(d + " is not a directory of this user closed to others (mode "
                + Integer.toOctalString(mode) + ", uid " + a.get("uid") + ")");
        }
    }

    /**
     * Deletes the files of dead owners in a group directory and finds the MTU its live rings use.
     *
     * @return the MTU of a live ring, or 0 if there is none
     */
    static int sweep(final Path directory) throws IOException {
        int mtu = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (final Path file : files) {
                final String name = file.getFileName().toString();
                if (name.endsWith(".tmp")) {
                    final String[] parts = name.split("\\.");
                    if (parts.length == 3 && !ProcessStamp.alive(parseOr(parts[1]), -1)) {
                        Files.deleteIfExists(file);
                    }
                } else if (name.endsWith(".ring")) {
                    if (ShmRing.stale(file)) {
                        Files.deleteIfExists(file);
                    } else if (mtu == 0) {
                        try (ShmRing live = ShmRing.open(file)) {
                            mtu = live != null ? live.mtu() : 0;
                        }
                    }
                }
            }
        }
        return mtu;
    }

    private static long parseOr(final String decimal) {
        try {
            return Long.parseLong(decimal);
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    private Path ringFile(final long ringId) {
        return directory.resolve(Long.toHexString(ringId) + ".ring");
    }

    @Override
    public String address() {
        return prefix + Long.toHexString(id);
    }

    @Override
    public int mtu() {
        return mtu;
    }

    @Override
    public boolean checksummed(final long peer) {
        return txFlags != 0;
    }

    @Override
    public long resolve(final String address) {
        if (address == null || !address.startsWith(prefix)) {
            return -1;
        }
        final long peer;
        try {
            peer = Long.parseUnsignedLong(address.substring(prefix.length()), 16);
        } catch (final NumberFormatException e) {
            return -1;
        }
        if (peer <= 0) {
            return -1;
        }
        final ShmRing known = peers.get(peer);
        if (known != null) {
            return peer;
        }
        final ShmRing opened = ShmRing.open(ringFile(peer));
        if (opened == null || opened.ownerId() != peer) {
            if (opened != null) {
                opened.close();
            }
            return -1;
        }
        if (!peers.put(peer, opened)) {
            opened.close();
            return -1;
        }
        return peer;
    }

    @Override
    public String describe(final long peer) {
        return prefix + Long.toHexString(peer);
    }

    @Override
    public boolean send(final long peer, final MemorySegment header, final int headerLength,
                        final FrameGather payload) {
        final int length = headerLength + payload.totalLength();
        if (tx.corked > 0 && length < BATCH_MAX) {
            if (tx.stages()) {
                return stage(peer, header, headerLength, payload, length);
            }
            // This one goes alone, now; once it is in the ring, the frames after it in the batch are staged.
            return tx.sentAlone(sendAlone(peer, header, headerLength, payload));
        }
        if (tx.frames > 0 && !publishStaged() && tx.peer == peer) {
            return false; // what is staged for this peer leaves first, in order; its ring has no room now
        }
        return sendAlone(peer, header, headerLength, payload);
    }

    /** The ring of a peer, mapped at its first frame; null if it is gone or was never there. */
    private ShmRing target(final long peer) {
        final ShmRing target = peers.get(peer);
        return target == null && !peers.contains(peer) ? firstContact(peer) : target;
    }

    /**
     * Appends a frame to the staging, after publishing what is staged for another peer or what leaves it no room.
     * When the other peer's ring is full, its frames stay staged and this one goes alone, so that a peer that stops
     * taking frames holds up no other; a peer whose ring takes no batches gets it alone too.
     *
     * @return false if the frame's own peer's ring is full and the staging has no room (the caller retries later)
     */
    private boolean stage(final long peer, final MemorySegment header, final int headerLength,
                          final FrameGather payload, final int length) {
        if (tx.frames > 0 && peer != tx.peer && !publishStaged()) {
            return sendAlone(peer, header, headerLength, payload);
        }
        if (tx.full(length) && !publishStaged()) {
            return false;
        }
        // What a copy throws (the frame's memory closed) is the caller's, as in sendAlone; nothing is staged then.
        if (tx.frames == 0) {
            final ShmRing target = target(peer);
            if (target == null || !target.acceptsBatches() || length > Math.min(mtu, target.mtu())) {
                return sendAlone(peer, header, headerLength, payload); // counts it gone or oversize, or sends it
            }
            tx.append(peer, Math.min(mtu, target.mtu()), header, headerLength, payload, length);
        } else {
            tx.append(peer, tx.limit, header, headerLength, payload, length);
        }
        return true;
    }

    /**
     * Publishes the staged frames in one slot of their peer's ring; dropped, and counted, if the peer is gone or
     * its owner skipped the slot, as {@link #sendAlone} drops a frame.
     *
     * @return false if the ring is full and its owner still there: they stay staged
     */
    private boolean publishStaged() {
        final ShmRing target = peers.get(tx.peer); // mapped when the first frame was staged, unless forgotten since
        if (target == null) {
            peerGone += tx.frames;
        } else {
            switch (target.offerBatch(id, txFlags, tx.staging, tx.first, tx.end)) {
                case ShmRing.SENT:
                    tx.published();
                    return true;
                case ShmRing.LOST:
                    lost += tx.frames;
                    break;
                case ShmRing.FULL:
                    if (!target.ownerGone(System.nanoTime())) {
                        ringFull++;
                        return false;
                    }
                    forget(tx.peer, target);
                    peerGone += tx.frames;
                    break;
                default:
                    forget(tx.peer, target);
                    peerGone += tx.frames;
                    break;
            }
        }
        tx.clear();
        return true;
    }

    /** Sends a frame in a slot of its own (what is staged for another peer may wait: order is kept per peer). */
    private boolean sendAlone(final long peer, final MemorySegment header, final int headerLength,
                              final FrameGather payload) {
        final ShmRing target = target(peer);
        if (target == null) {
            peerGone++;
            return true;
        }
        if (headerLength + payload.totalLength() > target.mtu()) {
            oversize++;
            return true;
        }
        switch (target.offer(id, txFlags, header, headerLength, payload)) {
            case ShmRing.SENT:
                return true;
            case ShmRing.LOST:
                lost++;
                return true;
            case ShmRing.FULL:
                if (target.ownerGone(System.nanoTime())) {
                    forget(peer, target);
                    peerGone++;
                    return true;
                }
                ringFull++;
                return false;
            default:
                forget(peer, target);
                peerGone++;
                return true;
        }
    }

    /** A frame to a peer never resolved here (say, an answer to its first frame): map its ring once. */
    private ShmRing firstContact(final long peer) {
        if (peer <= 0) {
            return null;
        }
        final ShmRing opened = ShmRing.open(ringFile(peer));
        final ShmRing usable = opened != null && opened.ownerId() == peer ? opened : null;
        if (opened != null && usable == null) {
            opened.close();
        }
        if (!peers.put(peer, usable) && usable != null) {
            usable.close();
            return null;
        }
        return usable;
    }

    /** A peer's owner is gone: unmap its ring, delete its file if it is left over, drop what is sent to it. */
    private void forget(final long peer, final ShmRing target) {
        peers.put(peer, null);
        deadPeers++;
        if (ShmRing.stale(target.file())) {
            try {
                Files.deleteIfExists(target.file());
            } catch (final IOException e) {
                // its directory is gone, or someone else cleaned up: nothing left to do
            }
        }
        target.close();
    }

    @Override
    public void cork() {
        tx.cork();
    }

    @Override
    public void uncork() {
        if (tx.uncork()) {
            publishStaged(); // a full ring keeps them staged: the next send, uncork or flush tries again
        }
    }

    @Override
    public void uncorkHolding() {
        tx.uncorkHolding();
    }

    @Override
    public void push() {
        if (tx.frames > 0) {
            publishStaged(); // a full ring keeps them staged: the next send, uncork or flush tries again
        }
    }

    @Override
    public void flush() {
        if (tx.flushes()) {
            publishStaged();
        }
    }

    /** A frame waits in the ring: {@link Link#inputWaiting}. */
    @Override
    public boolean inputWaiting() {
        return !ring.isEmpty();
    }

    /**
     * Whether a frame waits in the ring, or frames wait staged (held by a post flagged MORE, or for room in a full
     * peer ring): a poll that finds its queue empty skips its engine pass only when this is false, and the pass is
     * what sends them. Any thread (a racy read of the batch state only makes a poll run or skip one pass).
     */
    @Override
    public boolean mayHaveInput() {
        return tx.frames > 0 || !ring.isEmpty();
    }

    @Override
    public int receive(final FrameHandler handler, final int max) {
        return ring.drain(handler, max, rxCrc);
    }

    @Override
    public void await(final int waiter, final long timeoutNs) {
        if (!closed) {
            ring.await(waiter, timeoutNs, spinNs);
        }
    }

    @Override
    public void wakeup(final int waiter) {
        if (!closed) {
            try {
                ring.wakeup(waiter);
            } catch (final IllegalStateException unmappedMeanwhile) {
                // closed while waking: nobody is left to wake
            }
        }
    }

    @Override
    public void addCounters(final Map<String, Long> counters) {
        counters.merge("link.rx.bad_crc", ring.badCrc(), Long::sum);
        counters.merge("link.rx.bad_length", ring.badLength(), Long::sum);
        counters.merge("link.rx.skipped_claims", ring.skipped(), Long::sum);
        counters.merge("link.tx.peer_gone", peerGone, Long::sum);
        counters.merge("link.tx.ring_full", ringFull, Long::sum);
        counters.merge("link.tx.lost", lost, Long::sum);
        counters.merge("link.tx.oversize", oversize, Long::sum);
        counters.merge("link.tx.dead_peers", deadPeers, Long::sum);
        counters.merge("link.tx.errors", sendErrors, Long::sum);
        counters.merge("link.tx.batches", tx.batches, Long::sum);
        counters.merge("link.tx.batched_frames", tx.batchedFrames, Long::sum);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // What a post flagged MORE (or a full ring) left staged leaves before the NIC does; what a full ring cannot
        // take is dropped here and now: the lock release after a NIC's close flushes, and nothing leaves a closed NIC.
        if (tx.frames > 0 && !publishStaged()) {
            sendErrors += tx.frames;
        }
        tx.clear();
        for (final ShmRing r : peers.rings()) {
            if (r != ring) {
                r.close();
            }
        }
        ring.close();
        try {
            Files.delete(directory); // the last NIC of the group leaves no empty directory behind
        } catch (final IOException | SecurityException notEmptyOrGone) {
            // other NICs' rings are still there, or another NIC removed it first
        }
    }

    @Override
    public String toString() {
        return "ShmLink[" + address() + ", mtu " + mtu + "]";
    }
}
