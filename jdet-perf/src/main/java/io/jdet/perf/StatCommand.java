package io.jdet.perf;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code jdet stat}: the counters of the NICs of running jdet processes, like AeronStat. Attaches to each local JVM
 * (the Attach API, same user), starts its local JMX agent if needed, and prints every
 * {@code io.jdet:type=Nic} MBean's counters. Exit status: 0 when some NIC was shown, 1 when none was found.
 */
@Command(name = "stat", sortOptions = false, usageHelpAutoWidth = true, mixinStandardHelpOptions = true,
    version = "jdet stat 0.1.0",
    description = {"Show the NIC counters of running jdet processes (their io.jdet:type=Nic JMX MBeans).",
        "Without a PID, every local JVM of this user is asked; JVMs without jdet NICs are left out."},
    footer = {"", "Examples:", "  ./jdet stat", "  ./jdet stat 12345 --watch 1 --nonzero"})
public final class StatCommand implements Callable<Integer> {
    private static final String NIC_PATTERN = "io.jdet:type=Nic,*";

    @Spec
    private CommandSpec spec;

    @Parameters(paramLabel = "PID", arity = "0..*", description = "Only these processes.")
    private List<Long> pids = new ArrayList<>();

    @Option(names = "--watch", paramLabel = "SECONDS", description = "Print again every SECONDS, until interrupted "
        + "or --count is reached.")
    private Double watchSeconds;

    @Option(names = "--count", paramLabel = "N", description = "With --watch: stop after N reports.")
    private Integer count;

    @Option(names = "--nonzero", description = "Leave out counters that are 0.")
    private boolean nonZero;

    /** Creates the command; picocli fills its fields. */
    public StatCommand() {
    }

    @Override
    public Integer call() throws InterruptedException {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        if (watchSeconds != null && !(watchSeconds > 0) || count != null && count < 1) {
            err.println("jdet stat: --watch needs a positive number of seconds and --count a positive count");
            return 2;
        }
        int shown = 0;
        for (int round = 0; ; round++) {
            shown = report(out, err);
            out.flush();
            if (watchSeconds == null || count != null && round + 1 >= count) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(Math.round(watchSeconds * 1000));
            out.println();
        }
        if (shown == 0) {
            err.println("jdet stat: no running process with jdet NICs" + (pids.isEmpty() ? "" : " among " + pids));
            return 1;
        }
        return 0;
    }

    private int report(final PrintWriter out, final PrintWriter err) {
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
