package io.jdet.perf.jdet;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.Det;
import io.jdet.DetException;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.perf.PerfException;
import io.jdet.perf.report.SetupCost;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * det_perf's setup costs: how long each control verb takes, as the median of a number of repetitions (det_perf
 * timed each once; a median is steadier on a shared machine). Memory registration is also reported per 4 KiB page.
 */
public final class SetupCosts {
    /** Bytes registered per repetition: 1 MiB, 256 pages. */
    public static final int REGISTERED_BYTES = 1 << 20;
    private static final int PAGE = 4096;

    private static final String[] NAMES = {"dev open", "dev close", "nic open", "nic close", "PD create", "PD free",
        "MEM reg", "MEM unreg", "Event create", "Event free", "QP create", "QP free", "CQ create", "CQ free",
        "Mod QP"};
    private static final int DEV_OPEN = 0;
    private static final int DEV_CLOSE = 1;
    private static final int NIC_OPEN = 2;
    private static final int NIC_CLOSE = 3;
    private static final int PD_CREATE = 4;
    private static final int PD_FREE = 5;
    private static final int MEM_REG = 6;
    private static final int MEM_UNREG = 7;
    private static final int EVENT_CREATE = 8;
    private static final int EVENT_FREE = 9;
    private static final int QP_CREATE = 10;
    private static final int QP_FREE = 11;
    private static final int CQ_CREATE = 12;
    private static final int CQ_FREE = 13;
    private static final int MOD_QP = 14;

    private SetupCosts() {
    }

    /**
     * The configuration for the NICs opened here: the run's, except that a raw Ethernet NIC, whose interface the
     * run's own NIC holds (one NIC per interface and EtherType), gets the other IEEE local experimental EtherType.
     */
    private static Configuration ownEtherType(final String nicName, final Configuration configuration) {
        if (!nicName.startsWith("eth:")) {
            return configuration;
        }
        return configuration.clone().ethEtherType(configuration.ethEtherType() == 0x88B6 ? 0x88B5 : 0x88B6);
    }

    /**
     * Measures every verb.
     *
     * @param nicName       the NIC to open (the one the run uses)
     * @param configuration the device configuration
     * @param repetitions   how many times to run the sequence
     * @return one cost per verb, in det_perf's order
     * @throws PerfException if a verb fails
     */
    public static List<SetupCost> measure(final String nicName, final Configuration configuration,
                                          final int repetitions) {
        final long[][] samples = new long[NAMES.length][repetitions];
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment memory = arena.allocate(REGISTERED_BYTES, PAGE);
            for (int r = 0; r < repetitions; r++) {
                once(nicName, ownEtherType(nicName, configuration), memory, samples, r);
            }
        } catch (final DetException e) {
            throw new PerfException("measuring setup costs on " + nicName + ": " + e.getMessage(), e);
        }
        final List<SetupCost> costs = new ArrayList<>();
        final int pages = REGISTERED_BYTES / PAGE;
        for (int i = 0; i < NAMES.length; i++) {
            final long[] s = samples[i];
            Arrays.sort(s);
            final double usec = s[s.length / 2] / 1e3;
            costs.add(new SetupCost(NAMES[i], usec, i == MEM_REG || i == MEM_UNREG ? pages : 0));
        }
        return costs;
    }

    private static void once(final String nicName, final Configuration configuration, final MemorySegment memory,
                             final long[][] samples, final int r) {
        long t = System.nanoTime();
        final Det det = Det.open(configuration);
        t = lap(samples, DEV_OPEN, r, t);
        final EventQueue events = det.createEvent(null);
        t = lap(samples, EVENT_CREATE, r, t);
        final Nic nic = det.openNic(nicName, null);
        t = lap(samples, NIC_OPEN, r, t);
        final ProtectionDomain pd = nic.allocPd();
        t = lap(samples, PD_CREATE, r, t);
        final CompletionQueue cq = nic.createCq(64, events);
        t = lap(samples, CQ_CREATE, r, t);
        final QueuePair qp = pd.createQp(QpCreate.of(cq, 16, 1));
        t = lap(samples, QP_CREATE, r, t);
        final MemoryRegion mr = pd.regMr(memory, Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ
            | Access.REMOTE_WRITE);
        t = lap(samples, MEM_REG, r, t);
        mr.close();
        t = lap(samples, MEM_UNREG, r, t);
        try (QueuePair partner = pd.createQp(QpCreate.of(cq, 16, 1))) {
            final QpModify connect = new QpModify().connect(nic.address(), partner.number(), partner.query().localPsn());
            t = System.nanoTime();
            qp.modify(connect);
            t = lap(samples, MOD_QP, r, t);
            qp.close();
            lap(samples, QP_FREE, r, t);
        }
        t = System.nanoTime();
        cq.close();
        t = lap(samples, CQ_FREE, r, t);
        events.close();
        t = lap(samples, EVENT_FREE, r, t);
        pd.close();
        t = lap(samples, PD_FREE, r, t);
        nic.close();
        t = lap(samples, NIC_CLOSE, r, t);
        det.close();
        lap(samples, DEV_CLOSE, r, t);
    }

    private static long lap(final long[][] samples, final int what, final int r, final long since) {
        final long now = System.nanoTime();
        samples[what][r] = now - since;
        return now;
    }
}
