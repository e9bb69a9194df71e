#!/usr/bin/env python3
"""test_torch_example.py - the ctypes binding of examples/torch_attention.py without a GPU or
PyTorch: its Shape matches flamia.h's flamia_shape field for field, its status names match the
header's enum, shape_of fills every field (causal, softmax scale, GQA), check_inputs refuses the
tensors the C API cannot check (types, layouts, shapes against each other, devices), flamia_attention refuses
a bad softmax_scale before it touches anything, and the real libflamia loads through the
binding (recipe presets, which fit its 1024-byte recipe buffers, the error message of an unknown
one, no GPU reported here), and that flamia_attention_op says why when this PyTorch cannot
register its custom operators (the operators themselves: test_torch_ops.py).
    test_torch_example.py EXAMPLE_PY FLAMIA_H LIBFLAMIA_SO
PyTorch is replaced by a stub module: only the parts that need no tensor run."""
import ctypes
import os
import re
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from py_checks import check, finish, load  # noqa: E402

example_py, header, lib_path = sys.argv[1:4]

stub = types.ModuleType("torch")  # the example subclasses torch.autograd.Function at import
stub.autograd = types.SimpleNamespace(Function=object)
stub.bfloat16, stub.int32, stub.float16 = "bfloat16", "int32", "float16"  # dtype stand-ins
sys.modules["torch"] = stub
ta = load("torch_attention", example_py)

text = open(header).read()
# flamia_shape's fields in order, with their C types reduced to int / pointer / float
body = re.search(r"typedef struct \{([^}]*)\} flamia_shape;", text).group(1)
body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
c_fields = []
for decl in body.split(";"):
    decl = decl.strip()
    if not decl:
        continue
    m = re.match(r"(.*?)(\w+(?:\s*,\s*\w+)*)$", decl)
    ctype, names = m.group(1).strip(), [n.strip() for n in m.group(2).split(",")]
    kind = "pointer" if "*" in ctype else "float" if ctype == "float" else "int" if ctype == "int" else ctype
    c_fields += [(n, kind) for n in names]
py_kind = {ctypes.c_int: "int", ctypes.c_void_p: "pointer", ctypes.c_float: "float"}
py_fields = [(n, py_kind.get(t, str(t))) for n, t in ta.Shape._fields_]
check(py_fields == c_fields, "Shape matches flamia_shape field for field: %s" % [n for n, _ in c_fields])

enum = re.search(r"typedef enum \{([^}]*)\} flamia_status;", text).group(1)
enum = re.sub(r"/\*.*?\*/", "", enum, flags=re.S)
names = [e.split("=")[0].strip() for e in enum.split(",") if e.strip()]
want = {i: n.replace("FLAMIA_ERR_", "").replace("FLAMIA_", "").lower() for i, n in enumerate(names)}
check(ta.FLAMIA_OK == 0 and ta.STATUS == want, "status names match flamia_status: %s" % want)


class Cu:  # an int32 cu_seqlens of three documents at a device address
    def numel(self):
        return 4

    def data_ptr(self):
        return 0x7F0000001000


class Tensor:
    def __init__(self, *shape):
        self.shape = shape


s = ta.shape_of(Tensor(700, 16, 128), Tensor(700, 4, 128), Cu(), 512)
check((s.total_tokens, s.num_docs, s.cu_seqlens, s.heads_q, s.heads_kv, s.head_dim, s.causal, s.softmax_scale,
       s.max_seqlen) == (700, 3, 0x7F0000001000, 16, 4, 128, 1, 0.0, 512),
      "shape_of(tensors): tokens, documents, cu_seqlens address, GQA 16/4, causal, scale 0 (1/sqrt(D)), max_seqlen")
s = ta.shape_of((700, 16, 128), (700, 4, 128), Cu(), 512, False, 0.0625)
check((s.causal, s.softmax_scale, s.heads_q, s.heads_kv) == (0, 0.0625, 16, 4),
      "shape_of(shapes, causal=False, softmax_scale=1/16): the backward's form")

check(s.cu_seqlens_host is None, "shape_of without a host copy: cu_seqlens_host NULL")
host = ta.host_offsets([0, 300, 301, 700], 3)
s = ta.shape_of(Tensor(700, 16, 128), Tensor(700, 4, 128), Cu(), 512, host=host)
check(list(host) == [0, 300, 301, 700] and s.cu_seqlens_host == ctypes.addressof(host),
      "host_offsets: the int32 array, and shape_of(host=) points cu_seqlens_host at it")
for bad, why in (([0, 300, 700], "3 documents, 3 offsets"), (type("CudaT", (), {"is_cuda": True})(), "a CUDA tensor")):
    try:
        ta.host_offsets(bad, 3)
        check(False, "host_offsets refuses %s" % why)
    except ValueError as e:
        check("cu_seqlens_host" in str(e), "host_offsets refuses %s: %s" % (why, e))
