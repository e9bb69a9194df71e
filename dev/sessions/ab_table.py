"""dev/sessions/ab_table.py DIR X:Y:TITLE ... - the A/B table of latency-driver runs alternated twice:
DIR/lat_X.h5, lat_X2.h5 against lat_Y.h5, lat_Y2.h5, per workload and pass, best of two each, X / Y."""
import sys, h5py
d, pairs = sys.argv[1], sys.argv[2:]
for spec in pairs:
    a, b, title = spec.split(":")
    t = {}; ws = []
    for m in (a, b, a + "2", b + "2"):
        h = h5py.File("%s/lat_%s.h5" % (d, m))["timings"]
        for i in range(h["ms"].shape[0]):
            w = h["workload"][i].decode()
            if w not in ws: ws.append(w)
            t[(w, h["pass"][i].decode(), m)] = h["ms"][i]
    print("%s: | workload | pass | %s (2 runs) | %s (2 runs) | %s / %s (best of 2) |" % (title, a, b, a, b))
    for w in ws:
        for p in ("bwd", "train"):
            x = [t[(w, p, a)], t[(w, p, a + "2")]]; y = [t[(w, p, b)], t[(w, p, b + "2")]]
            print("| %s | %s | %.3f %.3f | %.3f %.3f | %.3f |" % (w, p, x[0], x[1], y[0], y[1], min(x) / min(y)))
