package io.jdet.perf.trust;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The machine's load from sample {@code /proc} text, and what a step's two samples say. */
class LoadTest {
    private static final String LOADAVG = "0.99 0.47 0.19 2/148 6592\n";
    private static final String STAT = "cpu  10682 0 2978 502602 169 0 107 199 0 0\ncpu0 5274 0 1480 251394 27 0 53 75 0 0\n"
        + "intr 123\n";
    private static final String PRESSURE = "some avg10=22.64 avg60=9.32 avg300=5.06 total=25554630\n"
        + "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";

    @TempDir
    Path proc;

    @Test
    void shouldParseLoadavgStatAndPressure() {
        final LoadSample sample = LoadSample.parse(5, LOADAVG, STAT, PRESSURE);
        assertEquals(0.99, sample.load1());
        assertEquals(0.47, sample.load5());
        assertEquals(0.19, sample.load15());
        assertEquals(2, sample.runnable());
        assertEquals(new CpuTimes(10682, 0, 2978, 502602, 169, 0, 107, 199), sample.cpu());
        assertEquals(22.64, sample.cpuWaitAvg10());
        assertEquals(25_554_630, sample.cpuWaitTotalUs());
        assertEquals(10682 + 2978 + 502602 + 169 + 107 + 199, sample.cpu().total());
        assertEquals(10682 + 2978 + 107 + 199, sample.cpu().busy());
    }

    @Test
    void shouldLeaveMissingOrMalformedFieldsUnknown() {
        final LoadSample none = LoadSample.parse(5, null, null, null);
        assertTrue(Double.isNaN(none.load1()));
        assertEquals(-1, none.runnable());
        assertNull(none.cpu());
        assertTrue(Double.isNaN(none.cpuWaitAvg10()));
        assertEquals(-1, none.cpuWaitTotalUs());
        final LoadSample bad = LoadSample.parse(5, "x y z", "cpu a b c d", "some avg10=? total=");
        assertTrue(Double.isNaN(bad.load1()));
        assertNull(bad.cpu());
        assertEquals(-1, bad.cpuWaitTotalUs());
        // A kernel before 2.6.11 has no steal column: it reads as 0.
        assertEquals(new CpuTimes(1, 2, 3, 4, 0, 0, 0, 0), CpuTimes.parse("cpu 1 2 3 4\n"));
    }

    @Test
    void shouldReadAProcTreeAndToleratePartsMissing() throws IOException {
        Files.writeString(proc.resolve("loadavg"), LOADAVG);
        Files.writeString(proc.resolve("stat"), STAT);
        final LoadSample withoutPressure = new ProcReader(proc).sample();
        assertEquals(0.99, withoutPressure.load1());
        assertNotNull(withoutPressure.cpu());
        assertEquals(-1, withoutPressure.cpuWaitTotalUs());
        Files.createDirectory(proc.resolve("pressure"));
        Files.writeString(proc.resolve("pressure/cpu"), PRESSURE);
        assertEquals(25_554_630, new ProcReader(proc).sample().cpuWaitTotalUs());
    }

    @Test
    void shouldDeriveWaitStealAndBusyShareOfAStep() {
        // One second of wall time: 300 ms of CPU wait; 1000 ticks, 100 stolen, 600 busy (steal included).
        final LoadSample before = new LoadSample(0, 1.0, 1, 1, 2, new CpuTimes(100, 0, 0, 1000, 0, 0, 0, 0), 0, 1000);
        final LoadSample after = new LoadSample(1_000_000_000L, 1.5, 1, 1, 2,
            new CpuTimes(500, 0, 0, 1500, 0, 0, 0, 100), 0, 301_000);
        final StepLoad load = new StepLoad(before, after, 2);
        assertEquals(30.0, load.cpuWaitPercent(), 1e-9);
        assertEquals(10.0, load.stealPercent(), 1e-9);
        assertEquals(50.0, load.cpuBusyPercent(), 1e-9);
        assertTrue(load.busy());
        assertEquals(2, load.busyReasons().size(), load.busyReasons()::toString);
        assertTrue(load.busyReasons().get(0).contains("waited for a CPU 30%"), load.busyReasons()::toString);
        assertTrue(load.busyReasons().get(1).contains("stole 10%"), load.busyReasons()::toString);
    }

    @Test
    void shouldCallAMachineBusyWhenItsLoadExceedsItsCores() {
        final LoadSample quiet = LoadSample.parse(0, "1.50 1 1 1/100 1", STAT, "some avg10=1.00 total=10");
        final LoadSample loaded = LoadSample.parse(1_000_000_000L, "6.20 5 4 9/100 1", STAT,
            "some avg10=1.00 total=10");
        assertNull(quiet.busy(2));
        assertEquals("load average 6.20 on 2 CPUs", loaded.busy(2));
        assertNull(loaded.busy(8));
        final StepLoad step = new StepLoad(quiet, loaded, 2);
        assertEquals(java.util.List.of("load average 6.20 on 2 CPUs"), step.busyReasons());
        assertFalse(new StepLoad(quiet, quiet, 2).busy());
        assertTrue(LoadSample.parse(0, LOADAVG, STAT, PRESSURE).busy(2).contains("waited for a CPU 23%"));
    }

    @Test
    void shouldNotJudgeWhatCouldNotBeRead() {
        final LoadSample none = LoadSample.parse(0, null, null, null);
        final StepLoad load = new StepLoad(none, LoadSample.parse(1000, null, null, null), 2);
        assertTrue(Double.isNaN(load.cpuWaitPercent()));
        assertTrue(Double.isNaN(load.stealPercent()));
        assertFalse(load.busy());
    }
}
