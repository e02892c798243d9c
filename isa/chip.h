/* chip.h: the chip configuration (docs/architecture.md §3): a struct generated from isa/chip.def,
 * built-in defaults, a JSON loader with per-key errors (cJSON), a JSON dumper and the chip
 * signature (FNV-1a 64 over the CT_CHIP_SIG fields). */
#ifndef CT_CHIP_H
#define CT_CHIP_H

#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

typedef enum ct_dataflow { CT_DATAFLOW_WS, CT_DATAFLOW_OS } ct_dataflow;

#define CT_CHIP_POW2 1
#define CT_CHIP_SIG 2
#define CT_CHIP_NAME_MAX 64
/* chip.def's lmem.banks maximum; the cmodel's bank sets hold this many (memory/lmem.h). */
#define CT_CHIP_LMEM_BANKS_MAX 1024
/* chip.def's sem.count minimum: a program orders its engines with one semaphore per engine
 * (isa.h CT_ENG_CTRL of them; compiler/backend/cg_model.c asserts it). */
#define CT_CHIP_SEM_COUNT_MIN 4

#define CT_CHIP_DECL_STR(m) char m[CT_CHIP_NAME_MAX];
#define CT_CHIP_DECL_INT(m) int64_t m;
#define CT_CHIP_DECL_F64(m) double m;
#define CT_CHIP_DECL_DATAFLOW(m) ct_dataflow m;

/* A chip. Members are the chip.def keys with '.' → '_' (mxu.rows → mxu_rows); units are in
 * the key names and docs (bytes, cycles, MHz). Plain data: copy freely, nothing to free. */
typedef struct ct_chip {
#define CT_CHIP_KEY(m, key, T, def, lo, hi, flags, doc) CT_CHIP_DECL_##T(m)
#include "isa/chip.def"
#undef CT_CHIP_KEY
} ct_chip;

/* Fills c with the built-in defaults (docs/architecture.md §3). */
void ct_chip_default(ct_chip *c);

/* Parses a JSON chip description: nested objects ({"mxu": {"rows": 64}}) or dotted keys
 * ({"mxu.rows": 64}); keys not given keep their defaults. `fname` names the source in
 * messages. Errors (CT_ERR_INPUT, "chip.json: lmem.banks: 12 does not divide lmem.bytes
 * 1048576"): JSON syntax (with the byte offset), unknown key, wrong type, non-integer for an
 * integer key, value out of [min, max], not a power of two where chip.def requires it,
 * lmem.banks not dividing lmem.bytes. c is unchanged on error. */
ct_status ct_chip_parse(const char *json, const char *fname, ct_chip *c, ct_diag *d);

/* Loads a chip from a JSON file (ct_chip_parse); path NULL gives the defaults. Errors as
 * ct_chip_parse plus those of ct_file_read (a file over 16 MiB is CT_ERR_LIMIT). */
ct_status ct_chip_load(const char *path, ct_chip *c, ct_diag *d);

/* Checks every key's range, power-of-two flag and the cross-key rules; used by the parser.
 * Errors as ct_chip_parse, naming fname and the key. */
ct_status ct_chip_validate(const ct_chip *c, const char *fname, ct_diag *d);

/* Returns the chip as pretty-printed nested JSON (malloc'd, caller frees) that
 * ct_chip_parse reads back to the same chip; NULL when out of memory. */
char *ct_chip_to_json(const ct_chip *c);

/* Chip signature: FNV-1a 64 (Fowler–Noll–Vo) over "key=value;" of every CT_CHIP_SIG key
 * (lmem.bytes, gmem.bytes, sem.count) in chip.def order, integers in decimal. Programs
 * record it; two chips with equal signatures run the same programs correctly. */
uint64_t ct_chip_signature(const ct_chip *c);

/* Writes the Markdown table of chip keys (key, type, default, range, meaning) to f, for
 * docs/isa.md. */
void ct_chip_doc_table(FILE *f);

#endif
