/*
 * The Open MPI anchor of jdet's collectives (issue 10): the same five collectives, sizes and figure as
 * `jdet perf --tests co-*` (OSU style: the average microseconds per operation over the measured iterations, after
 * warm-up ones; size = the message for bcast and allreduce, per rank for allgather, per destination for alltoall).
 * Not built in CI; see README.md here for the command.
 *
 *   mpirun --oversubscribe -np N --mca btl tcp,self ./co_bench [sizes...]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long iterations(const char *test, long size, int p) {
    long per_op = size;
    if (strcmp(test, "co-allgather") == 0 || strcmp(test, "co-alltoall") == 0) {
        per_op = size * p;
    }
    if (per_op < 64) {
        per_op = 64;
    }
    long n = (32L << 20) / per_op; /* jdet perf's rule: about 32 MiB per rank, 20 to 1000 operations */
    return n < 20 ? 20 : n > 1000 ? 1000 : n;
}

static void once(const char *test, char *src, char *dst, long size, int p) {
    if (strcmp(test, "co-barrier") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(test, "co-bcast") == 0) {
        MPI_Bcast(src, (int) size, MPI_BYTE, 0, MPI_COMM_WORLD);
    } else if (strcmp(test, "co-allgather") == 0) {
        MPI_Allgather(src, (int) size, MPI_BYTE, dst, (int) size, MPI_BYTE, MPI_COMM_WORLD);
    } else if (strcmp(test, "co-alltoall") == 0) {
        MPI_Alltoall(src, (int) size, MPI_BYTE, dst, (int) size, MPI_BYTE, MPI_COMM_WORLD);
    } else {
        MPI_Allreduce(src, dst, (int) (size / 8), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
    (void) p;
}

int main(int argc, char **argv) {
    static const char *tests[] = {"co-barrier", "co-bcast", "co-allgather", "co-alltoall", "co-allreduce"};
    long sizes[16] = {8, 1024, 65536, 1048576};
    int nsizes = 4;
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc > 1) {
        nsizes = 0;
        for (int i = 1; i < argc && nsizes < 16; i++) {
            sizes[nsizes++] = atol(argv[i]);
        }
    }
    long largest = 8;
    for (int i = 0; i < nsizes; i++) {
        largest = sizes[i] > largest ? sizes[i] : largest;
    }
    char *src = calloc((size_t) largest * p, 1);
    char *dst = calloc((size_t) largest * p, 1);
    if (src == NULL || dst == NULL) {
        fprintf(stderr, "co_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        printf("# Open MPI collectives: %d ranks, average us per operation after warm-up\n", p);
    }
    for (int t = 0; t < 5; t++) {
        if (rank == 0) {
            printf("\n# %s, %d ranks\n%-10s %12s %10s\n", tests[t], p, "size", "avg (us)", "iters");
        }
        for (int i = 0; i < (t == 0 ? 1 : nsizes); i++) {
            long size = t == 0 ? 0 : sizes[i];
            if (t == 4) {
                size = (size + 7) / 8 * 8;
            }
            long iters = iterations(tests[t], size, p);
            long warmup = iters / 2 < 10 ? 10 : iters / 2;
            for (long k = 0; k < warmup; k++) {
                once(tests[t], src, dst, size, p);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            for (long k = 0; k < iters; k++) {
                once(tests[t], src, dst, size, p);
            }
            double mine = (MPI_Wtime() - start) * 1e6 / (double) iters;
            double avg = 0;
            MPI_Reduce(&mine, &avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                printf("%-10ld %12.2f %10ld\n", size, avg / p, iters);
                fflush(stdout);
            }
        }
    }
    free(src);
    free(dst);
    MPI_Finalize();
    return 0;
}
