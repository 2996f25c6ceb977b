/* A 2-D Jacobi stencil in C and MPI: a program that is not hetscale's, studied with
 * `hetscale study --command` on the hetscale testbed (issue 35).
 *
 *     mpicc -O2 -o jacobi jacobi.c -lm
 *     mpirun -np P ./jacobi N [ITERATIONS]
 *
 * The grid is N x N with u = 1 on its top edge and 0 on the other edges and inside; each
 * iteration sets every interior point to the mean of its four neighbours. Rows are split in
 * equal blocks over the ranks, each exchanging one halo row with each neighbour per iteration
 * (MPI_Sendrecv). Work: 4 flop per interior point and iteration, W = 4 (N-2)^2 ITERATIONS.
 *
 * Rank 0 prints `elapsed: T s` (the iterations only, between two barriers) and a checksum.
 * Its own correctness check: for N <= 1024, rank 0 gathers the grid and recomputes it serially;
 * the same operations in the same order give the same bits, so any difference fails the run
 * (exit 1). Every grid is also checked for its left-right symmetry (to 1e-12: the mirrored
 * sums round differently).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static void sweep(const double *u, double *v, int rows, int n)
{
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] +
                                   u[i * n + j + 1]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int n = argc > 1 ? atoi(argv[1]) : 0;
    int iters = argc > 2 ? atoi(argv[2]) : 100;
    if (n < 3 || iters < 1 || n - 2 < p) {
        if (rank == 0)
            fprintf(stderr, "usage: jacobi N [ITERATIONS] with N >= 3, N - 2 >= ranks (%d)\n", p);
        MPI_Finalize();
        return 2;
    }
    /* Interior rows 1..n-2 in blocks; local rows 1..rows, halos 0 and rows+1. */
    int interior = n - 2;
    int first = 1 + (int)((long)interior * rank / p);
    int last = 1 + (int)((long)interior * (rank + 1) / p); /* exclusive */
    int rows = last - first;
    double *u = calloc((size_t)(rows + 2) * n, sizeof(double));
    double *v = calloc((size_t)(rows + 2) * n, sizeof(double));
    if (!u || !v) {
        fprintf(stderr, "jacobi: out of memory for N = %d\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (first == 1) /* the top edge is this rank's upper halo */
        for (int j = 0; j < n; j++)
            u[j] = v[j] = 1.0;
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < p - 1 ? rank + 1 : MPI_PROC_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        MPI_Sendrecv(&u[1 * n], n, MPI_DOUBLE, up, 0, &u[(rows + 1) * n], n, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[rows * n], n, MPI_DOUBLE, down, 1, &u[0], n, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sweep(u, v, rows, n);
        double *t = u;
        u = v;
        v = t;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double elapsed = MPI_Wtime() - t0;

    /* Checksum and check. */
    double local = 0.0, sum = 0.0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < n; j++)
            local += u[i * n + j];
    MPI_Reduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < n / 2; j++)
            bad |= fabs(u[i * n + j] - u[i * n + (n - 1 - j)]) > 1e-12;
    const char *check = "symmetric";
    if (n <= 1024) {
        int *counts = NULL, *displs = NULL;
        double *grid = NULL;
        if (rank == 0) {
            counts = malloc(p * sizeof(int));
            displs = malloc(p * sizeof(int));
            grid = calloc((size_t)n * n, sizeof(double));
            for (int r = 0; r < p; r++) {
                int f = 1 + (int)((long)interior * r / p), l = 1 + (int)((long)interior * (r + 1) / p);
                counts[r] = (l - f) * n;
                displs[r] = f * n;
            }
        }
        MPI_Gatherv(&u[n], rows * n, MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double *a = calloc((size_t)n * n, sizeof(double)), *b = calloc((size_t)n * n, sizeof(double));
            for (int j = 0; j < n; j++)
                a[j] = b[j] = grid[j] = 1.0;
            for (int it = 0; it < iters; it++) {
                sweep(a, b, n - 2, n);
                double *t = a;
                a = b;
                b = t;
            }
            bad |= memcmp(a, grid, (size_t)n * n * sizeof(double)) != 0;
            check = "serial recomputation";
            free(a);
            free(b);
            free(grid);
            free(counts);
            free(displs);
        }
    }
    int any_bad = 0;
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("jacobi n=%d p=%d iterations=%d checksum=%.17g check=%s: %s\n", n, p, iters, sum,
               check, any_bad ? "FAILED" : "ok");
        printf("elapsed: %.6f s\n", elapsed);
    }
    free(u);
    free(v);
    MPI_Finalize();
    return rank == 0 && any_bad ? 1 : 0;
}
