/* filecheck.c: the FileCheck-style matcher of filecheck.h. Each pattern is translated into
 * one POSIX extended regex (literals escaped, blanks → [ \t]+, variables as groups) and run
 * line by line over the output (semantics of LLVM FileCheck, simplified to single lines). */
#include "tests/filecheck.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FC_PLAIN, FC_NEXT, FC_SAME, FC_NOT, FC_LABEL };

#define FC_MAX_DIRS 512
#define FC_MAX_VARS 64

typedef struct fc_dir {
  int kind, line;
  char *pat;
} fc_dir;

typedef struct fc_state {
  char **lines;               /* output lines (NUL-terminated copies) */
  int n_lines;
  char *var_name[FC_MAX_VARS], *var_val[FC_MAX_VARS];
  int n_vars;
  char *err;
  size_t err_n;
} fc_state;

static bool fail(fc_state *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, s->err_n, fmt, ap);
  va_end(ap);
  return false;
}

static const char *var_get(const fc_state *s, const char *name, size_t n) {
  for (int i = s->n_vars - 1; i >= 0; i--)
    if (strlen(s->var_name[i]) == n && !strncmp(s->var_name[i], name, n)) return s->var_val[i];
  return NULL;
}

/* Appends literal text to the regex buffer with ERE metacharacters escaped. */
static void put_lit(char *re, size_t *k, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] == ' ' || p[i] == '\t') {
      while (i + 1 < n && (p[i + 1] == ' ' || p[i + 1] == '\t')) i++;
      memcpy(re + *k, "[ \t]+", 5), *k += 5;
      continue;
    }
    if (strchr(".[]{}()\\*+?|^$", p[i])) re[(*k)++] = '\\';
    re[(*k)++] = p[i];
  }
}

static int count_groups(const char *p, size_t n) {
  int g = 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '\\') i++;
    else if (p[i] == '(') g++;
  }
  return g;
}

/* End of a [[...]] body: the first "]]" outside bracket expressions of its regex. */
static const char *var_end(const char *p) {
  int depth = 0;
  for (; *p; p++) {
    if (*p == '\\' && p[1]) p++;
    else if (*p == '[') depth++;
    else if (*p == ']' && depth > 0) depth--;
    else if (*p == ']' && p[1] == ']') return p;
  }
  return NULL;
}

/* Translates pattern pat into an ERE (re, big enough); records defined variables with their
 * group numbers in defs/def_group. Returns false on a malformed pattern or unknown var. */
static bool translate(fc_state *s, const char *pat, char *re, char **defs, int *def_group, int *n_defs) {
  size_t k = 0;
  int group = 0;
  *n_defs = 0;
  for (const char *p = pat; *p;) {
    const char *a = strstr(p, "{{"), *b = strstr(p, "[[");
    const char *q = a && (!b || a < b) ? a : b;
    if (!q) { put_lit(re, &k, p, strlen(p)); break; }
    put_lit(re, &k, p, (size_t)(q - p));
    const char *end = q == a ? strstr(q + 2, "}}") : var_end(q + 2);
    if (!end) return fail(s, "unterminated %s in pattern", q == a ? "{{" : "[[");
    const char *body = q + 2;
    size_t bn = (size_t)(end - body);
    const char *colon = q == b ? memchr(body, ':', bn) : NULL;
    if (q == a || colon) {
      const char *rx = colon ? colon + 1 : body;
      size_t rn = bn - (size_t)(rx - body);
      if (colon && *n_defs < 8) {
        defs[*n_defs] = strndup(body, (size_t)(colon - body));
        def_group[(*n_defs)++] = group + 1;
      }
      re[k++] = '(';
      memcpy(re + k, rx, rn), k += rn;
      re[k++] = ')';
      group += 1 + count_groups(rx, rn);
    } else {
      const char *v = var_get(s, body, bn);
      if (!v) return fail(s, "undefined variable [[%.*s]]", (int)bn, body);
      put_lit(re, &k, v, strlen(v));
    }
    p = end + 2;
  }
  re[k] = '\0';
  return true;
}

/* Finds pat in lines [l0, l1] (starting at column c0 of line l0). On a match sets *ml, *mc
 * (line, end column) and binds variables when bind. Returns 1 found, 0 not, -1 error. */
