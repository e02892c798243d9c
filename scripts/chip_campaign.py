# chip_campaign.py: random chips over every isa/chip.def key and range (bounds, log-uniform
# values, powers of two, 15% out of range): a chip `ctpu chip` accepts must deploy the given
# Tpu modules bit-exact (--compare-all) or be refused by the planner for size (exit 4, named);
# a chip it refuses must be refused alike by plan and deploy. usage: chip_campaign.py CTPU
# CHIP.def MODEL.tpu[,MODEL.tpu] INPUT.pb N SEED (run in a scratch directory).
import json, math, random, re, subprocess, sys, os
C, DEF, MODELS, INP, N, SEED = sys.argv[1], sys.argv[2], sys.argv[3].split(','), sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
macros = dict(re.findall(r'#define (CT_CHIP_\w+) (\d+)', open(os.path.join(os.path.dirname(DEF), 'chip.h')).read()))
keys = []
for line in open(DEF):
    m = re.match(r'CT_CHIP_KEY\((\w+), "([\w.]+)", (\w+), ([^,]+), ([^,]+), ([^,]+), ([^,]+),', line)
    if not m: continue
    mem, key, T, dflt, lo, hi, flags = m.groups()
    lo, hi = macros.get(lo.strip(), lo), macros.get(hi.strip(), hi)
    if T in ('INT', 'F64'): keys.append((key, T, float(lo), float(hi), 'POW2' in flags))
rnd = random.Random(SEED)
def val(T, lo, hi, pow2, bad):
    if bad: v = rnd.choice([lo - 1 if T == 'INT' else lo / 2, hi + 1 if T == 'INT' else hi * 2])
    elif pow2:
        a, b = math.ceil(math.log2(lo)), math.floor(math.log2(hi)); v = 2 ** rnd.choice([a, b, rnd.randint(a, b)])
    else:
        r = rnd.random()
        v = lo if r < .2 else hi if r < .4 else math.exp(rnd.uniform(math.log(max(lo, 1e-9)), math.log(hi)))
    return int(round(v)) if T == 'INT' else v
def nest(d):
    out = {}
    for k, v in d.items():
        p = k.split('.'); o = out
        for q in p[:-1]: o = o.setdefault(q, {})
        o[p[-1]] = v
    return out
res = {}
for i in range(N):
    chip = {}
    bad = rnd.random() < 0.15
    for (key, T, lo, hi, pow2) in rnd.sample(keys, rnd.randint(1, 4)):
        chip[key] = val(T, lo, hi, pow2, bad and not chip)
    if 'lmem.banks' in chip and not bad:  # keep banks dividing bytes most of the time
        by = chip.get('lmem.bytes', 1048576)
        if rnd.random() < 0.8: chip['lmem.banks'] = max(b for b in [1,2,4,8,16,32,64,128,256,512,1024] if by % b == 0 and b <= chip['lmem.banks'] or b == 1)
    path = f'chip_{SEED}_{i}.json'; json.dump(nest(chip), open(path, 'w'))
    rc = subprocess.run([C, 'chip', '--dump', '--chip', path], capture_output=True, text=True)
    if rc.returncode:
        msg = rc.stderr.strip()
        for sub in (['plan', MODELS[0], '--chip', path], ['deploy', MODELS[0], '--chip', path, '-o', 'x.ctpu']):
            r = subprocess.run([C] + sub, capture_output=True, text=True)
            if r.returncode != rc.returncode: print('MISMATCH refuse', sub[0], chip, rc.returncode, r.returncode, r.stderr.strip()[:200]); 
        res['refused'] = res.get('refused', 0) + 1
        continue
    for m in MODELS:
        try:
            r = subprocess.run([C, 'deploy', m, '--chip', path, '-o', 'p.ctpu', '--test-input', INP, '--compare-all'], capture_output=True, text=True, timeout=120)
            code, err = r.returncode, r.stderr.strip().splitlines()
        except subprocess.TimeoutExpired:
            code, err = 'timeout', []
        res[code] = res.get(code, 0) + 1
        if code != 0: print('FAIL', m, code, json.dumps(chip), '|', (err[-1] if err else '')[:300]); sys.stdout.flush()
print(res)
