package io.jdet.internal.observe;

import org.junit.jupiter.api.Test;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.ReflectionException;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The counters MBean read through the platform MBean server, as JConsole and {@code ./jdet stat} read it. */
class NicMBeanTest {
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    private static String address(final String what) {
        return "loop:mbean-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    private static ObjectName name(final String address) throws Exception {
        return new ObjectName("io.jdet:type=Nic,name=" + ObjectName.quote(address));
    }

    @Test
    void everyReadTakesAFreshSnapshotOfTheCounters() throws Exception {
        final String address = address("read");
        final AtomicLong sent = new AtomicLong(3);
        final NicMBean bean = NicMBean.register(address, () -> {
            final Map<String, Long> m = new LinkedHashMap<>();
            m.put("frames.sent", sent.get());
            m.put("rx.bad_header", 0L);
            return m;
        });
        assertNotNull(bean);
        final ObjectName name = name(address);
        try {
            assertTrue(SERVER.isRegistered(name));
            assertEquals(address, SERVER.getAttribute(name, "Address"));
            assertEquals(3L, SERVER.getAttribute(name, "frames.sent"));
            sent.set(9);
            assertEquals(9L, SERVER.getAttribute(name, "frames.sent"));
            assertEquals(0L, SERVER.getAttribute(name, "rx.bad_header"));
            assertThrows(AttributeNotFoundException.class, () -> SERVER.getAttribute(name, "frames.lost"));

            final AttributeList list = SERVER.getAttributes(name,
                new String[] {"frames.sent", "nothing", "Address", "rx.bad_header"});
            final List<Attribute> got = list.asList();
            assertEquals(3, got.size(), "an unknown name is left out: " + got);
            assertEquals("frames.sent", got.get(0).getName());
            assertEquals(9L, got.get(0).getValue());
            assertEquals("Address", got.get(1).getName());
            assertEquals(address, got.get(1).getValue());
            assertEquals("rx.bad_header", got.get(2).getName());
            assertEquals(0L, got.get(2).getValue());

            final MBeanAttributeInfo[] info = SERVER.getMBeanInfo(name).getAttributes();
            assertEquals(3, info.length);
            assertEquals("Address", info[0].getName());
            assertEquals(String.class.getName(), info[0].getType());
            assertEquals("frames.sent", info[1].getName());
            assertEquals("rx.bad_header", info[2].getName());
            for (final MBeanAttributeInfo a : info) {
                assertTrue(a.isReadable(), a.getName());
                assertFalse(a.isWritable(), a.getName());
                assertFalse(a.isIs(), a.getName());
            }
            assertEquals(long.class.getName(), info[1].getType());
            assertEquals(NicMBean.class.getName(), SERVER.getMBeanInfo(name).getClassName());
        } finally {
            bean.unregister();
        }
        assertFalse(SERVER.isRegistered(name), "withdrawn");
        bean.unregister();
    }

    @Test
    void countersAreReadOnlyAndThereAreNoOperations() throws Exception {
        final String address = address("ro");
        final NicMBean bean = NicMBean.register(address, () -> Map.of("wr.posted", 1L));
        assertNotNull(bean);
        final ObjectName name = name(address);
        try {
            assertThrows(AttributeNotFoundException.class,
                () -> SERVER.setAttribute(name, new Attribute("wr.posted", 5L)));
            final AttributeList set = new AttributeList();
            set.add(new Attribute("wr.posted", 5L));
            assertTrue(SERVER.setAttributes(name, set).isEmpty(), "nothing was set");
            assertEquals(1L, SERVER.getAttribute(name, "wr.posted"));
            final Exception e = assertThrows(Exception.class,
                () -> SERVER.invoke(name, "reset", new Object[0], new String[0]));
            assertTrue(e instanceof ReflectionException || e instanceof MBeanException, e.toString());
        } finally {
            bean.unregister();
        }
    }

    @Test
    void aNameTakenIsNotPublishedTwice() throws Exception {
        final String address = address("twice");
        final NicMBean first = NicMBean.register(address, () -> Map.of("a", 1L));
        assertNotNull(first);
        try {
            assertNull(NicMBean.register(address, () -> Map.of("a", 2L)), "the name is taken: logged, not thrown");
            assertEquals(1L, SERVER.getAttribute(name(address), "a"), "the first stays");
        } finally {
            first.unregister();
        }
    }
}
