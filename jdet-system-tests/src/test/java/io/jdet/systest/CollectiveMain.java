package io.jdet.systest;

import io.jdet.Collective;
import io.jdet.CollectiveTuning;
import io.jdet.CompletionQueue;
import io.jdet.Configuration;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.EventCode;
import io.jdet.EventQueue;
import io.jdet.EventRecord;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.ResourceType;
import io.jdet.WcStatus;
import io.jdet.WcType;
import io.jdet.WorkCompletion;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;

/**
 * One member of a collective group in its own JVM, on a UDP NIC on loopback (the other side of
 * {@link CollectiveProcessesTest}). Prints {@code JOINED} after the join, then by role:
 *
 * <pre>
 * CollectiveMain member  &lt;root address&gt; &lt;rank&gt; &lt;size&gt; &lt;tag&gt; &lt;timeoutMs&gt;   every verb, checked; prints
 *                              OK &lt;count&gt;, then closes the group when its standard input ends
 * CollectiveMain stall   ...   a barrier, then posts an all-reduce, prints POSTED and stops polling until killed
 * CollectiveMain survive ...   a barrier, then posts an all-reduce, prints POSTED, and expects it to fail with a
 *                              CO_ERROR event; prints FAILED &lt;status&gt;
 * </pre>
 *
 * Exits 0 on success, 1 on a failed check, 2 on bad arguments; ends by itself within {@link PeerMain#LIFETIME_MS}.
 */
public final class CollectiveMain {
    /** The all-reduce the failure roles post: long enough to be a ring, 64 KiB. */
    static final int FAIL_COUNT = 8192;

    private CollectiveMain() {
    }

    /**
     * The configuration of every member: the given collective timeout; the failure roles also get a short
     * acknowledgement timeout, so that a dead member is detected by the transport before the collective timeout.
     */
    static Configuration configuration(final String role, final long timeoutMs) {
        final Configuration c = VerbsWorkload.configuration()
            .collectives(CollectiveTuning.DEFAULT.withTimeoutMs(timeoutMs));
        return role.equals("member") ? c : c.ackTimeoutMs(300);
    }

    /**
     * Runs a role.
     *
     * @param args the role and its arguments, as in the class description
     */
    public static void main(final String[] args) {
        final PrintStream out = System.out;
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(PeerMain.LIFETIME_MS);
            } catch (final InterruptedException e) {
                return;
            }
            System.err.println("member: lifetime exceeded");
            Runtime.getRuntime().halt(3);
        });
        if (args.length != 6) {
            System.err.println("usage: CollectiveMain member|stall|survive <root> <rank> <size> <tag> <timeoutMs>");
            System.exit(2);
        }
        try (Det det = Det.open(configuration(args[0], Long.parseLong(args[5])))) {
            final EventQueue events = det.createEvent(null);
            final Nic nic = det.openNic("udp:127.0.0.1", events);
            final ProtectionDomain pd = nic.allocPd();
            final CompletionQueue cq = nic.createCq(64, null);
            final Collective co = pd.createCollective(cq);
            co.join(0, Long.parseLong(args[4]), Integer.parseInt(args[3]), Integer.parseInt(args[2]), args[1], 0);
            expect(cq, WcType.JOIN, 60_000);
            out.println("JOINED");
            out.flush();
            switch (args[0]) {
                case "member" -> {
                    try (CollectiveWorkload w = new CollectiveWorkload(co, pd, cq)) {
                        out.println("OK " + w.run());
                        out.flush();
                        // A member that closes at once would fail one still finishing the last barrier (its frames
                        // unacknowledged): wait until the parent saw every OK and closes our input.
                        while (System.in.read() >= 0) {
                            continue;
                        }
                    }
                }
                case "stall" -> {
                    postAfterBarrier(co, pd, cq);
                    out.println("POSTED");
                    out.flush();
                    Thread.sleep(PeerMain.LIFETIME_MS); // killed before this ends
                }
                case "survive" -> {
                    postAfterBarrier(co, pd, cq);
                    out.println("POSTED");
                    out.flush();
                    out.println("FAILED " + awaitFailure(co, cq, events, 60_000));
                }
                default -> {
                    System.err.println("unknown role " + args[0]);
                    System.exit(2);
                }
            }
            out.flush();
            co.close();
        } catch (final Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    /** A barrier, then an all-reduce posted (not awaited) into memory that lives until the process ends. */
    static void postAfterBarrier(final Collective co, final ProtectionDomain pd, final CompletionQueue cq) {
        co.barrier(1, 0);
        expect(cq, WcType.BARRIER, 60_000);
        final MemoryRegion mr = pd.regMr(Arena.global().allocate(8L * FAIL_COUNT, 64),
            io.jdet.Access.LOCAL_READ | io.jdet.Access.LOCAL_WRITE);
        co.allreduce(2, null, new DataSegment(mr.address(), 8 * FAIL_COUNT, mr.lKey()), ReduceOp.SUM,
            ReduceType.INT64, 0);
    }

    /**
     * Polls until the posted all-reduce completes, checks it failed (length 0) and that a CO_ERROR event names this
     * group, with no event of another type before it; returns the completion's status.
     */
    static WcStatus awaitFailure(final Collective co, final CompletionQueue cq, final EventQueue events,
                                 final long timeoutMs) {
        final WorkCompletion wc = poll(cq, timeoutMs);
        if (wc.type() != WcType.ALLREDUCE || wc.status() == WcStatus.SUCCESS || wc.length() != 0) {
            throw new AssertionError("expected a failed ALLREDUCE, got " + wc);
        }
        final EventRecord rec = new EventRecord();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            final long leftUs = TimeUnit.NANOSECONDS.toMicros(deadline - System.nanoTime());
            if (leftUs <= 0) {
                throw new AssertionError("no CO_ERROR event for the group within " + timeoutMs + " ms");
            }
            events.waitOn(leftUs, rec);
            if (rec.type() != ResourceType.CO) {
                throw new AssertionError("an event of the group's internal queue pairs reached the user: " + rec);
            }
            if (rec.code() == EventCode.CO_ERROR && rec.handle() == co) {
                return wc.status();
            }
        }
    }

    static void expect(final CompletionQueue cq, final WcType type, final long timeoutMs) {
        final WorkCompletion wc = poll(cq, timeoutMs);
        if (wc.status() != WcStatus.SUCCESS || wc.type() != type) {
            throw new AssertionError("expected a successful " + type + ", got " + wc);
        }
    }

    private static WorkCompletion poll(final CompletionQueue cq, final long timeoutMs) {
        final WorkCompletion[] wc = {new WorkCompletion()};
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (cq.poll(wc) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no completion within " + timeoutMs + " ms");
            }
            Thread.onSpinWait();
        }
        return wc[0];
    }
}
