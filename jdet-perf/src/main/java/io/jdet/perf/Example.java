package io.jdet.perf;

import io.jdet.Access;
import io.jdet.CompletionQueue;
import io.jdet.DataSegment;
import io.jdet.Det;
import io.jdet.EventQueue;
import io.jdet.MemoryRegion;
import io.jdet.Nic;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QpModify;
import io.jdet.QueuePair;
import io.jdet.WcStatus;
import io.jdet.WorkCompletion;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The bundled example: two NICs on the in-process fabric, a send/receive ping-pong and an RDMA read, with every
 * byte checked. {@code ./jdet example} runs it.
 */
public final class Example {
    private static final int ROUNDS = 10_000;
    private static final int WARMUP_ROUNDS = 50_000;
    private static final int SIZE = 64;
    private static final int READ_SIZE = 1 << 20;

    private Example() {
    }

    /**
     * Runs the example.
     *
     * @param out where to print what it did
     * @return 0 on success, 1 if a check failed
     */
    public static int run(final PrintStream out) {
        // The device closes first: its regions must be gone before their memory is freed.
        try (Arena arena = Arena.ofShared(); Det det = Det.open()) {
            final EventQueue events = det.createEvent(null);
            final Nic nicA = det.openNic("loop:example", events);
            final Nic nicB = det.openNic("loop:example", events);
            out.printf("opened %s and %s on the in-process fabric%n", nicA.address(), nicB.address());
            final Side a = new Side(nicA, arena);
            final Side b = new Side(nicB, arena);
            a.qp.modify(new QpModify().connect(nicB.address(), b.qp.number(), b.qp.query().localPsn()));
            b.qp.modify(new QpModify().connect(nicA.address(), a.qp.number(), a.qp.query().localPsn()));
            out.printf("connected queue pair %d to %d%n", a.qp.number(), b.qp.number());

            long start = System.nanoTime();
            for (int i = -WARMUP_ROUNDS; i < ROUNDS; i++) {
                if (i == 0) {
                    start = System.nanoTime();
                }
                a.buffer.set(ValueLayout.JAVA_INT_UNALIGNED, 0, i);
                b.recv();
                a.send(i);
                if (!b.await(i) || b.buffer.get(ValueLayout.JAVA_INT_UNALIGNED, READ_SIZE) != i) {
                    out.println("ping " + i + " did not arrive intact");
                    return 1;
                }
                a.recv();
                b.buffer.set(ValueLayout.JAVA_INT_UNALIGNED, 0, ~i);
                b.send(i);
                if (!a.await(i) || a.buffer.get(ValueLayout.JAVA_INT_UNALIGNED, READ_SIZE) != ~i) {
                    out.println("pong " + i + " did not arrive intact");
                    return 1;
                }
            }
            final double oneWayUs = (System.nanoTime() - start) / 1e3 / ROUNDS / 2;
            out.printf("ping-pong: %d round trips of %d bytes (after %d to warm up), %.2f us one way%n", ROUNDS, SIZE,
                WARMUP_ROUNDS, oneWayUs);

            for (int i = 0; i < READ_SIZE; i += 8) {
                b.buffer.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 31L + 7);
            }
            final long readStart = System.nanoTime();
            a.segment[0].set(a.region, 0, READ_SIZE);
            a.qp.read(99, a.segment, 1, b.region.address(), b.region.rKey(), 0);
            if (!a.await(99)) {
                out.println("the RDMA read failed");
                return 1;
            }
            final double readUs = (System.nanoTime() - readStart) / 1e3;
            final boolean same = a.buffer.asSlice(0, READ_SIZE).mismatch(b.buffer.asSlice(0, READ_SIZE)) == -1;
            out.printf("RDMA read: %d bytes in %.1f us (%.0f MB/s), data %s%n", READ_SIZE, readUs, READ_SIZE / readUs,
                same ? "identical" : "DIFFERENT");
            return same ? 0 : 1;
        }
    }

    /** One end: a domain, a completion queue, a queue pair and a registered buffer. */
    private static final class Side {
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemorySegment buffer;
        final MemoryRegion region;
        final DataSegment[] segment = {new DataSegment()};
        final WorkCompletion[] completions = {new WorkCompletion(), new WorkCompletion()};

        Side(final Nic nic, final Arena arena) {
            pd = nic.allocPd();
            cq = nic.createCq(64, null);
            qp = pd.createQp(QpCreate.of(cq, 16, 1));
            buffer = arena.allocate(2L * READ_SIZE, 64);
            region = pd.regMr(buffer, Access.LOCAL_READ | Access.LOCAL_WRITE | Access.REMOTE_READ
                | Access.REMOTE_WRITE);
        }

        void send(final long id) {
            segment[0].set(region, 0, SIZE);
            qp.send(id, segment, 1, 0, 0);
        }

        void recv() {
            segment[0].set(region, READ_SIZE, SIZE);
            qp.recv(-1, segment, 1);
        }

        /** Polls until the work request with this id (or a receive) completes; false on an error or timeout. */
        boolean await(final long id) {
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (System.nanoTime() < deadline) {
                final int n = cq.poll(completions);
                for (int i = 0; i < n; i++) {
                    if (completions[i].status() != WcStatus.SUCCESS) {
                        return false;
                    }
                    if (completions[i].id() == -1 || completions[i].id() == id && completions[i].type()
                        == io.jdet.WcType.RDMA_READ) {
                        return true;
                    }
                }
            }
            return false;
        }
    }
}
