package io.jdet.perf;

import io.jdet.FaultPlan;
import io.jdet.perf.aeron.AeronMedia;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --qps}, {@code --threads} and {@code --baselines}: parsing, validation, the plan, the server's check. */
class FanoutOptionsTest {

    private static PerfConfig parse(final String... args) {
        final PerfCommand command = new PerfCommand();
        new picocli.CommandLine(command).parseArgs(args);
        return command.config();
    }

    private static String rejection(final String... args) {
        return assertThrows(picocli.CommandLine.ParameterException.class, () -> parse(args)).getMessage();
    }

    @Test
    void shouldReadQpsThreadsAndBaselines() {
        final PerfConfig config = parse("--qps", "4", "--threads", "2", "--baselines", "udp,tcp,aeron");
        assertEquals(new Fanout(4, 2), config.fanout());
        assertEquals(2, config.fanout().qpsPerThread());
        assertTrue(config.fanout().multi());
        assertEquals(Set.of(Baseline.UDP, Baseline.TCP, Baseline.AERON), config.baselines());
        assertEquals(Set.of("qps", "threads", "baselines"), config.given());
        final PerfConfig plain = parse();
        assertEquals(Fanout.SINGLE, plain.fanout());
        assertFalse(plain.fanout().multi());
        assertEquals(Baseline.DEFAULT, plain.baselines());
        assertEquals(Set.of(), parse("--no-baselines").baselines());
        assertEquals(Set.of(), parse("--baselines", "none").baselines());
        assertEquals(Set.of(Baseline.AERON), parse("--baselines", " AERON ").baselines());
    }

    @Test
    void shouldRejectBadShapesAndBaselineLists() {
        assertTrue(rejection("--qps", "4", "--threads", "3").contains("does not divide"));
        assertTrue(rejection("--qps", "2", "--threads", "4").contains("--threads must be in [1, --qps]"));
        assertTrue(rejection("--qps", "0").contains("--qps must be in [1, 64]"));
        assertTrue(rejection("--qps", "65").contains("--qps must be in [1, 64]"));
        assertTrue(rejection("--threads", "2").contains("--threads must be in [1, --qps]"));
        assertTrue(rejection("--baselines", "udp,rdma").contains("unknown baseline 'rdma'"));
        assertTrue(rejection("--baselines", "udp,udp").contains("names udp twice"));
        assertTrue(rejection("--baselines", "").contains("unknown baseline ''"));
        assertTrue(rejection("--baselines", "none,tcp").contains("none excludes"));
        assertTrue(rejection("--baselines", "udp", "--no-baselines").contains("exclude each other"));
    }

    @Test
    void shouldPlanTheChosenBaselinesAndAeronIpcOnLoop() {
        final List<TestKind> udp = kinds(parse("--tests", "lat-send,bw-send", "--size", "8", "--baselines",
            "aeron,udp"));
        assertEquals(List.of(TestKind.LAT_SEND, TestKind.BW_SEND, TestKind.UDP_PINGPONG,
            TestKind.AERON_UDP_PINGPONG, TestKind.UDP_STREAM, TestKind.AERON_UDP_STREAM), udp);
        final List<TestKind> loop = kinds(parse("--nic", "loop", "--tests", "lat-send,bw-write", "--size", "8",
            "--baselines", "aeron"));
        assertEquals(List.of(TestKind.LAT_SEND, TestKind.BW_WRITE, TestKind.AERON_IPC_PINGPONG,
            TestKind.AERON_IPC_STREAM), loop);
        // Aeron stops at its largest message.
        final List<TestKind> huge = kinds(parse("--tests", "lat-send", "--size", "32M", "--baselines",
            "tcp,aeron"));
        assertEquals(List.of(TestKind.LAT_SEND, TestKind.TCP_PINGPONG), huge);
    }

    private static List<TestKind> kinds(final PerfConfig config) {
        return Step.plan(config).stream().map(Step::kind).toList();
    }

    @Test
    void shouldRefuseAClientWhoseQpsThreadsOrBaselinesDifferFromTheServers() {
        final PerfConfig server = new PerfConfig(PerfConfig.Role.SERVER, "loop:x", null, 0,
            List.of(TestKind.BW_SEND), List.of(8), 0, -1, 1000, false, false, FaultPlan.NONE, 4,
            Set.of(Baseline.AERON), 5_000, 5_000, null, null, true, 0, Set.of("qps", "threads", "baselines"),
            new Fanout(4, 2));
        final PerfConfig client = new PerfConfig(PerfConfig.Role.CLIENT, "loop:x", "127.0.0.1", 1,
            List.of(TestKind.BW_SEND), List.of(8), 0, -1, 1000, false, false, FaultPlan.NONE, 4,
            Baseline.DEFAULT, 5_000, 5_000, null, null, true, 0, Set.of(), new Fanout(2, 2));
        final Map<String, Object> options = RunOptions.of(client);
        assertEquals("udp,tcp", options.get("baselines"));
        assertEquals(2L, options.get("qps"));
        final List<String> conflicts = RunOptions.conflicts(server, Message.of("HELLO").with(options).build());
        assertEquals(List.of("--baselines/--no-baselines: server aeron, client udp,tcp",
            "--qps: server 4, client 2"), conflicts);
        final PerfConfig same = new PerfConfig(PerfConfig.Role.CLIENT, "loop:x", "127.0.0.1", 1,
            List.of(TestKind.BW_SEND), List.of(8), 0, -1, 1000, false, false, FaultPlan.NONE, 4,
            Set.of(Baseline.AERON), 5_000, 5_000, null, null, true, 0, Set.of(), new Fanout(4, 2));
        assertEquals(List.of(), RunOptions.conflicts(server, Message.of("HELLO").with(RunOptions.of(same)).build()));
    }

    @Test
    void shouldSizeAeronTermsToHoldEightMessages() {
        assertEquals(64 << 10, AeronMedia.termLength(8));
        assertEquals(64 << 10, AeronMedia.termLength(8 << 10));
        assertEquals(128 << 10, AeronMedia.termLength((8 << 10) + 1));
        assertEquals(8 << 20, AeronMedia.termLength(1 << 20));
        assertEquals(128 << 20, AeronMedia.termLength(AeronMedia.MAX_MESSAGE));
        assertThrows(IllegalArgumentException.class, () -> AeronMedia.termLength(AeronMedia.MAX_MESSAGE + 1));
    }
}
