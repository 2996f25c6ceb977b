/* An n x n matrix multiply on p POSIX threads, rows split in blocks: the external
 * program of README's quick start 2. Usage: matmul N P. Prints "elapsed: T s", the multiply's
 * wall time only (allocation and initialisation are not the work W = 2 n^3). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double *a, *b, *c;
static long n;
static int p;

/* Tiled so that its rate holds from small to large n (a naive i-k-j loop streams b from
 * memory once n^2 doubles outgrow the cache, and its E_s then falls with n). */
#define TILE 64

static void *rows(void *arg) {
    long id = (long)arg;
    long lo = n * id / p, hi = n * (id + 1) / p;
    for (long kk = 0; kk < n; kk += TILE)
        for (long jj = 0; jj < n; jj += TILE) {
            long k_end = kk + TILE < n ? kk + TILE : n, j_end = jj + TILE < n ? jj + TILE : n;
            for (long i = lo; i < hi; i++)
                for (long k = kk; k < k_end; k++) {
                    double aik = a[i * n + k];
                    for (long j = jj; j < j_end; j++) c[i * n + j] += aik * b[k * n + j];
                }
        }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 || (n = atol(argv[1])) < 1 || (p = atoi(argv[2])) < 1) {
        fprintf(stderr, "usage: matmul N P (N >= 1 the order, P >= 1 the threads)\n");
        return 2;
    }
    a = malloc(sizeof(double) * n * n);
    b = malloc(sizeof(double) * n * n);
    c = calloc((size_t)(n * n), sizeof(double));
    pthread_t *t = malloc(sizeof(pthread_t) * p);
    if (!a || !b || !c || !t) {
        fprintf(stderr, "matmul: out of memory for n = %ld\n", n);
        return 1;
    }
    for (long i = 0; i < n * n; i++) {
        a[i] = (double)(i % 7) - 3.0;
        b[i] = (double)(i % 5) - 2.0;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long id = 0; id < p; id++)
        if (pthread_create(&t[id], NULL, rows, (void *)id) != 0) {
            fprintf(stderr, "matmul: cannot start thread %ld\n", id);
            return 1;
        }
    for (long id = 0; id < p; id++) pthread_join(t[id], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double checksum = 0;
    for (long i = 0; i < n; i++) checksum += c[i * n + (i * 31) % n];
    printf("checksum: %g\nelapsed: %.6f s\n", checksum,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return 0;
}
