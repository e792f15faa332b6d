package io.jdet.collective;

import io.jdet.Configuration;
import io.jdet.FaultPlan;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A member's next step starts once its data has arrived, while its own zero-copy sends (rendezvous writes, read
 * from the caller's memory) may still wait for their acknowledgements; it must not change a byte such a send still
 * reads, since a retransmission reads it again. Over UDP and over the in-process fabric (whose receiver copies a
 * large payload straight out of the sender's memory when it takes the frame in), with a tenth of the frames lost
 * and some duplicated or reordered, many sends are retransmitted after the step that follows them began. Every
 * message goes by rendezvous ("rendezvous", or those of 17 bytes and more, "mixed"); the all-reduces (recursive
 * halving and doubling, or the ring, and on three members the fold into a power of two) and all-to-alls write, in
 * later steps, memory that earlier steps sent from. Every result is checked byte for byte: a step that wrote such
 * memory too early hands a peer the later bytes.
 */
class CollectiveInFlightTest {
    static Stream<Arguments> cases() {
        return Stream.of("udp:127.0.0.1:0", "fabric").flatMap(link -> Stream.of(Arguments.of(link, 4, "rendezvous"),
            Arguments.of(link, 4, "mixed"), Arguments.of(link, 3, "rendezvous"), Arguments.of(link, 3, "mixed")));
    }

    @ParameterizedTest(name = "{0} p={1} {2}")
    @MethodSource("cases")
    void laterStepsNeverChangeWhatAnUnacknowledgedSendReads(final String link, final int p, final String tuning) {
        final Configuration base = CollectiveVerbsTest.tuning(p, tuning);
        final Configuration c = base.collectives(base.collectives().withTimeoutMs(10_000))
            .faults(new FaultPlan(0.1, 0.03, 0.03, 0, 31L * p + tuning.hashCode() + link.hashCode()));
        try (Group g = new Group(p, c, link.equals("fabric") ? null : link).joined()) {
            for (int i = 0; i < 15; i++) {
                CollectiveVerbsTest.allreduceInPlace(g, ReduceOp.SUM, ReduceType.INT64, 1);
                CollectiveVerbsTest.allreduceInPlace(g, ReduceOp.SUM, ReduceType.INT64, 700);
                CollectiveVerbsTest.allreduceInPlace(g, ReduceOp.MAX, ReduceType.FLOAT64, 2 * p + 1);
                CollectiveVerbsTest.allreduce(g, ReduceOp.SUM, ReduceType.INT64, 700);
                CollectiveVerbsTest.alltoall(g, 600);
                CollectiveVerbsTest.allgather(g, 700);
            }
            long dropped = 0;
            for (int i = 0; i < p; i++) {
                dropped += g.nics[i].counters().getOrDefault("fault.dropped", 0L);
            }
            assertTrue(dropped > 0, "no frame was lost");
        }
    }
}
