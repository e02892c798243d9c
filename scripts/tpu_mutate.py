#!/usr/bin/env python3
"""tpu_mutate.py: single semantic edits of Tpu (or Top) IR texts, run through ctpu to find
inputs the verifier accepts but a later stage crashes on (exit >= 5, a signal, a sanitizer
report). One edit per mutant, on one op line: a result dimension or dtype, an integer of an
attribute (value, list length), an operand swapped or replaced by another value, a quant
parameter, an attribute dropped.

usage: tpu_mutate.py CTPU SEED_DIR OUT_DIR [--n N] [--seed S] [--cmd deploy|infer|plan]
SEED_DIR holds X.tpu (+ X.tpu.h5) and X.pb (the test input). Failing mutants are kept in
OUT_DIR/<name>-<i>/ with mut.tpu, the weights, x.pb and cmd.txt (command, exit, stderr);
accepted mutants whose program differs from the Tpu reference (deploy exit 1: the verifier
let through something the back end reads differently) in OUT_DIR/differ-<name>-<i>/."""
import os, random, re, shutil, subprocess, sys

INTS = [-1, 0, 1, 2, 3, 7, 15, 64, 255, 256, 65536, 2**31, -2**31 - 1, 2**62, -9223372036854775808]
DTYPES = ["i8", "u8", "i16", "i32", "bf16", "f16", "f32", "i64"]


def op_lines(lines):
    return [i for i, l in enumerate(lines) if re.match(r"\s*%\d+ = t(pu|op)\.\w+\(", l) and ".Input(" not in l
            and ".Weight(" not in l]


def edit_type(l, rnd):
    m = list(re.finditer(r"tensor<([0-9x]*?)x?(i8|u8|i16|u16|i32|i64|bf16|f16|f32)", l.split(" : ", 1)[1]))
    if not m:
        return None
    head, tail = l.split(" : ", 1)
    t = rnd.choice(m)
    dims = [d for d in t.group(1).split("x") if d]
    if rnd.random() < 0.3 or not dims:
        new = (t.group(1) + "x" if dims else "") + rnd.choice(DTYPES)
    else:
        k = rnd.randrange(len(dims))
        choice = rnd.random()
        if choice < 0.6:
            dims[k] = str(max(0, int(dims[k]) + rnd.choice([-1, 1, 2, 5, -int(dims[k])])))
        elif choice < 0.8 and len(dims) > 1:
            del dims[k]
        else:
            dims.insert(k, "1")
        new = "x".join(dims) + "x" + t.group(2)
    return head + " : " + tail[:t.start()] + "tensor<" + new + tail[t.end():]


