import io.jdet.*;
import java.lang.foreign.*;
import java.nio.file.*;
import java.util.*;

/**
 * Wake-ups per blocking round trip (issue 7, "a blocking wait costs one wake-up"): a send/receive ping-pong between
 * two NICs of one JVM in wait mode (completion queue armed, thread blocked in {@code EventQueue.waitOn}), counting
 * each jdet thread's context switches ({@code /proc/self/task/<tid>/status}) over the timed round trips. A
 * voluntary switch is a thread going to sleep, so it counts the wake-ups; unlike a latency, the count hardly depends
 * on how busy the machine is. Ideal: one per round trip for the client and one for the server (each is woken once,
 * by the frame it waits for), none for the progress threads.
 *
 * <p>Run, after {@code ./mvnw -o install -DskipTests}: {@code java --enable-native-access=ALL-UNNAMED -cp
 * jdet-perf/target/jdet-perf.jar tools/wakeups/WakeCount.java} with {@code -Dn=<round trips>} (5000) and
 * {@code -Dnic=<name>} ({@code udp:127.0.0.1}; {@code loop:wc}, {@code shm:wc} for the other links) before the
 * class name.
 */
public class WakeCount {
    static final int N = Integer.getInteger("n", 5000);

    static final class End {
        EventQueue eq; Nic nic; CompletionQueue cq; QueuePair qp; MemoryRegion mr; DataSegment[] sge;
        final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        final EventRecord rec = new EventRecord();
        End(Det det, Arena arena) {
            eq = det.createEvent(null);
            nic = det.openNic(System.getProperty("nic", "udp:127.0.0.1"), null);
            cq = nic.createCq(256, eq);
            ProtectionDomain pd = nic.allocPd();
            qp = pd.createQp(new QpCreate(cq, cq, 64, 64, 1, 1, 1, 1));
            mr = pd.regMr(arena.allocate(64, 64), Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.LOCAL_READ);
            sge = new DataSegment[] {new DataSegment().set(mr, 0, 8)};
        }
        /** Waits (armed, blocking) until a receive completes; counts send completions on the way. */
        void awaitRecv() {
            while (true) {
                int n = cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    if (wcs[i].status() != WcStatus.SUCCESS) throw new IllegalStateException(wcs[i].toString());
                    if (wcs[i].id() == 1) return; // receives have id 1
                }
                cq.arm(CqArm.NEXT_SOLICITED, 0);
                n = cq.poll(wcs);
                boolean got = false;
                for (int i = 0; i < n; i++) {
                    if (wcs[i].id() == 1) got = true;
                }
                if (got) return;
                try { eq.waitOn(1_000_000, rec); } catch (DetException e) { if (e.errno() != Errno.ETIME) throw e; }
            }
        }
    }

    static Map<String, long[]> switches() throws Exception {
        Map<String, long[]> m = new TreeMap<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : ds) {
                try {
                    String name = Files.readString(t.resolve("comm")).trim();
                    if (!(name.startsWith("jdet") || name.equals("client") || name.equals("server"))) continue;
                    long v = 0, nv = 0;
                    for (String l : Files.readAllLines(t.resolve("status"))) {
                        if (l.startsWith("voluntary_ctxt_switches")) v = Long.parseLong(l.split("\\s+")[1]);
                        if (l.startsWith("nonvoluntary_ctxt_switches")) nv = Long.parseLong(l.split("\\s+")[1]);
                    }
                    m.merge(name + "/" + t.getFileName(), new long[] {v, nv}, (a, b) -> a);
                } catch (NoSuchFileException gone) { }
            }
        }
        return m;
    }

    public static void main(String[] args) throws Exception {
        try (Det det = Det.open(); Arena arena = Arena.ofShared()) {
            End c = new End(det, arena), s = new End(det, arena);
            c.qp.modify(new QpModify().connect(s.nic.address(), s.qp.number(), s.qp.query().localPsn()));
            s.qp.modify(new QpModify().connect(c.nic.address(), c.qp.number(), c.qp.query().localPsn()));
            int warm = N / 4;
            final java.util.concurrent.CountDownLatch finished = new java.util.concurrent.CountDownLatch(1);
            Thread server = new Thread(() -> {
                for (int i = 0; i < warm + N; i++) {
                    s.qp.recv(1, s.sge, 1);
                    s.awaitRecv();
                    s.qp.send(2, s.sge, 1, WrFlags.SOLICITED, 0);
                }
                try { finished.await(); } catch (InterruptedException e) { }
            }, "server");
            s.qp.recv(1, s.sge, 1);
            server.start();
            final long[] t = new long[2];
            @SuppressWarnings("unchecked") final Map<String, long[]>[] snap = new Map[2];
            Thread client = new Thread(() -> {
                try {
                    for (int i = 0; i < warm + N; i++) {
                        if (i == warm) { snap[0] = switches(); t[0] = System.nanoTime(); }
                        c.qp.recv(1, c.sge, 1);
                        c.qp.send(2, c.sge, 1, WrFlags.SOLICITED, 0);
                        c.awaitRecv();
                    }
                    t[1] = System.nanoTime();
                    snap[1] = switches();
                    finished.countDown();
                } catch (Exception e) { throw new RuntimeException(e); }
            }, "client");
            client.start();
            client.join();
            server.join();
            long total = 0, totalNv = 0;
            for (var e : snap[1].entrySet()) {
                long[] a = snap[0].getOrDefault(e.getKey(), new long[2]);
                long dv = e.getValue()[0] - a[0], dn = e.getValue()[1] - a[1];
                total += dv; totalNv += dn;
                System.out.printf("%-28s voluntary %.2f  involuntary %.2f per round trip%n", e.getKey(), dv / (double) N, dn / (double) N);
            }
            System.out.printf("all jdet/client/server threads: voluntary %.2f, involuntary %.2f per round trip; %.1f us per round trip (%d round trips)%n",
                total / (double) N, totalNv / (double) N, (t[1] - t[0]) / 1e3 / N, N);
        }
    }
}
