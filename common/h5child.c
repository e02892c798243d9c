/* h5child.c: ct_h5_read / ct_h5_read_one run libhdf5 in a forked child process that hands the
 * tensors back over a pipe. libhdf5 1.10.8 crashes (SEGV in H5Dread, H5Aexists), leaks and asks
 * for absurd allocations on some corrupt files; in the child, with rlimits on address space,
 * CPU time and core files, any of that ends the child, and the parent reports
 * "PATH: corrupt HDF5 file" (exit 3). Measured cost: docs/limits.md. */
#define _DEFAULT_SOURCE
#include "common/h5io.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/limits.h"

#if defined(__SANITIZE_ADDRESS__)
#define CT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT_ASAN 1
#endif
#endif

#define CHILD_CPU_SECONDS 120
#define NAME_MAX_BYTES 4096
#define SCALE_MAX (1 << 24)

/* One tensor on the pipe: this header, then name, scale, zero_point and data bytes. */
typedef struct wire_head {
  int32_t dtype, ndim, n_scale, quant_axis;
  int64_t shape[CT_MAX_DIMS];
  char layout[16];
  uint64_t name_len, nbytes;
} wire_head;

enum { TAG_END = 0, TAG_TENSOR = 1 };

static bool write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

static bool read_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t k = read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

static bool send_tensor(int fd, const ct_tensor *t) {
  wire_head h;
  memset(&h, 0, sizeof h);
  h.dtype = (int32_t)t->dtype, h.ndim = t->ndim, h.n_scale = t->n_scale, h.quant_axis = t->quant_axis;
  memcpy(h.shape, t->shape, sizeof h.shape);
  memcpy(h.layout, t->layout, sizeof h.layout);
  h.name_len = t->name ? strlen(t->name) : 0;
  h.nbytes = t->nbytes;
  unsigned char tag = TAG_TENSOR;
  return write_all(fd, &tag, 1) && write_all(fd, &h, sizeof h) && write_all(fd, t->name, h.name_len) &&
         write_all(fd, t->scale, (size_t)t->n_scale * sizeof(double)) &&
         write_all(fd, t->zero_point, (size_t)t->n_scale * sizeof(int32_t)) && write_all(fd, t->data, t->nbytes);
}

/* Set by the sanitizer runtime when one is linked (libFuzzer registers its crash reporter
 * there); absent otherwise. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void limit_child(void) {
  /* the child is not the process under test: a sanitizer report inside libhdf5 must not run
   * a fuzzer's crash reporter inherited through fork (it wrote one "crash" artifact per
   * libhdf5 failure the parent had already turned into a clean error) */
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
  struct rlimit cpu = {CHILD_CPU_SECONDS, CHILD_CPU_SECONDS}, core = {0, 0};
  setrlimit(RLIMIT_CPU, &cpu);
  setrlimit(RLIMIT_CORE, &core);
#ifndef CT_ASAN /* ASan reserves terabytes of shadow address space: no RLIMIT_AS under it */
  uint64_t as = ct_mem_budget() * 2 + ((uint64_t)1 << 30);
  struct rlimit asl = {(rlim_t)as, (rlim_t)as};
  setrlimit(RLIMIT_AS, &asl);
#endif
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) dup2(null, STDERR_FILENO); /* libhdf5 or a sanitizer may print; the parent speaks */
}

/* The child: reads with the in-process reader and streams the result; never returns. */
static void child_main(int fd, const char *path, const char *name) {
  limit_child();
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ct_diag d;
  ct_diag_clear(&d);
  ct_tensor *one = NULL;
  ct_status st = name ? ct_h5_read_one_direct(path, name, &one, &d) : ct_h5_read_direct(path, &l, &d);
  if (!st && one && !ct_tensor_list_push(&l, one)) {
    ct_tensor_free(one);
    st = ct_diag_set(&d, CT_ERR_LIMIT, "%s: out of memory", path);
  }
  bool ok = true;
  for (int i = 0; ok && !st && i < l.n; i++) ok = send_tensor(fd, l.items[i]);
  unsigned char tag = TAG_END;
  int32_t code = (int32_t)st;
  if (ok) ok = write_all(fd, &tag, 1) && write_all(fd, &code, sizeof code) && write_all(fd, d.msg, sizeof d.msg);
  ct_tensor_list_free(&l);
  _exit(ok ? 0 : 1); /* no atexit handlers: libhdf5's own leaks on corrupt files die with the child */
}

