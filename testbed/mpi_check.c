/* hetscale-testbed's measurements of its own links, independent of hetscale (issue 35).
 *
 *     mpi_check pingpong [BYTES] [REPS]   ranks 0 and 1: payload bandwidth of a ping-pong
 *     mpi_check barrier [REPS]            all ranks: the mean and median time of MPI_Barrier
 *     mpi_check fanout [BYTES] [REPS]     rank 0 sends BYTES to ranks 1..k at once (MPI_Isend),
 *                                         k = 0 .. p-1: the median superstep between barriers
 *     mpi_check fanin [BYTES] [REPS]      ranks 1..k send BYTES to rank 0 at once (MPI_Irecv
 *                                         on rank 0), k = 1 .. p-1: the median superstep
 *     mpi_check swap [BYTES] [REPS]       ranks 0 and 1: one way (MPI_Send) against both ways
 *                                         at once (MPI_Sendrecv), each between barriers
 *     mpi_check pairs [BYTES] [REPS]      k = 1 .. p/2 pairs (0->1, 2->3, ...) sending BYTES
 *                                         at once: the median superstep, to see whether the
 *                                         links share a capacity
 *     mpi_check supersteps [REPS]         balanced supersteps: every rank computes d (0 to
 *                                         10 ms at its long-run rate), then an 8-byte message
 *                                         to a rotating root and a barrier; the mean beyond d
 *     mpi_check longsteps [REPS]          balanced supersteps of 10 to 300 ms of compute, of a
 *                                         loop without data and of a sweep over 3 MiB: the
 *                                         superstep over d, and each rank's compute over d
 *     mpi_check aftersync [REPS]          every rank: a compute phase of nominal length d
 *                                         (1 to 100 ms at the rank's long-run rate) started
 *                                         right after a barrier, its time over d
 *
 * Built by testbed/figures.sh, or by hand: `mpicc -O2 -o mpi_check testbed/mpi_check.c`.
 */
#include <mpi.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* n dependent multiply-adds: a compute phase that holds no data, so its time is the CPU's. */
static double spin(long n)
{
    double a = 1.0;
    for (long i = 0; i < n; i++)
        a = a * 1.0000001 + 1e-9;
    return a;
}

/* Iterations of spin per second on this rank, over 2 s: many of a CPU quota's periods. */
static double spin_rate(void)
{
    long n = 1L << 20, done = 0;
    double s = MPI_Wtime();
    while (MPI_Wtime() - s < 2.0) {
        sink = spin(n);
        done += n;
    }
    return done / (MPI_Wtime() - s);
}

/* n element updates over a BUF-element array, wrapping: a compute phase whose data lives in
   the shared cache (3 MiB, beyond a core's L2), so other processes on the machine evict it. */
#define BUF (3 << 17)
static double *buf;
static double sweep(long n)
{
    long i = 0;
    while (n > 0) {
        long m = n < BUF ? n : BUF;
        for (long j = 0; j < m; j++)
            buf[j] = buf[j] * 0.999999 + 1e-9;
        n -= m;
        i += m;
    }
    return buf[i % BUF];
}

