/* lg_check.h: an independent checker of back-end plans (compiler/backend/lg.h) for the
 * tests: partition, LMEM bounds/alignment/overlap of live buffers, bank separation of
 * buffers different engines use in the same time step (recomputed from the pipeline's
 * schedule), tile buffers large enough for halos recomputed by brute force, GMEM
 * overlap under liveness, cost sanity. */
#ifndef CT_TEST_LG_CHECK_H
#define CT_TEST_LG_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/backend/lg.h"

/* Returns true when plan p is valid; otherwise false and the first problem in msg. */
bool lg_check_plan(const ct_lg_plan *p, char *msg, size_t n);

#endif
