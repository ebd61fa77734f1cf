/* dist_mpi.h: the MPI communicator (dist_mpi.c) for the R glue. */
#ifndef HB_DIST_MPI_H
#define HB_DIST_MPI_H
#include "dist.h"

/* 1 when histboost was built with MPI. */
int hb_mpi_available(void);
/* MPI_Init (once; MPI already initialized by another package is used as
 * is). HB_OK or a status with a message set. */
int hb_mpi_init(void);
/* MPI_COMM_WORLD as a communicator, or NULL before hb_mpi_init. */
const hb_dist_t *hb_mpi_world(void);
/* MPI_Finalize if this library initialized MPI and nobody finalized it,
 * once every process is exiting; a process still waiting after wait_s
 * seconds for the others to exit ends the whole job (MPI_Abort). */
void hb_mpi_finalize(double wait_s);
/* End every process of the job (MPI_Abort). */
void hb_mpi_abort(int code);
int hb_mpi_barrier(void);
/* This process's collective operations so far: out[0] the bytes it handed
 * them, out[1] the seconds spent in them (waiting for the others
 * included), out[2] how many. */
void hb_mpi_traffic(double out[3]);

#endif
