package io.jdet.perf;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What {@code jdet stat} reads from other JVMs: the Attach API and JMX, kept out of {@link StatCommand} so that the
 * tool's other commands load on a runtime without the {@code jdk.attach} module (picocli reflects on every
 * command's methods at start, and a signature naming a missing class fails the whole tool).
 */
final class LocalNics {
    private static final String NIC_PATTERN = "io.jdet:type=Nic,*";

    private final List<Long> pids;
    private final boolean nonZero;

    /**
     * @param pids    only these processes, or every local JVM when empty
     * @param nonZero whether to leave out counters that are 0
     */
    LocalNics(final List<Long> pids, final boolean nonZero) {
        this.pids = pids;
        this.nonZero = nonZero;
    }

    /**
     * Prints the NICs of every matching JVM but this one; a JVM that cannot be read is reported only when asked
     * for by PID. Raises nothing.
     *
     * @param out where the counters go
     * @param err where a named process that cannot be read is reported
     * @return the NICs shown
     */
    int report(final PrintWriter out, final PrintWriter err) {
        final long self = ProcessHandle.current().pid();
        int shown = 0;
        for (final VirtualMachineDescriptor vm : VirtualMachine.list()) {
            final long pid;
            try {
                pid = Long.parseLong(vm.id());
            } catch (final NumberFormatException e) {
                continue;
            }
            if (pid == self || !pids.isEmpty() && !pids.contains(pid)) {
                continue;
            }
            try {
                shown += show(vm, pid, out);
            } catch (final IOException | AttachNotSupportedException | javax.management.JMException
                           | SecurityException e) {
                if (!pids.isEmpty()) {
                    err.println("jdet stat: cannot read process " + pid + ": " + e.getMessage());
                }
            }
        }
        return shown;
    }

    private int show(final VirtualMachineDescriptor descriptor, final long pid, final PrintWriter out)
        throws IOException, AttachNotSupportedException, javax.management.JMException {
        final VirtualMachine vm = VirtualMachine.attach(descriptor);
        final String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
            final MBeanServerConnection server = connector.getMBeanServerConnection();
            final Set<ObjectName> nics = new TreeSet<>(server.queryNames(new ObjectName(NIC_PATTERN), null));
            if (nics.isEmpty()) {
                return 0;
            }
            out.printf("pid %d  %s%n", pid, descriptor.displayName());
            for (final ObjectName nic : nics) {
                final MBeanAttributeInfo[] infos = server.getMBeanInfo(nic).getAttributes();
                final String[] names = new String[infos.length];
                for (int i = 0; i < infos.length; i++) {
                    names[i] = infos[i].getName();
                }
                final List<javax.management.Attribute> values = server.getAttributes(nic, names).asList();
                String nicAddress = nic.getKeyProperty("name");
                for (final javax.management.Attribute a : values) {
                    if (a.getName().equals("Address")) {
                        nicAddress = String.valueOf(a.getValue());
                    }
                }
                out.printf("  NIC %s%n", nicAddress);
                for (final javax.management.Attribute a : values) {
                    if (a.getValue() instanceof Long value && (!nonZero || value != 0)) {
                        out.printf("    %-28s %,20d%n", a.getName(), value);
                    }
                }
            }
            return nics.size();
        }
    }
}
