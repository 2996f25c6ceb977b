/* Counts the MPI calls of each rank through MPI's profiling interface (PMPI) and prints them
 * when the rank finalises: `mpirun -x LD_PRELOAD=libmpi_calls.so ...`. Used by tests/mpi.rs
 * to check what an hbsp superstep costs in MPI calls. */
#include <mpi.h>
#include <stdio.h>

static long sendrecv, alltoall, alltoallv, collective;

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status) {
    sendrecv++;
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                         recvtype, source, recvtag, comm, status);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    alltoall++;
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    alltoallv++;
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
    collective++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Barrier(MPI_Comm comm) {
    collective++;
    return PMPI_Barrier(comm);
}

int MPI_Finalize(void) {
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("mpi calls of rank %d: sendrecv %ld alltoall %ld alltoallv %ld allreduce+barrier %ld\n",
           rank, sendrecv, alltoall, alltoallv, collective);
    fflush(stdout);
    return PMPI_Finalize();
}