def edit_attr(l, rnd):
    m = re.search(r"\{(.*)\} :", l)
    if not m:
        return None
    ints = list(re.finditer(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", m.group(1)))
    if not ints:
        return None
    t = rnd.choice(ints)
    body = m.group(1)
    r = rnd.random()
    if r < 0.7:
        body = body[:t.start()] + str(rnd.choice(INTS + ["1e400", "-1e400", "nan"] if rnd.random() < 0.2 else INTS)) + body[t.end():]
    elif r < 0.85:  # drop one list element
        lists = list(re.finditer(r"\[([^\]]*)\]", body))
        if not lists:
            return None
        L = rnd.choice(lists)
        items = [x for x in L.group(1).split(",") if x.strip()]
        if not items:
            return None
        del items[rnd.randrange(len(items))]
        body = body[:L.start()] + "[" + ",".join(items) + "]" + body[L.end():]
    else:  # drop one attribute
        attrs = list(re.finditer(r"(\w+) = (\[[^\]]*\]|\"[^\"]*\"|[^,]+)(, )?", body))
        if not attrs:
            return None
        a = rnd.choice(attrs)
        body = body[:a.start()] + body[a.end():]
        body = body.rstrip(", ")
    return l[:m.start(1)] + body + l[m.end(1):]


def edit_operand(l, rnd, defined):
    m = re.search(r"\.\w+\(([^)]*)\)", l)
    if not m:
        return None
    ops = [x.strip() for x in m.group(1).split(",") if x.strip()]
    if not ops:
        return None
    if len(ops) > 1 and rnd.random() < 0.5:
        i, j = rnd.sample(range(len(ops)), 2)
        ops[i], ops[j] = ops[j], ops[i]
    else:
        if not defined:
            return None
        ops[rnd.randrange(len(ops))] = rnd.choice(defined)
    return l[:m.start(1)] + ", ".join(ops) + l[m.end(1):]


def edit_quant(l, rnd):
    q = list(re.finditer(r"!quant<([^>]*)>", l))
    if not q:
        return None
    t = rnd.choice(q)
    nums = list(re.finditer(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", t.group(1)))
    if not nums:
        return None
    n = rnd.choice(nums)
    body = t.group(1)
    body = body[:n.start()] + str(rnd.choice([0, -1, 200, 1e-300, 1e300, 128, -129, "nan"])) + body[n.end():]
    return l[:t.start(1)] + body + l[t.end(1):]


def mutate(text, rnd):
    lines = text.split("\n")
    cand = op_lines(lines)
    for _ in range(20):
        i = rnd.choice(cand)
        l = lines[i]
        defined = re.findall(r"^\s*(%\d+) =", "\n".join(lines[:i]), re.M)
        kind = rnd.choice(["type", "type", "attr", "attr", "attr", "operand", "quant"])
        new = {"type": lambda: edit_type(l, rnd), "attr": lambda: edit_attr(l, rnd),
               "operand": lambda: edit_operand(l, rnd, defined), "quant": lambda: edit_quant(l, rnd)}[kind]()
        if new and new != l:
            lines[i] = new
            return "\n".join(lines), i + 1, kind
    return None, 0, ""


def bad(rc, err):
    return rc >= 5 or rc < 0 or "Sanitizer" in err or "runtime error:" in err


def main():
    a = sys.argv[1:]
    ct, seeds, out = os.path.abspath(a[0]), a[1], a[2]
    n = int(a[a.index("--n") + 1]) if "--n" in a else 200
    rnd = random.Random(int(a[a.index("--seed") + 1]) if "--seed" in a else 1)
    cmd = a[a.index("--cmd") + 1] if "--cmd" in a else "deploy"
    files = sorted(f for f in os.listdir(seeds) if f.endswith(".tpu") and os.path.exists(os.path.join(seeds, f[:-4] + ".pb")))
    os.makedirs(out, exist_ok=True)
    work = os.path.join(out, "work")
    found = 0
    rcs = {}
    for k in range(n):
        f = rnd.choice(files)
        text = open(os.path.join(seeds, f)).read()
        mut, line, kind = mutate(text, rnd)
        if not mut:
            continue
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        base = f[:-4]
        weights = re.search(r'weights = "([^"]*)"', mut)
        if weights and os.path.exists(os.path.join(seeds, weights.group(1))):
            shutil.copy(os.path.join(seeds, weights.group(1)), os.path.join(work, weights.group(1)))
        open(os.path.join(work, "mut.tpu"), "w").write(mut)
        shutil.copy(os.path.join(seeds, base + ".pb"), os.path.join(work, "x.pb"))
        argv = {"deploy": [ct, "deploy", "mut.tpu", "-o", "out.ctpu", "--test-input", "x.pb", "--compare-all"],
                "infer": [ct, "infer", "mut.tpu", "--input", "x.pb", "-o", "o.h5"],
                "plan": [ct, "plan", "mut.tpu"]}[cmd]
        try:
            p = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=120)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = 124, "timeout"
        rcs[rc] = rcs.get(rc, 0) + 1
        if bad(rc, err) or rc == 124 or (rc == 1 and cmd == "deploy"):
            found += rc != 1
            dst = os.path.join(out, "%s%s-%d" % ("differ-" if rc == 1 else "", base, k))
            shutil.copytree(work, dst)
            open(os.path.join(dst, "cmd.txt"), "w").write("%s\nline %d (%s edit), exit %d\n%s" % (" ".join(argv[1:]), line, kind, rc, err[-3000:]))
            print("FOUND %s line %d (%s) exit %d: %s" % (dst, line, kind, rc, (err.strip().splitlines() or [""])[-1][:200]), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    print("tpu_mutate: %d mutants, %d failing; exit codes %s" % (n, found, sorted(rcs.items())))


if __name__ == "__main__":
    main()
