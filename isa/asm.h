/* asm.h: the ctpu assembly text (syntax in docs/isa.md): assembler to ct_program,
 * disassembler back to text (disasm → asm gives identical bytes), and the generator of
 * docs/isa.md from isa.def and chip.def. */
#ifndef CT_ASM_H
#define CT_ASM_H

#include <stdio.h>

#include "common/status.h"
#include "isa/chip.h"
#include "isa/program.h"

/* Assembles `text` (NUL-terminated) into p (initialized here; free with ct_program_free).
 * fname names the source in messages ("k.s:12: conv: field \"kh\": 300 does not fit 8
 * bits"); base_dir resolves `.const name dt file.h5:dataset` paths (NULL: current dir).
 * chip (NULL: defaults) gives the signature unless a `.chipsig` line sets it, and is used to
 * validate the program (ct_program_validate). Errors: CT_ERR_INPUT for any syntax or
 * semantic error (unknown opcode or directive, unknown or repeated field, value out of
 * range, undefined symbol, unreadable constant file), CT_ERR_LIMIT out of memory. */
ct_status ct_asm_parse(const char *text, const char *fname, const char *base_dir, const ct_chip *chip,
                       ct_program *p, ct_diag *d);

/* Reads and assembles a file (ct_asm_parse with base_dir = the file's directory). */
ct_status ct_asm_file(const char *path, const ct_chip *chip, ct_program *p, ct_diag *d);

/* Parses one instruction line ("CONV in=0 ... wait=1") into insn: field names and value
 * ranges are checked (as by the assembler), semantics are not (ct_isa_check). `@name`
 * symbols resolve against symbols' constants and IO entries (symbols may be NULL).
 * Errors: CT_ERR_INPUT with a message starting "insn:1:". d may be NULL. */
ct_status ct_asm_insn(const char *line, const ct_program *symbols, ct_insn *insn, ct_diag *d);

/* Formats one instruction as an assembly line without newline ("CONV in=0x0 ... wait=0,3")
 * into buf (size n; truncated if too small); returns buf. Every field is printed, named
 * values by name, so the line assembles to the same 64 bytes. */
char *ct_disasm_insn(const ct_insn *insn, char *buf, size_t n);

/* Writes the whole program as assembly text to f: `.chipsig`, `.const` (values inline, with
 * `at=`), `.input`/`.output`, `.debug` entries, then one line per instruction.
 * Errors: CT_ERR_INPUT when f cannot be written. */
ct_status ct_disasm(const ct_program *p, FILE *f, ct_diag *d);

/* ct_disasm into the file path, written atomically (temporary + rename). Errors:
 * CT_ERR_INPUT when it cannot be written. */
ct_status ct_disasm_file(const ct_program *p, const char *path, ct_diag *d);

/* Writes docs/isa.md (Markdown: encoding, every opcode's fields and semantics, named
 * values, assembly syntax, .ctpu layout, chip keys) to f. Output depends only on isa.def
 * and chip.def. */
void ct_isa_doc(FILE *f);

#endif
