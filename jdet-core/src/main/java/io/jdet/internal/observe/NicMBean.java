package io.jdet.internal.observe;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A NIC's counters as a read-only JMX MBean, {@code io.jdet:type=Nic,name="<address>"}: one {@code long} attribute
 * per counter, named as in {@code Nic.counters()} ({@code frames.sent}, {@code rx.bad_header}, ...), plus
 * {@code Address}. Each read takes a fresh snapshot. {@code ./jdet stat} and JConsole read it.
 */
final class NicMBean implements DynamicMBean {
    private final String address;
    private final Supplier<Map<String, Long>> counters;
    private final ObjectName name;
    private final MBeanServer server;

    private NicMBean(final String address, final Supplier<Map<String, Long>> counters, final ObjectName name,
                     final MBeanServer server) {
        this.address = address;
        this.counters = counters;
        this.name = name;
        this.server = server;
    }

    static NicMBean register(final String address, final Supplier<Map<String, Long>> counters) {
        try {
            final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            final ObjectName name = new ObjectName("io.jdet:type=Nic,name=" + ObjectName.quote(address));
            final NicMBean bean = new NicMBean(address, counters, name, server);
            server.registerMBean(bean, name);
            return bean;
        } catch (final JMException | RuntimeException | LinkageError e) {
            System.getLogger("io.jdet").log(Level.WARNING, "jdet NIC " + address + ": counters not published on JMX: "
                + e);
            return null;
        }
    }

    void unregister() {
        try {
            server.unregisterMBean(name);
        } catch (final JMException e) {
            // already gone: nothing to withdraw
        }
    }

    @Override
    public Object getAttribute(final String attribute) throws AttributeNotFoundException {
        if ("Address".equals(attribute)) {
            return address;
        }
        final Long value = counters.get().get(attribute);
        if (value == null) {
            throw new AttributeNotFoundException("no counter " + attribute);
        }
        return value;
    }

    @Override
    public void setAttribute(final Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException("counters are read-only: " + attribute.getName());
    }

    @Override
    public AttributeList getAttributes(final String[] attributes) {
        final Map<String, Long> snapshot = counters.get();
        final AttributeList list = new AttributeList();
        for (final String a : attributes) {
            if ("Address".equals(a)) {
                list.add(new Attribute(a, address));
            } else if (snapshot.containsKey(a)) {
                list.add(new Attribute(a, snapshot.get(a)));
            }
        }
        return list;
    }

    @Override
    public AttributeList setAttributes(final AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(final String actionName, final Object[] params, final String[] signature)
        throws javax.management.ReflectionException {
        throw new javax.management.ReflectionException(new NoSuchMethodException(actionName), "no operations");
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        final Map<String, Long> snapshot = counters.get();
        final MBeanAttributeInfo[] attributes = new MBeanAttributeInfo[snapshot.size() + 1];
        attributes[0] = new MBeanAttributeInfo("Address", String.class.getName(), "the NIC's link address", true,
            false, false);
        int i = 1;
        for (final String counter : snapshot.keySet()) {
            attributes[i++] = new MBeanAttributeInfo(counter, long.class.getName(), "counter " + counter, true,
                false, false);
        }
        return new MBeanInfo(NicMBean.class.getName(), "The counters of a jdet NIC", attributes, null, null, null);
    }
}
