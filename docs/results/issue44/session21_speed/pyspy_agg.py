"""Aggregate a py-spy raw profile (`py-spy record -f raw`): inclusive and self shares per function, self
per line. `python pyspy_agg.py PROFILE.raw [N]`."""
import sys, collections, re
self_f, self_l, incl = collections.Counter(), collections.Counter(), collections.Counter()
tot = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    n = int(n); tot += n
    frames = stack.split(";")
    leaf = frames[-1]
    m = re.match(r"(.*) \((.*):(\d+)\)", leaf)
    fn = f"{m.group(1)} ({m.group(2).split('/')[-1]})" if m else leaf
    self_f[fn] += n; self_l[leaf.split('/')[-1]] += n
    seen = set()
    for fr in frames:
        m = re.match(r"(.*) \((.*):(\d+)\)", fr)
        k = f"{m.group(1)} ({m.group(2).split('/')[-1]})" if m else fr
        if k not in seen: incl[k] += n; seen.add(k)
print("total samples", tot)
print("-- inclusive"); [print(f"{v/tot*100:5.1f}% {k}") for k, v in incl.most_common(int(sys.argv[2]) if len(sys.argv)>2 else 40)]
print("-- self"); [print(f"{v/tot*100:5.1f}% {k}") for k, v in self_f.most_common(30)]
print("-- self lines"); [print(f"{v/tot*100:5.1f}% {k}") for k, v in self_l.most_common(30)]
