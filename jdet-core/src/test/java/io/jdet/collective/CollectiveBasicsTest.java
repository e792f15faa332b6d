package io.jdet.collective;

import io.jdet.MemoryRegion;
import io.jdet.ReduceOp;
import io.jdet.ReduceType;
import io.jdet.WcType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CollectiveBasicsTest {

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 7})
    void barrierAndAllreduce(final int p) {
        try (Group g = new Group(p).joined()) {
            for (int i = 0; i < p; i++) {
                g.cos[i].barrier(7, 0);
            }
            g.expectAll(WcType.BARRIER, 0);
            final int n = 5;
            final MemoryRegion[] mr = new MemoryRegion[p];
            for (int i = 0; i < p; i++) {
                mr[i] = g.region(i, 8 * n);
                for (int e = 0; e < n; e++) {
                    mr[i].segment().setAtIndex(ValueLayout.JAVA_LONG, e, i * 10L + e);
                }
                g.cos[i].allreduce(8, null, Group.ds(mr[i]), ReduceOp.SUM, ReduceType.INT64, 0);
            }
            g.expectAll(WcType.ALLREDUCE, 8 * n);
            for (int i = 0; i < p; i++) {
                for (int e = 0; e < n; e++) {
                    long want = 0;
                    for (int j = 0; j < p; j++) {
                        want += j * 10L + e;
                    }
                    assertEquals(want, mr[i].segment().getAtIndex(ValueLayout.JAVA_LONG, e), "member " + i);
                }
            }
        }
    }
}