/* Elements of sweep per second on this rank, over 2 s. */
static double sweep_rate(void)
{
    long n = BUF, done = 0;
    double s = MPI_Wtime();
    while (MPI_Wtime() - s < 2.0) {
        sink = sweep(n);
        done += n;
    }
    return done / (MPI_Wtime() - s);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Argument i as a whole number in [lo, hi], or def when absent; anything else ends every
   rank with a one-line error (an MPI count is an int, and a mean over 0 repetitions is none). */
static long arg(int argc, char **argv, int i, long def, long lo, long hi, const char *name)
{
    if (argc <= i)
        return def;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || v < lo || v > hi) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "mpi_check: %s = '%s' must be a whole number in [%ld, %ld]\n", name,
                    argv[i], lo, hi);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(host, &len);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "pingpong") == 0 && p >= 2) {
        long bytes = arg(argc, argv, 2, 4L << 20, 1, INT_MAX, "BYTES");
        int reps = (int)arg(argc, argv, 3, 20, 1, INT_MAX, "REPS");
        char *buf = calloc(bytes, 1);
        char peer[MPI_MAX_PROCESSOR_NAME] = "";
        if (rank == 0)
            MPI_Recv(peer, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (rank == 1)
            MPI_Send(host, len + 1, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
        double t0 = 0;
        for (int r = -2; r < reps; r++) { /* two warm-up round trips */
            if (r == 0)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("pingpong %s<->%s: %ld bytes x %d round trips in %.4f s: %.2f Mbit/s\n", host, peer,
                   bytes, reps, t, 2.0 * bytes * reps * 8 / t / 1e6);
        free(buf);
    } else if (strcmp(mode, "barrier") == 0) {
        int reps = (int)arg(argc, argv, 2, 1000, 1, INT_MAX, "REPS");
        double *times = malloc(reps * sizeof(double));
        for (int r = 0; r < 100; r++)
            MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int r = 0; r < reps; r++) {
            double s = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            times[r] = MPI_Wtime() - s;
        }
        double total = MPI_Wtime() - t0;
        /* The slowest rank's time of each barrier. */
        double *worst = malloc(reps * sizeof(double));
        MPI_Reduce(times, worst, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            qsort(worst, reps, sizeof(double), cmp);
            printf("barrier p=%d: mean %.1f us, median %.1f us, 90th percentile %.1f us (%d barriers)\n",
                   p, total / reps * 1e6, worst[reps / 2] * 1e6, worst[reps * 9 / 10] * 1e6, reps);
        }
        free(times);
        free(worst);
    } else if (strcmp(mode, "fanout") == 0 && p >= 2) {
        /* Do a node's transfers to several others overlap their start-ups, and queue their
           bytes on its link? (hbsp's sim charges them so; issue 36.) */
        long bytes = arg(argc, argv, 2, 8, 1, INT_MAX, "BYTES");
        int reps = (int)arg(argc, argv, 3, 50, 1, INT_MAX, "REPS");
        char *buf = calloc(bytes, 1);
        double *times = malloc(reps * sizeof(double));
        MPI_Request *requests = malloc(p * sizeof(MPI_Request));
        for (int k = 0; k < p; k++) {
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double s = MPI_Wtime();
                if (rank == 0) {
                    for (int j = 1; j <= k; j++)
                        MPI_Isend(buf, bytes, MPI_CHAR, j, 0, MPI_COMM_WORLD, &requests[j - 1]);
                    MPI_Waitall(k, requests, MPI_STATUSES_IGNORE);
                } else if (rank <= k) {
                    MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                times[r] = MPI_Wtime() - s;
            }
            qsort(times, reps, sizeof(double), cmp);
            if (rank == 0)
                printf("fanout %ld bytes to %d ranks: median %.1f us (%d supersteps)\n", bytes, k,
                       times[reps / 2] * 1e6, reps);
        }
        free(buf);
        free(times);
        free(requests);
    } else if (strcmp(mode, "fanin") == 0 && p >= 2) {
        /* Does a node take in several senders' bytes at its link's rate, as `sim` charges a
           node's receiving side (the bytes queue)? Many streams into one shaped link can
           lose more to their collisions than one. */
        long bytes = arg(argc, argv, 2, 1L << 20, 1, INT_MAX, "BYTES");
        int reps = (int)arg(argc, argv, 3, 5, 1, INT_MAX, "REPS");
        char *buf = calloc(rank == 0 ? (size_t)bytes * p : (size_t)bytes, 1);
        double *times = malloc(reps * sizeof(double));
        MPI_Request *requests = malloc(p * sizeof(MPI_Request));
        for (int k = 1; k < p; k++) {
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double s = MPI_Wtime();
                if (rank == 0) {
                    for (int j = 1; j <= k; j++)
                        MPI_Irecv(buf + (size_t)bytes * j, bytes, MPI_CHAR, j, 0, MPI_COMM_WORLD,
                                  &requests[j - 1]);
                    MPI_Waitall(k, requests, MPI_STATUSES_IGNORE);
                } else if (rank <= k) {
                    MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                times[r] = MPI_Wtime() - s;
            }
            qsort(times, reps, sizeof(double), cmp);
            if (rank == 0)
                printf("fanin %ld bytes from %d ranks: median %.1f ms (%d supersteps)\n", bytes, k,
                       times[reps / 2] * 1e3, reps);
        }
        free(buf);
        free(times);
        free(requests);
    } else if (strcmp(mode, "swap") == 0 && p >= 2) {
        /* Does a link carry both directions at full rate at once? (hbsp's duplex penalty;
           issue 36.) Every repetition printed: a swap is slowed most times or not at all. */
        long bytes = arg(argc, argv, 2, 1L << 20, 1, INT_MAX, "BYTES");
        int reps = (int)arg(argc, argv, 3, 6, 1, INT_MAX, "REPS");
        char *out = calloc(bytes, 1), *in = calloc(bytes, 1);
        double one_way = 0.0, both = 0.0;
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double s = MPI_Wtime();
            if (rank == 0)
                MPI_Send(out, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            else if (rank == 1)
                MPI_Recv(in, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            if (rank < 2)
                MPI_Sendrecv(out, bytes, MPI_CHAR, 1 - rank, 1, in, bytes, MPI_CHAR, 1 - rank, 1,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            double u = MPI_Wtime();
            one_way += t - s;
            both += u - t;
            if (rank == 0)
                printf("swap %ld bytes: one way %.1f ms, both ways %.1f ms\n", bytes,
                       (t - s) * 1e3, (u - t) * 1e3);
        }
        if (rank == 0)
            printf("swap %ld bytes: means over %d: one way %.1f ms, both ways %.1f ms\n", bytes,
                   reps, one_way / reps * 1e3, both / reps * 1e3);
        free(out);
        free(in);
    } else if (strcmp(mode, "pairs") == 0 && p >= 2) {
        /* Do concurrent transfers on distinct links slow each other (a shared capacity,
           `backplane_bytes_per_s`)? k pairs at once, the others idle. */
        long bytes = arg(argc, argv, 2, 4L << 20, 1, INT_MAX, "BYTES");
        int reps = (int)arg(argc, argv, 3, 5, 1, INT_MAX, "REPS");
        char *buf = calloc(bytes, 1);
        double *times = calloc(reps, sizeof(double));
        for (int k = 1; k <= p / 2; k++) {
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double s = MPI_Wtime();
                if (rank / 2 < k && rank % 2 == 0)
                    MPI_Send(buf, bytes, MPI_CHAR, rank + 1, 0, MPI_COMM_WORLD);
                else if (rank / 2 < k && rank % 2 == 1)
                    MPI_Recv(buf, bytes, MPI_CHAR, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Barrier(MPI_COMM_WORLD);
                times[r] = MPI_Wtime() - s;
            }
            qsort(times, reps, sizeof(double), cmp);
            if (rank == 0)
                printf("pairs %ld bytes, %d pair(s) at once: median %.1f ms (%d supersteps)\n",
                       bytes, k, times[reps / 2] * 1e3, reps);
        }
        free(buf);
        free(times);
    } else if (strcmp(mode, "supersteps") == 0 && p >= 2) {
        /* What a superstep costs beyond its compute when every rank computed first (hbsp's
           compute stall): a compute phase spans the hosts' quota periods, and each ends it
           at its own point of its period. */
        int reps = (int)arg(argc, argv, 2, 400, 1, 100000, "REPS");
        double rate = spin_rate();
        const double d[] = {0.0, 3e-4, 1e-3, 3e-3, 1e-2};
        char out[8] = {0}, in[8];
        MPI_Request *requests = malloc(p * sizeof(MPI_Request));
        for (int k = 0; k < 5; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double s = MPI_Wtime();
            for (int r = 0; r < reps; r++) {
                sink = spin((long)(d[k] * rate));
                int root = r % p, c = 0;
                if (rank == root) {
                    for (int j = 0; j < p; j++)
                        if (j != root)
                            MPI_Irecv(in, 8, MPI_CHAR, j, 0, MPI_COMM_WORLD, &requests[c++]);
                    MPI_Waitall(c, requests, MPI_STATUSES_IGNORE);
                } else {
                    MPI_Send(out, 8, MPI_CHAR, root, 0, MPI_COMM_WORLD);
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
            double mean = (MPI_Wtime() - s) / reps;
            if (rank == 0)
                printf("supersteps p=%d d = %4.1f ms: mean %.2f ms, beyond d %.2f ms (%d supersteps)\n",
                       p, d[k] * 1e3, mean * 1e3, (mean - d[k]) * 1e3, reps);
        }
        free(requests);
    } else if (strcmp(mode, "longsteps") == 0 && p >= 2) {
        /* Balanced supersteps of longer compute (10 to 300 ms at each rank's long-run rate,
           every rank calibrated at once), of a loop that holds no data (spin) and of one whose
           data lives in the shared cache (sweep), each followed by a barrier: the superstep's
           mean over d (the slowest rank's), and each rank's own compute over d. */
        int reps = (int)arg(argc, argv, 2, 10, 1, 100000, "REPS");
        buf = calloc(BUF, sizeof(double));
        double *own = calloc(p, sizeof(double));
        if (!buf || !own) {
            fprintf(stderr, "mpi_check longsteps: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        double rates[2] = {spin_rate(), sweep_rate()};
        const char *kinds[2] = {"spin", "sweep"};
        const double d[] = {1e-2, 3e-2, 1e-1, 3e-1};
        for (int kind = 0; kind < 2; kind++) {
            for (int k = 0; k < 4; k++) {
                double mine = 0.0;
                MPI_Barrier(MPI_COMM_WORLD);
                double s = MPI_Wtime();
                for (int r = 0; r < reps; r++) {
                    double t = MPI_Wtime();
                    long n = (long)(d[k] * rates[kind]);
                    sink = kind == 0 ? spin(n) : sweep(n);
                    mine += MPI_Wtime() - t;
                    MPI_Barrier(MPI_COMM_WORLD);
                }
                double mean = (MPI_Wtime() - s) / reps;
                mine /= reps;
                MPI_Gather(&mine, 1, MPI_DOUBLE, own, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                if (rank == 0) {
                    printf("longsteps p=%d %s d = %5.1f ms: superstep / d %.3f; each rank's compute / d",
                           p, kinds[kind], d[k] * 1e3, mean / d[k]);
                    for (int j = 0; j < p; j++)
                        printf(" %.2f", own[j] / d[k]);
                    printf("\n");
                }
            }
        }
        free(own);
        free(buf);
    } else if (strcmp(mode, "aftersync") == 0) {
        /* Does a short compute phase that starts right after a synchronisation run at its
           host's long-run rate (the marked speed's)? Under a CPU quota it may start with the
           period's budget spent or unspent. Each rank times itself. */
        int reps = (int)arg(argc, argv, 2, 20, 1, 100000, "REPS");
        double rate = spin_rate();
        double *ratio = calloc(reps, sizeof(double));
        const double d[] = {1e-3, 3e-3, 1e-2, 3e-2, 1e-1};
        for (int k = 0; k < 5; k++) {
            double sum = 0.0;
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t = MPI_Wtime();
                sink = spin((long)(d[k] * rate));
                ratio[r] = (MPI_Wtime() - t) / d[k];
                sum += ratio[r];
            }
            qsort(ratio, reps, sizeof(double), cmp);
            printf("aftersync %s d = %5.1f ms: time / d median %.2f, mean %.2f, max %.2f\n", host,
                   d[k] * 1e3, ratio[reps / 2], sum / reps, ratio[reps - 1]);
        }
        free(ratio);
    } else if (rank == 0) {
        fprintf(stderr, "usage: mpi_check pingpong [BYTES] [REPS] (2+ ranks) | barrier [REPS] | fanout [BYTES] [REPS] | fanin [BYTES] [REPS] | swap [BYTES] [REPS] | pairs [BYTES] [REPS] | supersteps [REPS] | longsteps [REPS] | aftersync [REPS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
