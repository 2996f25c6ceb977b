/* 4000 Jacobi sweeps of the 5-point stencil on an n x n grid, on p POSIX threads, rows split in
 * blocks: the external program of README's quick start 2. Usage: jacobi N P. Prints
 * "elapsed: T s", the sweeps' wall time only (allocation and initialisation are not the work
 * W = 16000 (n-2)^2: 4 flop per interior point per sweep).
 *
 * Every sweep reads the grid the last one wrote, so the threads meet at a barrier after each:
 * the program's overhead. It is a few microseconds on an idle machine and up to a scheduler
 * time slice on a loaded one (a thread waits for one that is not running), while a sweep's
 * compute grows as n^2: E_s rises with n towards the stencil's rate. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SWEEPS 4000

static double *grid[2];
static long n;
static int p;
static pthread_barrier_t barrier;

static void *sweeps(void *arg) {
    long id = (long)arg;
    /* Interior rows 1 .. n-2, split in blocks. */
    long lo = 1 + (n - 2) * id / p, hi = 1 + (n - 2) * (id + 1) / p;
    for (int s = 0; s < SWEEPS; s++) {
        const double *from = grid[s % 2];
        double *to = grid[(s + 1) % 2];
        for (long i = lo; i < hi; i++)
            for (long j = 1; j < n - 1; j++)
                to[i * n + j] = 0.25 * (from[(i - 1) * n + j] + from[(i + 1) * n + j] +
                                        from[i * n + j - 1] + from[i * n + j + 1]);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 || (n = atol(argv[1])) < 3 || (p = atoi(argv[2])) < 1) {
        fprintf(stderr, "usage: jacobi N P (N >= 3 the grid's order, P >= 1 the threads)\n");
        return 2;
    }
    for (int g = 0; g < 2; g++) grid[g] = malloc(sizeof(double) * n * n);
    pthread_t *t = malloc(sizeof(pthread_t) * p);
    if (!grid[0] || !grid[1] || !t) {
        fprintf(stderr, "jacobi: out of memory for n = %ld\n", n);
        return 1;
    }
    /* A hot top edge, cold elsewhere; both grids hold the boundary. */
    for (long i = 0; i < n * n; i++) grid[0][i] = grid[1][i] = i < n ? 1.0 : 0.0;
    pthread_barrier_init(&barrier, NULL, (unsigned)p);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long id = 0; id < p; id++)
        if (pthread_create(&t[id], NULL, sweeps, (void *)id) != 0) {
            fprintf(stderr, "jacobi: cannot start thread %ld\n", id);
            return 1;
        }
    for (long id = 0; id < p; id++) pthread_join(t[id], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double checksum = 0;
    for (long i = 0; i < n * n; i++) checksum += grid[SWEEPS % 2][i];
    printf("checksum: %.6g\nelapsed: %.6f s\n", checksum,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return 0;
}
