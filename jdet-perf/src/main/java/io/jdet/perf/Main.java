package io.jdet.perf;

/** Entry point of {@code ./jdet}: dispatches to the example (the perf tool replaces this dispatcher). */
public final class Main {
    private Main() {
    }

    /**
     * Runs a command.
     *
     * @param args the command and its arguments
     */
    public static void main(final String[] args) {
        final String command = args.length == 0 ? "example" : args[0];
        if (!command.equals("example")) {
            System.err.println("unknown command " + command);
            System.exit(2);
        }
        System.exit(Example.run(System.out));
    }
}
