package io.jdet;

import io.jdet.testing.Loopback;
import io.jdet.testing.Tests;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static io.jdet.testing.Loopback.sge;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The NIC counters as JMX MBeans and the JFR events of the control and error paths (logging: LoggingTest). */
@Timeout(60)
class ObservabilityTest {
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    private static ObjectName nameOf(final Nic nic) throws Exception {
        return new ObjectName("io.jdet:type=Nic,name=" + ObjectName.quote(nic.address()));
    }

    @Test
    void shouldPublishEveryCounterAsAnMBeanWhileTheNicIsOpen() throws Exception {
        final ObjectName name;
        try (Loopback pair = Loopback.open()) {
            name = nameOf(pair.nicA);
            assertTrue(SERVER.isRegistered(name), name.toString());
            for (int i = 0; i < 5; i++) {
                assertEquals(WcStatus.SUCCESS, pair.writeAtoB(pair.mrB.address(), pair.mrB.rKey(), 64).status());
            }
            final Map<String, Long> counters = pair.nicA.counters();
            final List<String> attributes = Arrays.stream(SERVER.getMBeanInfo(name).getAttributes())
                .map(MBeanAttributeInfo::getName).toList();
            assertTrue(attributes.containsAll(counters.keySet()), attributes.toString());
            assertEquals(pair.nicA.address(), SERVER.getAttribute(name, "Address"));
            // wr.posted moves only when the test posts: the MBean reads the live value
            assertEquals(5L, SERVER.getAttribute(name, "wr.posted"));
            assertEquals(counters.get("wr.posted"), SERVER.getAttribute(name, "wr.posted"));
            assertTrue((Long) SERVER.getAttribute(name, "frames.sent") >= 5);
            assertThrows(javax.management.AttributeNotFoundException.class,
                () -> SERVER.setAttribute(name, new Attribute("frames.sent", 0L)));
        }
        assertFalse(SERVER.isRegistered(name), "withdrawn when the NIC closes");
    }

    @Test
    void shouldPublishNothingWhenJmxIsOff() throws Exception {
        try (Loopback pair = Loopback.open(new Loopback.Options().configuration(new Configuration().jmx(false)))) {
            assertFalse(SERVER.isRegistered(nameOf(pair.nicA)));
        }
    }

    @Test
    void shouldRecordConnectionTimeoutRnrAndErrorCompletionEventsInJfr() throws Exception {
        final Path file = dir.resolve("jdet.jfr");
        final String lossy;
        final String rnr;
        try (Recording recording = new Recording()) {
            for (final String event : List.of("ConnectionUp", "ConnectionDown", "RetransmitTimeout",
                "ReceiverNotReady", "ErrorCompletion")) {
                recording.enable("io.jdet." + event);
            }
            recording.start();
            // Every frame lost: the write times out, retransmits, then fails with RETRY_EXCEEDED.
            final Configuration blackHole = new Configuration().faults(new FaultPlan(1, 0, 0, 0, 1)).minRtoUs(100)
                .maxRtoUs(1000).ackTimeoutMs(30);
            try (Loopback pair = Loopback.open(new Loopback.Options().configuration(blackHole))) {
                lossy = pair.nicA.address();
                pair.qpA.write(7, sge(pair.mrA, 0, 64), 1, pair.mrB.address(), pair.mrB.rKey(), 0, 0);
                assertEquals(WcStatus.RETRY_EXCEEDED, Tests.pollOne(pair.cqA).status());
            }
            // No receive posted: the peer NAKs receiver-not-ready until the retries run out.
            final Configuration impatient = new Configuration().rnrRetryCount(1).rnrDelayUs(100);
            try (Loopback pair = Loopback.open(new Loopback.Options().configuration(impatient))) {
                rnr = pair.nicA.address();
                pair.qpA.send(8, sge(pair.mrA, 0, 64), 1, 0, 0);
                assertEquals(WcStatus.RNR_RETRY_EXCEEDED, Tests.pollOne(pair.cqA).status());
            }
            recording.stop();
            recording.dump(file);
        }
        final List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        final List<RecordedEvent> up = of(events, "io.jdet.ConnectionUp", lossy);
        assertEquals(1, up.size(), up.toString());
        assertTrue(up.get(0).getString("peer").startsWith("loop:"));
        final List<RecordedEvent> down = of(events, "io.jdet.ConnectionDown", lossy);
        assertEquals("ACK_TIMEOUT", down.get(0).getString("event"));
        assertTrue(down.get(0).getBoolean("error"));
        final List<RecordedEvent> timeouts = of(events, "io.jdet.RetransmitTimeout", lossy);
        assertFalse(timeouts.isEmpty());
        assertEquals("request", timeouts.get(0).getString("stream"));
        final List<RecordedEvent> errors = of(events, "io.jdet.ErrorCompletion", lossy);
        assertEquals("RETRY_EXCEEDED", errors.get(0).getString("status"));
        assertEquals(7L, errors.get(0).getLong("wrId"));
        assertFalse(of(events, "io.jdet.ReceiverNotReady", rnr).isEmpty());
        assertEquals("RNR_RETRY_EXCEEDED", of(events, "io.jdet.ErrorCompletion", rnr).get(0).getString("status"));
    }

    private static List<RecordedEvent> of(final List<RecordedEvent> events, final String type, final String nic) {
        return events.stream().filter(e -> e.getEventType().getName().equals(type))
            .filter(e -> nic.equals(e.getString("nic"))).toList();
    }
}
