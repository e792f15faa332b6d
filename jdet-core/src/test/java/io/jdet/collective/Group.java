package io.jdet.collective;

import io.jdet.Access;
import io.jdet.Collective;
import io.jdet.CollectiveTuning;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * p members of one group, each on its own NIC (of one in-process fabric, or its own UDP socket on loopback), driven
 * by the test thread alone.
 */
final class Group implements AutoCloseable {
    private static final AtomicLong TAGS = new AtomicLong(0x7000);

    final int p;
    final Det det;
    final EventQueue events;
    final Nic[] nics;
    final ProtectionDomain[] pds;
    final CompletionQueue[] cqs;
    final Collective[] cos;
    final Arena arena = Arena.ofShared();
    final long tag = TAGS.incrementAndGet();
    private final WorkCompletion[] wc = {new WorkCompletion()};
    private final long joinWaitMs;

    Group(final int p, final Configuration config) {
        this(p, config, null);
    }

    /**
     * Opens p members.
     *
     * @param nicName every member's NIC name, such as {@code udp:127.0.0.1:0}; null for one in-process fabric
     */
    Group(final int p, final Configuration config, final String nicName) {
        this.p = p;
        // a join may take the whole collective timeout (64 joins through one root on a loaded machine): wait longer
        joinWaitMs = Math.max(30_000, config.collectives().timeoutMs() + 10_000);
        det = Det.open(config.jmx(false));
        events = det.createEvent(null);
        nics = new Nic[p];
        pds = new ProtectionDomain[p];
        cqs = new CompletionQueue[p];
        cos = new Collective[p];
        final String fabric = nicName != null ? nicName : "loop:co" + tag;
        for (int i = 0; i < p; i++) {
            nics[i] = det.openNic(fabric, events);
            pds[i] = nics[i].allocPd();
            cqs[i] = nics[i].createCq(64, null);
            cos[i] = pds[i].createCollective(cqs[i]);
        }
    }

    static Configuration config(final int p) {
        final Configuration c = new Configuration();
        if (p > 16) {
            c.collectives(CollectiveTuning.DEFAULT.withSlots(4096, 4));
        }
        return c;
    }

    Group(final int p) {
        this(p, config(p));
    }

    /** Joins every member and waits for the JOIN completions. */
    Group joined() {
        for (int i = 0; i < p; i++) {
            cos[i].join(1000 + i, tag, p, i, nics[0].address(), 0);
        }
        final WorkCompletion[] got = awaitAll(joinWaitMs);
        for (int i = 0; i < p; i++) {
            assertEquals(WcStatus.SUCCESS, got[i].status(), "member " + i + ": " + got[i] + " " + cos[i]);
            assertEquals(WcType.JOIN, got[i].type(), "member " + i);
        }
        return this;
    }

    /** Polls every member until each has one completion; checks it is a success of the type. */
    WorkCompletion[] expectAll(final WcType type, final long length) {
        // past the collective timeout the tests configure (CollectiveVerbsTest.tuning): a slow join or step then
        // fails with its own error completion, which this reports, rather than with this deadline
        final WorkCompletion[] got = awaitAll(p > 16 ? 150_000 : 30_000);
        for (int i = 0; i < p; i++) {
            assertEquals(WcStatus.SUCCESS, got[i].status(), "member " + i + ": " + got[i] + " " + cos[i]);
            assertEquals(type, got[i].type(), "member " + i);
        }
        return got;
    }

    /** Polls every member until each has one completion, within a deadline. */
    WorkCompletion[] awaitAll(final long timeoutMs) {
        final WorkCompletion[] got = new WorkCompletion[p];
        int have = 0;
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (have < p) {
            for (int i = 0; i < p; i++) {
                if (got[i] == null && cqs[i].poll(wc) == 1) {
                    got[i] = wc[0];
                    wc[0] = new WorkCompletion();
                    have++;
                }
            }
            if (System.nanoTime() > deadline) {
                final StringBuilder sb = new StringBuilder();
                for (int i = 0; i < p; i++) {
                    if (got[i] == null) {
                        sb.append(' ').append(cos[i]);
                    }
                }
                fail("no completion within " + timeoutMs + " ms at" + sb);
            }
        }
        return got;
    }

    /** Registers memory for member i. */
    MemoryRegion region(final int i, final long bytes) {
        final MemorySegment seg = arena.allocate(Math.max(bytes, 8), 64);
        return pds[i].regMr(seg, Access.LOCAL_READ | Access.LOCAL_WRITE);
    }

    static DataSegment ds(final MemoryRegion mr, final long off, final long len) {
        return new DataSegment(mr.address() + off, (int) len, mr.lKey());
    }

    static DataSegment ds(final MemoryRegion mr) {
        return ds(mr, 0, mr.length());
    }

    @Override
    public void close() {
        for (final Collective co : cos) {
            co.close();
        }
        det.close();
        arena.close();
    }
}
