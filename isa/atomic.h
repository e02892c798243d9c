/* atomic.h: internal helper of isa/ for atomic file output (write to PATH.tmpPID, then
 * rename; POSIX rename is atomic), so a failure leaves no half-written file. */
#ifndef CT_ISA_ATOMIC_H
#define CT_ISA_ATOMIC_H

#include <stdio.h>

#include "common/status.h"

/* Calls write(f, ctx, d) on a new temporary file next to path, then renames it to path.
 * The file gets the default permissions (0666 minus umask). Errors: whatever write
 * returns; CT_ERR_INPUT when the file cannot be created, written or renamed (the temporary
 * is removed). */
ct_status ct_isa_write_atomic(const char *path, ct_status (*write)(FILE *f, const void *ctx, ct_diag *d),
                              const void *ctx, ct_diag *d);

#endif