check(ta.host_offsets(None, 3) is None, "host_offsets(None): None")

for bad in (0.0, -0.5, float("nan"), float("inf")):
    try:
        ta.flamia_attention(None, None, None, None, 1, softmax_scale=bad, lib="/nonexistent/libflamia.so")
        check(False, "softmax_scale=%r refused" % bad)
    except ValueError as e:
        check("softmax_scale" in str(e), "softmax_scale=%r refused before the library is loaded: %s" % (bad, e))
try:  # the stub has no torch.library: the custom operators are not registered, the rest works
    ta.flamia_attention_op(None, None, None, None, 1, lib="/nonexistent/libflamia.so")
    check(False, "flamia_attention_op without torch.library refused")
except RuntimeError as e:
    check("not registered" in str(e) and "2.4" in str(e), "flamia_attention_op without torch.library: %s" % e)


class Fake:  # the attributes check_inputs reads of a tensor
    def __init__(self, shape, dtype="bfloat16", device="cuda:0", contiguous=True):
        self.shape, self.dtype, self.device, self.contiguous = tuple(shape), dtype, device, contiguous
        self.is_cuda = device.startswith("cuda")

    def dim(self):
        return len(self.shape)

    def numel(self):
        n = 1
        for x in self.shape:
            n *= x
        return n

    def is_contiguous(self):
        return self.contiguous


def refusal(q, k, v, cu):
    try:
        ta.check_inputs(q, k, v, cu)
        return None
    except ValueError as e:
        return str(e)


Q, K, CU = (700, 16, 128), (700, 4, 128), (4,)
check(refusal(Fake(Q), Fake(K), Fake(K), Fake(CU, "int32")) is None, "check_inputs: packed GQA 16/4 accepted")
bad = [
    ("q FP16", (Fake(Q, "float16"), Fake(K), Fake(K), Fake(CU, "int32")), "q:"),
    ("k on the host", (Fake(Q), Fake(K, device="cpu"), Fake(K), Fake(CU, "int32")), "k:"),
    ("v not contiguous", (Fake(Q), Fake(K), Fake(K, contiguous=False), Fake(CU, "int32")), "v:"),
    ("q 2-D", (Fake((700, 2048)), Fake(K), Fake(K), Fake(CU, "int32")), "q:"),
    ("v with other heads than k", (Fake(Q), Fake(K), Fake((700, 2, 128)), Fake(CU, "int32")), "one shape"),
    ("k with fewer tokens than q", (Fake(Q), Fake((699, 4, 128)), Fake((699, 4, 128)), Fake(CU, "int32")),
     "the same tokens"),
    ("k with another head dim", (Fake(Q), Fake((700, 4, 64)), Fake((700, 4, 64)), Fake(CU, "int32")),
     "the same tokens T and head dim"),
    ("cu_seqlens int64", (Fake(Q), Fake(K), Fake(K), Fake(CU, "int64")), "cu_seqlens"),
    ("cu_seqlens of one entry", (Fake(Q), Fake(K), Fake(K), Fake((1,), "int32")), "cu_seqlens"),
    ("cu_seqlens on the host", (Fake(Q), Fake(K), Fake(K), Fake(CU, "int32", "cpu")), "cu_seqlens"),
    ("v on another GPU", (Fake(Q), Fake(K), Fake(K, device="cuda:1"), Fake(CU, "int32")), "one device"),
]
for what, args, needle in bad:
    msg = refusal(*args)
    check(msg is not None and needle in msg, "check_inputs refuses %s: %s" % (what, msg))

fl = ta.Flamia(lib_path)
buf = fl.recipe("mxfp8")
check(len(buf.raw) == 1024 and any(buf.raw), "the real libflamia through the binding: preset mxfp8 filled")
try:
    fl.recipe("fp4x")
    check(False, "unknown preset refused")
except RuntimeError as e:
    check("invalid" in str(e) and "fp4x" in str(e), "unknown preset refused with the library's message: %s" % e)
# the binding keeps recipes in 1024-byte buffers: flamia_recipe_preset must write well inside
# one (the highest byte it changes in a larger buffer, over two fill patterns)
extent = 0
for fill in (0xA5, 0x5A):
    big = ctypes.create_string_buffer(bytes([fill]) * 4096, 4096)
    fl.check(fl.lib.flamia_recipe_preset(b"mxfp8-exact", big), "flamia_recipe_preset")
    extent = max([extent] + [i + 1 for i, b in enumerate(big.raw) if b != fill])
check(0 < extent <= 512, "flamia_recipe fits the binding's 1024-byte buffer (the preset writes %d bytes)" % extent)
avail = fl.lib.flamia_cuda_available()
check(avail in (0, 1), "flamia_cuda_available() through the binding: %d" % avail)

finish()
