package io.jdet.perf;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
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
    /** The modules a trimmed runtime (jlink) may leave out that reading other JVMs needs. */
    private static final List<String> NEEDED_MODULES = List.of("jdk.attach", "java.management.rmi");

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
        if (NEEDED_MODULES.stream().anyMatch(name -> ModuleLayer.boot().findModule(name).isEmpty())) {
            err.println("jdet stat: this Java runtime lacks " + String.join(" or ", NEEDED_MODULES)
                + ", which reading other processes needs: run it on a full JDK 25");
            return 2;
        }
        final LocalNics nics = new LocalNics(pids, nonZero);
        int shown = 0;
        for (int round = 0; ; round++) {
            shown = nics.report(out, err);
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
}
