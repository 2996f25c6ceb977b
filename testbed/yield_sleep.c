/* LD_PRELOAD shim of the hetscale testbed: sched_yield() becomes a ~20 us sleep.
 *
 * OpenMPI's ranks poll for messages and, with `--mca mpi_yield_when_idle 1`, call
 * sched_yield() between polls. On a machine with fewer cores than ranks, and with CPU quotas,
 * a yield still burns the core and the quota (CFS gives it straight back), so a 4-rank barrier
 * on 2 cores took about 8 ms. Sleeping instead hands the core to the rank that has work: the
 * same barrier takes a fraction of a millisecond. Built by `hetscale-testbed up` with gcc.
 */
#include <time.h>

int sched_yield(void)
{
    struct timespec pause = {0, 20000};
    nanosleep(&pause, 0);
    return 0;
}