/* Reads one tensor after its tag; false when the stream is malformed or truncated. */
static ct_status recv_tensor(int fd, const char *path, ct_tensor **out, ct_diag *d) {
  wire_head h;
  *out = NULL;
  if (!read_all(fd, &h, sizeof h)) return CT_ERR_INPUT;
  int64_t bytes;
  if (h.dtype < 0 || h.dtype >= CT_DTYPE_COUNT || h.ndim < 0 || h.ndim > CT_MAX_DIMS || h.n_scale < 0 ||
      h.n_scale > SCALE_MAX || h.name_len >= NAME_MAX_BYTES || !ct_shape_bytes((ct_dtype)h.dtype, h.ndim, h.shape, &bytes) ||
      (uint64_t)bytes != h.nbytes)
    return CT_ERR_INPUT;
  char name[NAME_MAX_BYTES];
  if (!read_all(fd, name, h.name_len)) return CT_ERR_INPUT;
  name[h.name_len] = '\0';
  char what[NAME_MAX_BYTES + 64];
  snprintf(what, sizeof what, "%s: dataset \"%s\"", path, name);
  ct_tensor *t;
  ct_status st = ct_tensor_alloc(&t, (ct_dtype)h.dtype, h.ndim, h.shape, name, what, d);
  if (st) return st;
  memcpy(t->layout, h.layout, sizeof t->layout);
  t->layout[sizeof t->layout - 1] = '\0';
  double *sc = h.n_scale ? malloc((size_t)h.n_scale * sizeof *sc) : NULL;
  int32_t *zp = h.n_scale ? malloc((size_t)h.n_scale * sizeof *zp) : NULL;
  if (h.n_scale && (!sc || !zp)) st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", what);
  else if (!read_all(fd, sc, (size_t)h.n_scale * sizeof *sc) || !read_all(fd, zp, (size_t)h.n_scale * sizeof *zp) ||
           !read_all(fd, t->data, t->nbytes))
    st = CT_ERR_INPUT;
  else if (h.n_scale && !ct_tensor_set_quant(t, h.n_scale, h.quant_axis, sc, zp))
    st = ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", what);
  free(sc);
  free(zp);
  if (st) ct_tensor_free(t); else *out = t;
  return st;
}

/* The parent's side: tensors into out until the end record; CT_ERR_INPUT without a message
 * when the stream breaks (the child died). */
static ct_status recv_all(int fd, const char *path, ct_tensor_list *out, ct_diag *d) {
  for (;;) {
    unsigned char tag;
    if (!read_all(fd, &tag, 1)) return CT_ERR_INPUT;
    if (tag == TAG_END) {
      int32_t code;
      ct_diag cd;
      if (!read_all(fd, &code, sizeof code) || !read_all(fd, cd.msg, sizeof cd.msg)) return CT_ERR_INPUT;
      cd.msg[sizeof cd.msg - 1] = '\0';
      if (code == CT_OK) return CT_OK;
      return ct_diag_set(d, code > 0 && code <= CT_ERR_INTERNAL ? (ct_status)code : CT_ERR_INPUT, "%s", cd.msg);
    }
    if (tag != TAG_TENSOR) return CT_ERR_INPUT;
    ct_tensor *t;
    ct_status st = recv_tensor(fd, path, &t, d);
    if (st) return st;
    if (!ct_tensor_list_push(out, t)) {
      ct_tensor_free(t);
      return ct_diag_set(d, CT_ERR_LIMIT, "%s: out of memory", path);
    }
  }
}

/* Runs the reader in a child; on success appends to out. */
static ct_status read_isolated(const char *path, const char *name, ct_tensor_list *out, ct_diag *d) {
  if (access(path, R_OK) != 0) return ct_diag_set(d, CT_ERR_INPUT, "%s: cannot open file: %s", path, strerror(errno));
  int fds[2];
  if (pipe(fds) != 0) return ct_diag_set(d, CT_ERR_LIMIT, "%s: cannot create a pipe: %s", path, strerror(errno));
  ct_h5_preinit();
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return ct_diag_set(d, CT_ERR_LIMIT, "%s: cannot start the HDF5 reader process: %s", path, strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], path, name);
  }
  close(fds[1]);
  int first = out->n;
  ct_diag_clear(d);
  ct_status st = recv_all(fds[0], path, out, d);
  close(fds[0]); /* a child still writing gets SIGPIPE */
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
  bool crashed = !WIFEXITED(ws) || WEXITSTATUS(ws) != 0;
  if (st == CT_ERR_LIMIT && d && d->msg[0]) crashed = false; /* the parent's own budget check */
  if (crashed || (st && (!d || !d->msg[0]))) {
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGXCPU)
      st = ct_diag_set(d, CT_ERR_LIMIT, "%s: reading the HDF5 file took over %d s of CPU", path, CHILD_CPU_SECONDS);
    else
      st = ct_diag_set(d, CT_ERR_INPUT, "%s: corrupt HDF5 file (the HDF5 library failed reading it)", path);
  }
  if (st) {
    for (int i = first; i < out->n; i++) ct_tensor_free(out->items[i]);
    out->n = first;
  }
  return st;
}

ct_status ct_h5_read(const char *path, ct_tensor_list *out, ct_diag *d) {
  return read_isolated(path, NULL, out, d);
}

ct_status ct_h5_read_one(const char *path, const char *name, ct_tensor **out, ct_diag *d) {
  ct_tensor_list l;
  ct_tensor_list_init(&l);
  ct_status st = read_isolated(path, name, &l, d);
  if (!st && l.n != 1) st = ct_diag_set(d, CT_ERR_INTERNAL, "%s: HDF5 reader returned %d tensors", path, l.n);
  if (!st) {
    *out = l.items[0];
    l.n = 0;
  }
  ct_tensor_list_free(&l);
  return st;
}
