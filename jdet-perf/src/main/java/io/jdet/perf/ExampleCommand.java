package io.jdet.perf;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

/** {@code jdet example}: the bundled verbs example ({@link Example}). */
@Command(name = "example", mixinStandardHelpOptions = true, version = "jdet example 0.1.0",
    description = "A send/receive ping-pong and an RDMA read between two NICs on the in-process fabric, every "
        + "byte checked.")
public final class ExampleCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    /** Creates the command. */
    public ExampleCommand() {
    }

    @Override
    public Integer call() {
        final PrintStream out = new PrintStream(new WriterStream(spec.commandLine().getOut()), true,
            StandardCharsets.UTF_8);
        final int status = Example.run(out);
        out.flush();
        return status;
    }

    /** Bridges picocli's writer to the example's print stream. */
    private static final class WriterStream extends java.io.OutputStream {
        private final java.io.PrintWriter writer;
        private final java.io.ByteArrayOutputStream pending = new java.io.ByteArrayOutputStream();

        WriterStream(final java.io.PrintWriter writer) {
            this.writer = writer;
        }

        @Override
        public void write(final int b) {
            pending.write(b);
        }

        @Override
        public void flush() {
            writer.print(pending.toString(StandardCharsets.UTF_8));
            writer.flush();
            pending.reset();
        }
    }
}
