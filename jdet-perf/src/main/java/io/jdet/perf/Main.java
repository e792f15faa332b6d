package io.jdet.perf;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

/**
 * Entry point of {@code ./jdet}'s Java tools: {@code jdet perf} (the perf tool), {@code jdet example} and
 * {@code jdet stat} (the NIC counters of running processes). Exit
 * status: 0 on success, 1 when a run fails (unreachable peer, timeout, bad data), 2 for a bad command line (one
 * line saying why, and {@code see 'jdet perf --help'}).
 */
@Command(name = "jdet", mixinStandardHelpOptions = true, version = "jdet 0.1.0",
    description = "Direct Ethernet Transport verbs for Java: tools.",
    subcommands = {PerfCommand.class, ExampleCommand.class, StatCommand.class})
public final class Main implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    /** Creates the top-level command. */
    public Main() {
    }

    /**
     * Runs a command and exits with its status.
     *
     * @param args the command and its arguments
     */
    public static void main(final String[] args) {
        final PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        final PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        System.exit(run(args, out, err));
    }

    /**
     * Runs a command without exiting: what {@link #main} does, for tests.
     *
     * @param args the command and its arguments
     * @param out  standard output
     * @param err  standard error
     * @return the exit status
     */
    public static int run(final String[] args, final PrintWriter out, final PrintWriter err) {
        // The plot is drawn off screen; no display is needed or wanted.
        System.setProperty("java.awt.headless", "true");
        final CommandLine commandLine = new CommandLine(new Main()).setOut(out).setErr(err)
            .setParameterExceptionHandler((e, arguments) -> {
                // One line and where to look, not the whole usage: the reason stays visible.
                final CommandLine cmd = e.getCommandLine();
                cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage());
                cmd.getErr().println("see '" + cmd.getCommandSpec().qualifiedName() + " --help'");
                cmd.getErr().flush();
                return 2;
            })
            .setExecutionExceptionHandler((e, cmd, parsed) -> {
                cmd.getErr().println("jdet: internal error: " + e);
                e.printStackTrace(cmd.getErr());
                cmd.getErr().flush();
                return 1;
            });
        final int status = commandLine.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return 2;
    }
}
