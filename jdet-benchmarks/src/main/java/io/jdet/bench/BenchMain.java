package io.jdet.bench;

import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import java.util.regex.Pattern;

/**
 * The {@code main()} every benchmark class delegates to: runs that class's benchmarks, with any JMH command-line
 * options ({@code -p size=1024}, {@code -prof gc}, {@code -f 1 -wi 2 -i 3}, ...) on top of the class's own
 * {@code @Fork}/{@code @Warmup}/{@code @Measurement}.
 */
public final class BenchMain {
    private BenchMain() {
    }

    /**
     * Runs the benchmarks of one class.
     *
     * @param benchmarkClass the class whose {@code @Benchmark} methods to run
     * @param args           JMH command-line options
     */
    public static void run(final Class<?> benchmarkClass, final String[] args) {
        try {
            final CommandLineOptions cli = new CommandLineOptions(args);
            new Runner(new OptionsBuilder()
                .parent(cli)
                .include("^" + Pattern.quote(benchmarkClass.getName()) + "\\.")
                .build()).run();
        } catch (final CommandLineOptionException e) {
            System.err.println("bad JMH options: " + e.getMessage());
            System.exit(2);
        } catch (final RunnerException e) {
            throw new IllegalStateException("JMH run of " + benchmarkClass.getName() + " failed", e);
        }
    }
}
