/* program.h: the .ctpu program file (docs/architecture.md §4): header (magic "CTPU", version,
 * chip signature), instructions, constants (with GMEM addresses and a blob), IO table,
 * debug map, string table. A validating loader that never trusts the file, an in-memory
 * builder for code generators, and an atomic writer. Byte layout: docs/isa.md. */
#ifndef CT_PROGRAM_H
#define CT_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/tensor.h"
#include "isa/chip.h"
#include "isa/isa.h"

#define CT_PROGRAM_VERSION 1
#define CT_PROGRAM_MAX_DIMS 8

/* A constant placed in GMEM before the program runs (weights, LUTs, requant tables). */
typedef struct ct_prog_const {
  char *name;
  ct_dtype dtype;
  uint64_t gmem_addr; /* bytes */
  uint64_t bytes;     /* multiple of the dtype size */
  uint8_t *data;      /* `bytes` bytes, little-endian elements */
} ct_prog_const;

/* An input or output tensor: dense row-major at gmem_addr. */
typedef struct ct_prog_io {
  char *name;
  bool is_output;
  ct_dtype dtype;
  int ndim;
  int64_t shape[CT_PROGRAM_MAX_DIMS];
  uint64_t gmem_addr; /* bytes */
  double scale;       /* quantization scale (0 when not quantized or per channel) */
  int32_t zero_point;
  bool is_tensor;     /* a tensor the program stores (a layer result), described for --dump-all:
                       * neither read nor written by the host; is_output is false */
  int n_scale;        /* > 1: per-channel quantization along quant_axis (n_scale = shape[quant_axis]),
                       * scales / zero_points hold n_scale entries (owned); 0: per tensor (above) */
  int quant_axis;
  double *scales;
  int32_t *zero_points;
} ct_prog_io;

/* Debug map entry: instruction → layer/op name, layer group, tile, time step. */
typedef struct ct_prog_debug {
  char *layer;
  int32_t group, tile, step;
} ct_prog_debug;

/* A program in memory. Arrays are malloc'd and owned (ct_program_free). insns[i] is the
 * decoded form of instruction i; the file holds their 64-byte encodings. */
typedef struct ct_program {
  uint32_t version;
  uint64_t chip_sig;
  ct_insn *insns;
  size_t n_insns, cap_insns;
  ct_prog_const *consts;
  size_t n_consts, cap_consts;
  ct_prog_io *io;
  size_t n_io, cap_io;
  ct_prog_debug *debug;
  size_t n_debug, cap_debug;
} ct_program;

/* Initializes an empty program for chip signature sig (ct_chip_signature). */
void ct_program_init(ct_program *p, uint64_t sig);
/* Frees everything p owns and leaves it empty. NULL is fine. */
void ct_program_free(ct_program *p);

/* Builder. Each returns CT_ERR_LIMIT when out of memory (p unchanged) and copies its
 * strings/data. add_insn does not validate (ct_program_validate does). */
ct_status ct_program_add_insn(ct_program *p, const ct_insn *insn, ct_diag *d);
ct_status ct_program_add_const(ct_program *p, const char *name, ct_dtype dt, uint64_t gmem_addr,
                               const void *data, uint64_t bytes, ct_diag *d);
ct_status ct_program_add_io(ct_program *p, const ct_prog_io *io, ct_diag *d);
/* Appends a debug entry; *id gets its debug id (1 + index) for ct_insn.debug_id. */
ct_status ct_program_add_debug(ct_program *p, const char *layer, int32_t group, int32_t tile,
                               int32_t step, uint32_t *id, ct_diag *d);

/* Validates a program: every instruction passes ct_isa_check (with chip if given) and has a
 * debug id ≤ n_debug; constants and IO tensors have valid dtypes/shapes, sizes that are
 * whole elements, and (with a chip) lie inside GMEM; names are unique per table. The last
 * instruction need not be END. fname names the source in messages ("p.ctpu: insn 12
 * (conv): ..."). Errors: CT_ERR_INPUT. chip may be NULL. */
ct_status ct_program_validate(const ct_program *p, const ct_chip *chip, const char *fname, ct_diag *d);

/* Parts of a program, for locating a validation error. */
typedef enum ct_prog_part { CT_PART_INSN, CT_PART_CONST, CT_PART_IO } ct_prog_part;

/* ct_program_validate without the file name: on error sets *part and *index to the entry
 * that failed (so a loader can name its byte offset) and a message without file name
 * ("insn 3: conv: ..."). */
ct_status ct_program_check(const ct_program *p, const ct_chip *chip, ct_prog_part *part, size_t *index, ct_diag *d);

/* Serializes p to a .ctpu image (malloc'd, *n bytes). Errors: CT_ERR_INPUT if an
 * instruction fails to encode, CT_ERR_LIMIT when out of memory. */
ct_status ct_program_serialize(const ct_program *p, uint8_t **buf, size_t *n, ct_diag *d);

/* Writes p to path atomically (path.tmpXXXXXX, then rename). Errors: as serialize, plus
 * CT_ERR_INPUT when the file cannot be written. */
ct_status ct_program_write(const ct_program *p, const char *path, ct_diag *d);

/* Parses a .ctpu image of n bytes. Validates everything: magic, version, section offsets
 * and sizes within the image, counts, string offsets within the string table and
 * NUL-terminated, every instruction decodes (ct_isa_decode), then ct_program_validate with
 * chip (NULL: no memory bounds). With a chip, a chip signature different from
 * ct_chip_signature(chip) is an error. Messages name fname and the byte offset
 * ("p.ctpu: byte 4160: insn 3: unknown opcode 200"). On error p is left empty. */
ct_status ct_program_parse(const uint8_t *buf, size_t n, const ct_chip *chip, const char *fname,
                           ct_program *p, ct_diag *d);

/* Reads and parses a .ctpu file (ct_program_parse). Errors also: unreadable file. */
ct_status ct_program_load(const char *path, const ct_chip *chip, ct_program *p, ct_diag *d);

/* Finds an IO entry / constant by name; NULL if absent. An input passed through as an output
 * has two entries of one name: the input comes first. */
const ct_prog_io *ct_program_find_io(const ct_program *p, const char *name);

/* May IO entries a and b share a name? Only an input and an output describing the same
 * bytes (address, dtype, shape): a module input that is also a module output. */
bool ct_program_io_passthrough(const ct_prog_io *a, const ct_prog_io *b);
const ct_prog_const *ct_program_find_const(const ct_program *p, const char *name);
/* Debug entry of an instruction (NULL when its debug_id is 0 or out of range). */
const ct_prog_debug *ct_program_debug_of(const ct_program *p, const ct_insn *insn);

#endif
