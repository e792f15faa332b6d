package io.jdet.perf.report;

/**
 * One of det_perf's setup-cost lines.
 *
 * @param name  the verb, as det_perf names it ({@code dev open}, {@code MEM reg}, ...)
 * @param usec  its median time in microseconds
 * @param pages pages registered, for the memory lines (else 0)
 */
public record SetupCost(String name, double usec, int pages) {

    /**
     * The time per page of a memory line.
     *
     * @return microseconds per page, or NaN for other lines
     */
    public double usecPerPage() {
        return pages > 0 ? usec / pages : Double.NaN;
    }
}
