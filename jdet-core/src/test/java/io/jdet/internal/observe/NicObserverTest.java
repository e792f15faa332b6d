package io.jdet.internal.observe;

import io.jdet.EventCode;
import io.jdet.WcStatus;
import io.jdet.WcType;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The observer called directly (no NIC, no traffic): the fields of each JFR event, the level of each log record,
 * and the MBean's life. {@code ObservabilityTest} drives the same reports through a NIC, more slowly.
 */
class NicObserverTest {
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    private static String nic(final String what) {
        return "loop:observer-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    @Test
    void publishesTheCountersUntilClosed() throws Exception {
        final String address = nic("mbean");
        final ObjectName name = new ObjectName("io.jdet:type=Nic,name=" + ObjectName.quote(address));
        final NicObserver o = new NicObserver(address);
        o.close(); // never published: nothing to withdraw
        o.publish(() -> Map.of("frames.sent", 4L));
        assertTrue(SERVER.isRegistered(name));
        assertEquals(4L, SERVER.getAttribute(name, "frames.sent"));
        o.close();
        assertFalse(SERVER.isRegistered(name));
        o.publish(() -> Map.of("frames.sent", 5L));
        assertEquals(5L, SERVER.getAttribute(name, "frames.sent"), "published again after a close");
        o.close();
        assertFalse(SERVER.isRegistered(name));
    }

    @Test
    void recordsEachReportAsAJfrEventWithItsFields() throws Exception {
        final String address = nic("jfr");
        final NicObserver o = new NicObserver(address);
        final Path file = dir.resolve("observer.jfr");
        try (Recording recording = new Recording()) {
            for (final String event : List.of("ConnectionUp", "ConnectionDown", "RetransmitTimeout",
                "ReceiverNotReady", "ErrorCompletion")) {
                recording.enable("io.jdet." + event);
            }
            recording.start();
            o.connectionUp(0x11, "loop:peer", 0x22);
            o.connectionDown(0x11, "loop:peer", 0x22, EventCode.DISCONNECT.code() | EventCode.REMOTE_BIT, true,
                false);
            o.connectionDown(0x12, "loop:peer", 0x23, 999, false, true);
            o.retransmitTimeout(0x11, true, -2, 5_000_000);
            o.retransmitTimeout(0x11, false, 7, 1_000);
            o.receiverNotReady(0x13, -1);
            o.errorCompletion(0x14, 77, WcStatus.RETRY_EXCEEDED, WcType.RDMA_WRITE);
            o.errorCompletion(0x14, 78, WcStatus.FLUSHED, null);
            recording.stop();
            recording.dump(file);
        }
        final List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
            .filter(e -> address.equals(e.getString("nic"))).toList();
        final List<RecordedEvent> up = of(events, "ConnectionUp");
        assertEquals(1, up.size());
        assertEquals(0x11, up.get(0).getInt("qp"));
        assertEquals("loop:peer", up.get(0).getString("peer"));
        assertEquals(0x22, up.get(0).getInt("peerQp"));

        final List<RecordedEvent> down = of(events, "ConnectionDown");
        assertEquals(2, down.size());
        assertEquals("DISCONNECT", down.get(0).getString("event"), "the remote bit is not part of the name");
        assertTrue(down.get(0).getBoolean("remote"));
        assertFalse(down.get(0).getBoolean("error"));
        assertEquals(0x22, down.get(0).getInt("peerQp"));
        assertEquals("event 999", down.get(1).getString("event"), "an unknown code is named by its number");
        assertFalse(down.get(1).getBoolean("remote"));
        assertTrue(down.get(1).getBoolean("error"));
        assertEquals(0x12, down.get(1).getInt("qp"));

        final List<RecordedEvent> timeouts = of(events, "RetransmitTimeout");
        assertEquals(2, timeouts.size());
        assertEquals("response", timeouts.get(0).getString("stream"));
        assertEquals(0xFFFF_FFFEL, timeouts.get(0).getLong("sequence"), "sequence numbers are unsigned");
        assertEquals(5_000_000L, timeouts.get(0).getLong("rto"));
        assertEquals("request", timeouts.get(1).getString("stream"));
        assertEquals(7L, timeouts.get(1).getLong("sequence"));

        final List<RecordedEvent> rnr = of(events, "ReceiverNotReady");
        assertEquals(1, rnr.size());
        assertEquals(0x13, rnr.get(0).getInt("qp"));
        assertEquals(0xFFFF_FFFFL, rnr.get(0).getLong("sequence"));

        final List<RecordedEvent> errors = of(events, "ErrorCompletion");
        assertEquals(2, errors.size());
        assertEquals(0x14, errors.get(0).getInt("qp"));
        assertEquals(77L, errors.get(0).getLong("wrId"));
        assertEquals("RETRY_EXCEEDED", errors.get(0).getString("status"));
        assertEquals("RDMA_WRITE", errors.get(0).getString("type"));
        assertEquals("FLUSHED", errors.get(1).getString("status"));
        assertNull(errors.get(1).getString("type"));
    }

    private static List<RecordedEvent> of(final List<RecordedEvent> events, final String type) {
        return events.stream().filter(e -> e.getEventType().getName().equals("io.jdet." + type)).toList();
    }

    /**
     * Captures what the {@code io.jdet} logger (java.util.logging behind {@code System.Logger}) publishes, at a
     * level, as (level, message) pairs. Reflective because the test runs inside module io.jdet, which does not read
     * java.logging (core reflection assumes readability).
     */
    private static final class JulCapture implements AutoCloseable {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final Class<?> loggerClass;
        private final Class<?> levelClass;
        private final Class<?> handlerClass;
        private final Object logger;
        private final Object before;
        private final Object handler;

        JulCapture(final String level) throws ReflectiveOperationException {
            loggerClass = Class.forName("java.util.logging.Logger");
            levelClass = Class.forName("java.util.logging.Level");
            handlerClass = Class.forName("java.util.logging.Handler");
            final Class<?> formatterClass = Class.forName("java.util.logging.Formatter");
            logger = loggerClass.getMethod("getLogger", String.class).invoke(null, "io.jdet");
            before = loggerClass.getMethod("getLevel").invoke(logger);
            final Object formatter = Class.forName("java.util.logging.XMLFormatter").getConstructor().newInstance();
            handler = Class.forName("java.util.logging.StreamHandler").getConstructor(OutputStream.class,
                formatterClass).newInstance(out, formatter);
            handlerClass.getMethod("setLevel", levelClass).invoke(handler, levelClass.getField("ALL").get(null));
            loggerClass.getMethod("setLevel", levelClass).invoke(logger, levelClass.getField(level).get(null));
            loggerClass.getMethod("addHandler", handlerClass).invoke(logger, handler);
        }

        /** The (level, message) of each record that names the NIC, in order. */
        List<String[]> records(final String nic) throws ReflectiveOperationException {
            handlerClass.getMethod("flush").invoke(handler);
            final Matcher m = RECORD.matcher(out.toString(StandardCharsets.UTF_8));
            final List<String[]> found = new ArrayList<>();
            while (m.find()) {
                if (m.group(2).contains(nic)) {
                    found.add(new String[] {m.group(1), m.group(2)});
                }
            }
            return found;
        }

        @Override
        public void close() throws ReflectiveOperationException {
            loggerClass.getMethod("removeHandler", handlerClass).invoke(logger, handler);
            loggerClass.getMethod("setLevel", levelClass).invoke(logger, before);
        }
    }

    private static final Pattern RECORD = Pattern.compile(
        "<record>.*?<level>(\\w+)</level>.*?<message>(.*?)</message>.*?</record>", Pattern.DOTALL);

    @Test
    void logsFaultsAtWarningAndEverythingElseAtDebug() throws Exception {
        final String address = nic("log");
        final NicObserver o = new NicObserver(address);
        final List<String[]> r;
        try (JulCapture c = new JulCapture("FINE")) {
            o.connectionUp(1, "loop:peer", 2);
            o.connectionDown(1, "loop:peer", 2, EventCode.DISCONNECT.code(), false, false);
            o.connectionDown(1, "loop:peer", 2, EventCode.QP_DESTROYED.code() | EventCode.REMOTE_BIT, true, true);
            o.connectionDown(1, "loop:peer", 2, EventCode.DISCONNECT.code() | EventCode.REMOTE_BIT, true, true);
            o.connectionDown(1, "loop:peer", 2, EventCode.ACK_TIMEOUT.code(), false, true);
            o.queuePairError(3, EventCode.QP_ERROR.code() | EventCode.REMOTE_BIT, true);
            o.queuePairError(3, EventCode.QP_ERROR.code(), false);
            o.retransmitTimeout(1, false, -1, 2_000_000);
            o.receiverNotReady(1, -5);
            o.errorCompletion(1, 9, WcStatus.ACCESS_ERR, WcType.RDMA_READ);
            r = c.records(address);
        }
        assertEquals(10, r.size(), r.stream().map(x -> x[1]).toList().toString());
        final String[] levels = {"FINE", "FINE", "FINE", "FINE", "WARNING", "WARNING", "WARNING", "FINE", "FINE",
            "FINE"};
        final String[] says = {"qp 0x1 connected to loop:peer qp 0x2", "qp 0x1 disconnected (DISCONNECT), peer",
            "qp 0x1 failed (QP_DESTROYED, raised by the peer), peer loop:peer qp 0x2",
            "failed (DISCONNECT, raised by the peer)", "qp 0x1 failed (ACK_TIMEOUT), peer",
            "qp 0x3 entered ERROR (QP_ERROR, raised by the peer)", "qp 0x3 entered ERROR (QP_ERROR)",
            "qp 0x1 request stream timed out after 2000 us, resending from 4294967295",
            "qp 0x1 receiver not ready for 4294967291, will retry", "qp 0x1 work request 9 completed with ACCESS_ERR"};
        for (int i = 0; i < levels.length; i++) {
            assertEquals(levels[i], r.get(i)[0], r.get(i)[1]);
            assertTrue(r.get(i)[1].contains(says[i]), r.get(i)[1] + " should say " + says[i]);
        }
        assertTrue(r.get(6)[1].endsWith("(QP_ERROR)"), r.get(6)[1]);
    }

    @Test
    void logsThePublicationAndTheCloseAndAFailedPublication() throws Exception {
        final String address = nic("life");
        final NicObserver o = new NicObserver(address);
        final NicObserver twin = new NicObserver(address);
        final List<String[]> r;
        try (JulCapture c = new JulCapture("FINE")) {
            o.publish(() -> Map.of("a", 1L));
            twin.publish(() -> Map.of("a", 2L)); // the name is taken: a warning, nothing thrown
            twin.close();
            o.close();
            r = c.records(address);
        }
        final List<String> says = r.stream().map(x -> x[0] + " " + x[1]).toList();
        assertEquals(5, r.size(), says.toString());
        assertEquals("FINE jdet NIC " + address + " opened", says.get(0));
        assertTrue(says.get(1).startsWith("WARNING jdet NIC " + address + ": counters not published on JMX"),
            says.get(1));
        assertEquals("FINE jdet NIC " + address + " opened", says.get(2));
        assertEquals("FINE jdet NIC " + address + " closed", says.get(3));
        assertEquals("FINE jdet NIC " + address + " closed", says.get(4));
    }

    @Test
    void logsOnlyFailuresAboveDebug() throws Exception {
        final String address = nic("quiet");
        final NicObserver o = new NicObserver(address);
        final List<String[]> r;
        try (JulCapture c = new JulCapture("INFO")) {
            o.connectionUp(1, "loop:peer", 2);
            o.connectionDown(1, "loop:peer", 2, EventCode.DISCONNECT.code(), false, false);
            o.connectionDown(1, "loop:peer", 2, EventCode.QP_DESTROYED.code(), true, true);
            o.retransmitTimeout(1, true, 1, 1);
            o.receiverNotReady(1, 5);
            o.errorCompletion(1, 9, WcStatus.ACCESS_ERR, WcType.RDMA_READ);
            o.connectionDown(1, "loop:peer", 2, EventCode.ACK_TIMEOUT.code(), false, true);
            r = c.records(address);
        }
        assertEquals(1, r.size(), "only the failure: " + r.stream().map(x -> x[1]).toList());
        assertEquals("WARNING", r.get(0)[0]);
        assertTrue(r.get(0)[1].contains("failed (ACK_TIMEOUT)"), r.get(0)[1]);
    }
}
