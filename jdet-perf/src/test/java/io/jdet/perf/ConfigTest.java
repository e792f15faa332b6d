package io.jdet.perf;

import io.jdet.FaultPlan;
import io.jdet.perf.jdet.ConnectInfo;
import io.jdet.perf.jdet.QpShape;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Sizes, the validated configuration, the plan of steps, and what the ends tell each other. */
class ConfigTest {

    private static PerfConfig config(final PerfConfig.Role role, final String nic, final String host,
                                     final long iterations, final int burst) {
        return new PerfConfig(role, nic, host, 0, List.of(TestKind.LAT_SEND, TestKind.BW_WRITE, TestKind.BW_ATOMIC),
            List.of(8, 1 << 20), iterations, -1, burst, false, false, FaultPlan.NONE, 4, true, 30_000, 30_000, null,
            null, true, 0, java.util.Set.of());
    }

    @Test
    void shouldParseAndFormatSizesInBinaryMultiples() {
        assertEquals(4096, Sizes.parse("4K"));
        assertEquals(65536, Sizes.parse("64k"));
        assertEquals(1 << 20, Sizes.parse(" 1M "));
        assertEquals(1 << 26, Sizes.parse("64M"));
        assertEquals(List.of(8, 64, 4096), java.util.Arrays.stream(Sizes.parseList("8,64,4K")).boxed().toList());
        assertEquals("64K", Sizes.format(65536));
        assertEquals("1M", Sizes.format(1 << 20));
        assertEquals("70000", Sizes.format(70000));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("0"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("65M"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("K"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse(""));
    }

    @Test
    void shouldPickTheNicAndFallbackByRole() {
        final PerfConfig embedded = config(PerfConfig.Role.EMBEDDED, null, null, 0, 1000);
        assertEquals("udp:127.0.0.1", embedded.nicName());
        assertTrue(embedded.loopFallback());
        final PerfConfig explicit = config(PerfConfig.Role.EMBEDDED, "loop", null, 0, 1000);
        assertEquals("loop", explicit.nicName());
        assertFalse(explicit.loopFallback());
        final PerfConfig client = config(PerfConfig.Role.CLIENT, null, "h", 0, 1000);
        assertNull(client.nicName());
        assertFalse(client.loopFallback());
        assertThrows(IllegalArgumentException.class, () -> config(PerfConfig.Role.CLIENT, null, null, 0, 1000));
        assertThrows(IllegalArgumentException.class, () -> config(PerfConfig.Role.SERVER, null, "h", 0, 1000));
    }

    @Test
    void shouldScaleIterationsWithTheSizeUnlessGiven() {
        final PerfConfig auto = config(PerfConfig.Role.EMBEDDED, null, null, 0, 1000);
        assertEquals(10_000, auto.iterations(TestKind.LAT_SEND, 8));
        assertEquals(100, auto.iterations(TestKind.LAT_SEND, 1 << 20));
        assertEquals(20_000, auto.iterations(TestKind.BW_WRITE, 8));
        assertEquals(256, auto.iterations(TestKind.BW_WRITE, 1 << 20));
        final PerfConfig fixed = config(PerfConfig.Role.EMBEDDED, null, null, 77, 1000);
        assertEquals(77, fixed.iterations(TestKind.BW_WRITE, 1 << 20));
        assertEquals(77, fixed.burst(77));
    }

    @Test
    void shouldPlanSizeBySizeWithTheAtomicOnceAndWholeWarmupBursts() {
        final List<Step> plan = Step.plan(config(PerfConfig.Role.EMBEDDED, null, null, 250, 100));
        assertEquals(List.of("lat-send@8", "bw-write@8", "bw-atomic@8", "udp-pingpong@8", "tcp-pingpong@8",
            "udp-stream@8", "tcp-stream@8", "lat-send@1M", "bw-write@1M", "udp-pingpong@1M", "tcp-pingpong@1M",
            "udp-stream@1M", "tcp-stream@1M"),
            plan.stream().map(s -> s.kind().label() + "@" + Sizes.format(s.size())).toList());
        for (final Step step : plan) {
            assertEquals(250, step.iterations());
            if (!step.kind().latency()) {
                assertEquals(100, step.burst());
                assertEquals(0, step.warmup() % step.burst(), step::toString);
                assertTrue(step.warmup() >= 125, step::toString);
            }
            assertEquals(step.size() == 8, step.first(), step::toString);
            assertEquals(new Step(step.kind(), step.size(), step.iterations(), step.warmup(), step.burst(), false),
                Step.of(step.toMessage("TEST")));
        }
    }

    @Test
    void shouldRoundTripConnectInfoAndReplaceAWildcardAddress() {
        final ConnectInfo info = new ConnectInfo(7, "udp:0.0.0.0:4000", 1L << 40, 11, 1L << 41, 12, 4, 5L);
        assertEquals(info, ConnectInfo.fromFields(info.toFields()));
        assertEquals("udp:10.1.2.3:4000", info.reachableFrom("10.1.2.3").nicAddress());
        assertEquals("udp:[::1]:4000", info.reachableFrom("::1").nicAddress());
        final ConnectInfo loop = new ConnectInfo(7, "loop:default/2", 0, 0, 0, 0, 4, 5L);
        assertEquals(loop, loop.reachableFrom("127.0.0.1"));
        assertThrows(IllegalArgumentException.class, () -> ConnectInfo.fromFields(Map.of("qp", "1")));
    }

    @Test
    void shouldShapeQueuesAsDetPerfDoesAndBoundBuffers() {
        final QpShape burst = QpShape.of(TestKind.BW_WRITE, 1 << 20, 1000, 5000, false);
        assertEquals(1001, burst.sqDepth());
        assertTrue(burst.bufferBytes() <= QpShape.SLOT_BUDGET, burst::toString);
        final QpShape send = QpShape.of(TestKind.BW_SEND, 64, 1000, 5000, false);
        assertEquals(send.rqDepth(), send.receives());
        assertTrue(send.rqDepth() > 1000);
        assertTrue(send.cqSize() >= send.sqDepth() + send.rqDepth());
        final QpShape atomic = QpShape.of(TestKind.BW_ATOMIC, 4096, 10, 100, false);
        assertEquals(8, atomic.size());
        assertEquals(0, QpShape.of(TestKind.LAT_WRITE, 64, 1, 10, false).receives());
        assertEquals(QpShape.PING_RECEIVES, QpShape.of(TestKind.LAT_WRITE, 64, 1, 10, true).receives());
    }

    @Test
    void shouldCarryTheSettingsInTheHello() {
        final RunSettings settings = new RunSettings(true, true, 8, 1234, new FaultPlan(0.1, 0.2, 0.3, 0.4, 5));
        assertEquals(settings, RunSettings.of(settings.toMessage()));
    }
}