static int find(fc_state *s, const char *pat, int l0, int c0, int l1, int *ml, int *ms, int *mc, bool bind) {
  char *re = malloc(strlen(pat) * 8 + 64 + 4096);
  char *defs[8];
  int dg[8], nd = 0, res = 0;
  if (!re) return fail(s, "out of memory"), -1;
  if (!translate(s, pat, re, defs, dg, &nd)) { free(re); return -1; }
  regex_t rx;
  if (regcomp(&rx, re, REG_EXTENDED) != 0) {
    free(re);
    for (int i = 0; i < nd; i++) free(defs[i]);
    return fail(s, "bad regex in pattern \"%s\"", pat), -1;
  }
  regmatch_t m[32];
  for (int l = l0; l <= l1 && l < s->n_lines && !res; l++) {
    int c = l == l0 ? c0 : 0;
    if (regexec(&rx, s->lines[l] + c, 32, m, c > 0 ? REG_NOTBOL : 0) != 0) continue;
    *ml = l, *ms = c + (int)m[0].rm_so, *mc = c + (int)m[0].rm_eo;
    res = 1;
    for (int i = 0; bind && i < nd && s->n_vars < FC_MAX_VARS; i++) {
      const regmatch_t *g = &m[dg[i] < 32 ? dg[i] : 0];
      s->var_name[s->n_vars] = defs[i], defs[i] = NULL;
      s->var_val[s->n_vars++] = strndup(s->lines[l] + c + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
    }
  }
  regfree(&rx);
  free(re);
  for (int i = 0; i < nd; i++) free(defs[i]);
  return res;
}

/* Parses the directives of checks into dirs; returns their count (-1 on overflow). */
static int parse_dirs(const char *checks, const char *prefix, fc_dir *dirs) {
  static const struct { const char *suffix; int kind; } kinds[] = {
      {":", FC_PLAIN}, {"-NEXT:", FC_NEXT}, {"-SAME:", FC_SAME}, {"-NOT:", FC_NOT}, {"-LABEL:", FC_LABEL}};
  int n = 0, line = 1;
  size_t pl = strlen(prefix);
  for (const char *p = checks; *p; line++) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char *ln = strndup(p, len);
    for (char *q = ln ? strstr(ln, prefix) : NULL; q; q = strstr(q + 1, prefix)) {
      int kind = -1;
      size_t sl = 0;
      for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && kind < 0; i++)
        if (!strncmp(q + pl, kinds[i].suffix, strlen(kinds[i].suffix))) kind = kinds[i].kind, sl = strlen(kinds[i].suffix);
      if (kind < 0) continue;
      if (n == FC_MAX_DIRS) { free(ln); return -1; }
      char *pat = q + pl + sl;
      while (*pat == ' ' || *pat == '\t') pat++;
      size_t m = strlen(pat);
      while (m > 0 && (pat[m - 1] == ' ' || pat[m - 1] == '\t' || pat[m - 1] == '\r')) m--;
      dirs[n].kind = kind, dirs[n].line = line, dirs[n++].pat = strndup(pat, m);
      break;
    }
    free(ln);
    p += len + (e ? 1 : 0);
  }
  return n;
}

/* Runs the directives over the lines. */
static bool run(fc_state *s, fc_dir *dirs, int nd) {
  int cl = 0, cc = 0; /* end of the previous match */
  bool matched = false;
  for (int i = 0; i < nd; i++) {
    fc_dir *dr = &dirs[i];
    if (dr->kind == FC_NOT) continue;
    int l0 = cl, c0 = cc, l1 = s->n_lines - 1, ml, ms, mc;
    if (dr->kind == FC_NEXT) {
      if (!matched) return fail(s, "line %d: CHECK-NEXT without a previous match", dr->line);
      l0 = l1 = cl + 1, c0 = 0;
    } else if (dr->kind == FC_SAME) {
      if (!matched) return fail(s, "line %d: CHECK-SAME without a previous match", dr->line);
      l1 = cl;
    }
    int r = find(s, dr->pat, l0, c0, l1, &ml, &ms, &mc, true);
    if (r < 0) return false;
    if (r == 0) return fail(s, "line %d: no match for \"%s\" after output line %d", dr->line, dr->pat, cl + 1);
    for (int j = i - 1; j >= 0 && dirs[j].kind == FC_NOT; j--) { /* NOTs between the two matches */
      int nl, ns, nc, nr = find(s, dirs[j].pat, cl, cc, ml, &nl, &ns, &nc, false);
      if (nr < 0) return false;
      if (nr == 1 && (nl < ml || ns < ms))
        return fail(s, "line %d: CHECK-NOT \"%s\" found on output line %d", dirs[j].line, dirs[j].pat, nl + 1);
    }
    cl = ml, cc = mc, matched = true;
  }
  for (int j = nd - 1; j >= 0 && dirs[j].kind == FC_NOT; j--) { /* trailing NOTs: to the end */
    int nl, ns, nc, nr = find(s, dirs[j].pat, cl, cc, s->n_lines - 1, &nl, &ns, &nc, false);
    if (nr < 0) return false;
    if (nr == 1) return fail(s, "line %d: CHECK-NOT \"%s\" found on output line %d", dirs[j].line, dirs[j].pat, nl + 1);
  }
  return true;
}

bool ct_filecheck(const char *checks, const char *output, const char *prefix, char *err, size_t n) {
  fc_state s = {0};
  s.err = err, s.err_n = n;
  if (n) err[0] = '\0';
  fc_dir *dirs = calloc(FC_MAX_DIRS, sizeof *dirs);
  char *buf = strdup(output);
  size_t len = buf ? strlen(buf) : 0;
  s.lines = malloc(sizeof *s.lines * (len + 2));
  bool ok = dirs && buf && s.lines;
  if (!ok) fail(&s, "out of memory");
  for (char *p = buf; ok && p && *p;) {
    s.lines[s.n_lines++] = p;
    p = strchr(p, '\n');
    if (p) *p++ = '\0';
  }
  int nd = ok ? parse_dirs(checks, prefix, dirs) : 0;
  if (ok && nd <= 0) ok = fail(&s, nd < 0 ? "too many directives" : "no %s directives", prefix);
  if (ok) ok = run(&s, dirs, nd);
  for (int i = 0; i < nd; i++) free(dirs[i].pat);
  for (int i = 0; i < s.n_vars; i++) free(s.var_name[i]), free(s.var_val[i]);
  free(dirs);
  free(buf);
  free(s.lines);
  return ok;
}
