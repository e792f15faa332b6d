package io.jdet.bench;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Bytes allocated per operation by the threads that run the code under test, separately from everything else in
 * the JVM. JMH's {@code -prof gc} reports {@code gc.alloc.rate.norm} over every thread, JMH's own included: a few
 * tens of KB per iteration, which reads as a few hundredths of a byte per operation when an operation takes a
 * microsecond. This profiler splits the same measurement by thread name, so a true zero shows as zero:
 * <ul>
 *   <li>{@code alloc.bench.norm}: the JMH worker threads (the benchmark method and what it calls), B/op, and
 *       {@code alloc.bench}, the same in bytes per iteration: JMH's own stub allocates a couple of KB per iteration
 *       in the worker thread, so a figure that stays flat per iteration whatever the operation count is that, while
 *       one object per operation would read at least 16 B/op;</li>
 *   <li>{@code alloc.jdet.norm}: jdet's own threads ({@code jdet-*}, the NICs' progress threads), B/op;</li>
 *   <li>{@code alloc.other}: every other thread (JMH, the JVM, Aeron's driver and client), bytes per iteration.</li>
 * </ul>
 * Use it with {@code -prof io.jdet.bench.ThreadAllocationProfiler}. Threads that started and ended inside one
 * iteration are missed; the benchmarks here start none.
 */
public final class ThreadAllocationProfiler implements InternalProfiler {
    private static final String WORKER_MARK = "-jmh-worker-";
    private static final String JDET_PREFIX = "jdet-";

    private final com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private Map<Long, Long> before = new HashMap<>();

    /** Creates the profiler; JMH calls this. */
    public ThreadAllocationProfiler() {
        if (!threads.isThreadAllocatedMemorySupported()) {
            throw new IllegalStateException("this JVM does not measure allocation per thread");
        }
        threads.setThreadAllocatedMemoryEnabled(true);
    }

    @Override
    public String getDescription() {
        return "allocation per operation of the benchmark's own threads, apart from JMH's";
    }

    @Override
    public void beforeIteration(final BenchmarkParams benchmarkParams, final IterationParams iterationParams) {
        before = snapshot();
    }

    @Override
    public Collection<? extends Result> afterIteration(final BenchmarkParams benchmarkParams,
                                                       final IterationParams iterationParams,
                                                       final IterationResult result) {
        final Map<Long, Long> after = snapshot();
        final long[] ids = new long[after.size()];
        int n = 0;
        for (final long id : after.keySet()) {
            ids[n++] = id;
        }
        final ThreadInfo[] infos = threads.getThreadInfo(ids);
        long bench = 0;
        long jdet = 0;
        long other = 0;
        for (int i = 0; i < ids.length; i++) {
            if (infos[i] == null) {
                continue;
            }
            final long delta = after.get(ids[i]) - before.getOrDefault(ids[i], 0L);
            final String name = infos[i].getThreadName();
            if (name.contains(WORKER_MARK)) {
                bench += delta;
            } else if (name.startsWith(JDET_PREFIX)) {
                jdet += delta;
            } else {
                other += delta;
            }
        }
        final long ops = Math.max(1, result.getMetadata().getAllOps());
        final List<Result> results = new ArrayList<>();
        results.add(new ScalarResult("alloc.bench.norm", (double) bench / ops, "B/op", AggregationPolicy.AVG));
        results.add(new ScalarResult("alloc.bench", bench, "B", AggregationPolicy.AVG));
        results.add(new ScalarResult("alloc.jdet.norm", (double) jdet / ops, "B/op", AggregationPolicy.AVG));
        results.add(new ScalarResult("alloc.other", other, "B", AggregationPolicy.AVG));
        return results;
    }

    private Map<Long, Long> snapshot() {
        final long[] ids = threads.getAllThreadIds();
        final long[] bytes = threads.getThreadAllocatedBytes(ids);
        final Map<Long, Long> map = new HashMap<>(ids.length * 2);
        for (int i = 0; i < ids.length; i++) {
            if (bytes[i] >= 0) {
                map.put(ids[i], bytes[i]);
            }
        }
        return map;
    }
}
