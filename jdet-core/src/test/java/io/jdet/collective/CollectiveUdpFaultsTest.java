package io.jdet.collective;

import io.jdet.Configuration;
import io.jdet.FaultPlan;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every verb on a group of four members over UDP on loopback (each member its own NIC and socket), with frames
 * lost, duplicated, reordered and corrupted on every link, every result checked byte for byte against a plain
 * computation. Slots of 64 bytes make every message travel in many chunks, so that faults hit the data, the credit
 * returns and the acknowledgements alike; sizes up to a few kilobytes send both through bounce slots (eager) and
 * from the caller's memory (zero copy). "mpich" and "long" between them select every algorithm
 * (see {@link CollectiveVerbsTest}); "rendezvous" and "mixed" send every message, or those of 17 bytes and more, by
 * rendezvous (an advertisement, then RDMA writes straight into the destination), so that faults hit the
 * advertisements and the writes too.
 */
class CollectiveUdpFaultsTest {
    private static final int P = 4;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mpich", "long", "rendezvous", "mixed"})
    void everyVerbSurvivesLossDuplicationReorderingAndCorruption(final String tuning) {
        final Configuration base = CollectiveVerbsTest.tuning(P, tuning);
        final Configuration c = base.collectives(base.collectives().withTimeoutMs(10_000))
            .faults(new FaultPlan(0.03, 0.03, 0.03, 0.03, tuning.hashCode()));
        try (Group g = joined(c)) {
            // twice: a rendezvous moves a message in one write, so the second pass gives every fault its chance
            for (int pass = 0; pass < 2; pass++) {
                CollectiveVerbsTest.barrier(g);
                CollectiveVerbsTest.bcast(g, P - 1, 100);
                CollectiveVerbsTest.bcast(g, 1, 5000);
                CollectiveVerbsTest.bcast(g, 0, 0);
                CollectiveVerbsTest.scatter(g, 1, 300);
                CollectiveVerbsTest.scatterv(g, 2);
                CollectiveVerbsTest.gather(g, P - 1, 300);
                CollectiveVerbsTest.gatherv(g, 0);
                CollectiveVerbsTest.allgather(g, 24);
                CollectiveVerbsTest.allgather(g, 700);
                CollectiveVerbsTest.allgatherv(g);
                CollectiveVerbsTest.alltoall(g, 16);
                CollectiveVerbsTest.alltoall(g, 600);
                CollectiveVerbsTest.alltoallv(g);
                CollectiveVerbsTest.allreduce(g, ReduceOp.SUM, ReduceType.INT64, 3);
                CollectiveVerbsTest.allreduce(g, ReduceOp.SUM, ReduceType.INT64, 700);
                CollectiveVerbsTest.allreduce(g, ReduceOp.MIN, ReduceType.FLOAT64, 2 * P + 1);
                CollectiveVerbsTest.reduce(g, 2, ReduceOp.MAX, ReduceType.INT64, 500);
                CollectiveVerbsTest.inFlight(g);
            }
            long faults = 0;
            for (int i = 0; i < P; i++) {
                final Map<String, Long> counters = g.nics[i].counters();
                for (final String kind : new String[] {"dropped", "duplicated", "reordered", "corrupted"}) {
                    final long n = counters.getOrDefault("fault." + kind, 0L);
                    assertTrue(n > 0, "member " + i + " had no frame " + kind + ": " + counters);
                    faults += n;
                }
            }
            assertTrue(faults > 0);
        }
    }

    private static Group joined(final Configuration c) {
        return new Group(P, c, "udp:127.0.0.1:0").joined();
    }
}
