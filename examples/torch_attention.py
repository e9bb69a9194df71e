#!/usr/bin/env python3
"""torch_attention.py - FLAMIA-H's FP8 attention as a PyTorch autograd function, through
ctypes (no build step beyond libflamia itself; PyTorch is needed only by this example).

    python3 examples/torch_attention.py [--lib build/kernels/libflamia.so] [--recipe mxfp8]

flamia_attention(q, k, v, cu_seqlens, max_seqlen, recipe="mxfp8") (FlamiaAttention.apply
underneath) takes packed BF16 CUDA
tensors q [T][Hq][D], k, v [T][Hkv][D] and int32 cu_seqlens [num_docs + 1] (causal inside
each document, never across; causal=False attends to the whole document; softmax_scale
defaults to 1/sqrt(D)) and returns O [T][Hq][D]; its backward gives dQ, dK, dV. The
calls run on PyTorch's current stream, allocate nothing themselves and never synchronize
(docs/cuda-api.md). The workspace (flamia_cuda_workspace_size) carries the quantized
operands from the forward to the backward, so each call keeps its own until its backward
has run: one workspace per attention layer in flight, about 27 kB per token at 16 + 16
heads, d = 128 (1.8 GB for 65,536 tokens). Run as a script it checks the function against
PyTorch's own attention per document (FP32 SDPA) and prints the cosines.

flamia_attention_op (same arguments, no check_finite) makes the same calls through custom
operators registered at import, torch.ops.flamia.attention_fwd / attention_bwd, so that
torch.compile keeps them in its graph (fullgraph=True works; --op checks it against
flamia_attention).
"""
import argparse
import ctypes
import os
import sys

import torch

FLAMIA_OK = 0
STATUS = {0: "ok", 1: "invalid", 2: "unsupported", 3: "cuda", 4: "nomem"}


class Shape(ctypes.Structure):
    """flamia_shape of kernels/include/flamia.h, field for field"""
    _fields_ = [("total_tokens", ctypes.c_int), ("num_docs", ctypes.c_int),
                ("cu_seqlens", ctypes.c_void_p), ("heads_q", ctypes.c_int), ("heads_kv", ctypes.c_int),
                ("head_dim", ctypes.c_int), ("causal", ctypes.c_int), ("softmax_scale", ctypes.c_float),
                ("max_seqlen", ctypes.c_int),
                # the optional host copy of cu_seqlens (host_offsets; flamia_attention's cu_seqlens_host=;
                # NULL on the torch.compile path, whose fake implementation sizes the workspace without
                # data, and the calls must ask for the same size)
                ("cu_seqlens_host", ctypes.c_void_p)]


class Flamia:
    """the library and one recipe; recipes are filled by flamia_recipe_preset and passed by
    pointer only, so Python keeps them as opaque buffers larger than the C struct"""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.flamia_last_error.restype = ctypes.c_char_p
        L.flamia_cuda_available.restype = ctypes.c_int
        for name in ("flamia_recipe_preset", "flamia_cuda_workspace_size", "flamia_cuda_quantize",
                     "flamia_cuda_forward", "flamia_cuda_backward", "flamia_cuda_set_deterministic",
                     "flamia_cuda_set_o_sum_interval", "flamia_cuda_check_finite"):
            getattr(L, name).restype = ctypes.c_int

    def check(self, status, what):
        if status != FLAMIA_OK:
            raise RuntimeError("%s: %s: %s" % (what, STATUS.get(status, status),
                                                self.lib.flamia_last_error().decode()))

    def check_finite(self, ws, stream, what):
        """raises FloatingPointError naming the tensors when the last quantize's Q, K, V or a
        backward's dO held a NaN or Inf (E4M3 recipes; synchronizes the stream)"""
        status = self.lib.flamia_cuda_check_finite(ptr(ws), ctypes.c_size_t(ws.numel()), stream)
        if status == 1:  # FLAMIA_ERR_INVALID: the record names the tensors
            raise FloatingPointError("%s: %s" % (what, self.lib.flamia_last_error().decode()))
        self.check(status, "flamia_cuda_check_finite")

    def workspace_bytes(self, recipe, shape):
        """flamia_cuda_workspace_size: it reads only the shape's numbers (cu_seqlens is a device
        address the host never reads), so a placeholder address serves where there is no tensor
        (shape_of's cu_address)"""
        nbytes = ctypes.c_size_t()
        self.check(self.lib.flamia_cuda_workspace_size(recipe, ctypes.byref(shape), ctypes.byref(nbytes)),
                   "flamia_cuda_workspace_size")
        return nbytes.value

    def recipe(self, name):
        buf = ctypes.create_string_buffer(1024)
        self.check(self.lib.flamia_recipe_preset(name.encode(), buf), "flamia_recipe_preset(%s)" % name)
        return buf


def ptr(t):
    return ctypes.c_void_p(t.data_ptr())


def shape_of(q, k, cu_seqlens, max_seqlen, causal=True, softmax_scale=0.0, cu_address=None, host=None):
    """flamia_shape of query and key tensors, or of their shapes (softmax_scale 0: 1/sqrt(D));
    cu_address in place of cu_seqlens' own where it has none (a fake tensor, for the workspace's
    size, which never reads it); host: host_offsets' array, the shape's cu_seqlens_host (the caller
    keeps it alive while the shape is used)"""
    T, Hq, D = (int(n) for n in getattr(q, "shape", q))
    Hkv = int(tuple(getattr(k, "shape", k))[1])
    return Shape(T, int(cu_seqlens.numel()) - 1, cu_seqlens.data_ptr() if cu_address is None else cu_address,
                 Hq, Hkv, D, 1 if causal else 0, softmax_scale, max_seqlen,
                 None if host is None else ctypes.cast(host, ctypes.c_void_p))


def host_offsets(cu_seqlens_host, num_docs):
    """the host copy of cu_seqlens (a sequence of ints or a CPU tensor, num_docs + 1 of them) as the
    int32 array the C API reads, or None; ValueError on a wrong length or a CUDA tensor (the library
    checks the values themselves)"""
    if cu_seqlens_host is None:
        return None
    if getattr(cu_seqlens_host, "is_cuda", False):
        raise ValueError("cu_seqlens_host: a host copy is needed (a list or a CPU tensor), not a CUDA tensor")
    values = [int(x) for x in (cu_seqlens_host.tolist() if hasattr(cu_seqlens_host, "tolist") else cu_seqlens_host)]
    if len(values) != num_docs + 1:
        raise ValueError("cu_seqlens_host: %d offsets for %d documents (cu_seqlens has %d)" %
                         (len(values), num_docs, num_docs + 1))
    return (ctypes.c_int32 * len(values))(*values)


def check_inputs(q, k, v, cu_seqlens):
    """what the C API cannot check from a flamia_shape: the tensors' types, layouts, shapes against
    each other and device (a mismatch there would have the kernels read past a tensor);
    ValueError says which"""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not (t.is_cuda and t.dtype == torch.bfloat16 and t.dim() == 3 and t.is_contiguous()):
            raise ValueError("%s: a contiguous BF16 CUDA tensor [T][H][D] is needed" % name)
    if tuple(k.shape) != tuple(v.shape):
        raise ValueError("k %s and v %s: one shape [T][Hkv][D] is needed" % (tuple(k.shape), tuple(v.shape)))
    if q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
        raise ValueError("q %s and k %s: the same tokens T and head dim D are needed" % (tuple(q.shape), tuple(k.shape)))
    if not (cu_seqlens.is_cuda and cu_seqlens.dtype == torch.int32 and cu_seqlens.dim() == 1 and
            cu_seqlens.numel() >= 2 and cu_seqlens.is_contiguous()):
        raise ValueError("cu_seqlens: a contiguous 1-D int32 CUDA tensor of num_docs + 1 offsets is needed")
    devices = {str(t.device) for t in (q, k, v, cu_seqlens)}
    if len(devices) != 1:
        raise ValueError("q, k, v and cu_seqlens: one device is needed, not %s" % ", ".join(sorted(devices)))


def run_forward(flamia, recipe, q, k, v, cu_seqlens, max_seqlen, causal, softmax_scale, check_finite=False,
                host=None):
    """quantize + forward on q's device and PyTorch's current stream: (O, lse, the workspace the
    backward reads); host: host_offsets' array or None"""
    with torch.cuda.device(q.device):  # the library runs on the current device: make it q's
        s = shape_of(q, k, cu_seqlens, max_seqlen, causal, softmax_scale, host=host)
        nbytes = flamia.workspace_bytes(recipe, s)
        ws = torch.empty(nbytes, dtype=torch.uint8, device=q.device)
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[0], q.shape[1], dtype=torch.float32, device=q.device)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        L = flamia.lib
        flamia.check(L.flamia_cuda_quantize(recipe, ctypes.byref(s), ptr(q), ptr(k), ptr(v), ptr(ws),
                                            ctypes.c_size_t(nbytes), stream), "flamia_cuda_quantize")
        flamia.check(L.flamia_cuda_forward(recipe, ctypes.byref(s), ptr(ws), ctypes.c_size_t(nbytes), ptr(o),
                                           ptr(lse), stream), "flamia_cuda_forward")
        if check_finite:
            flamia.check_finite(ws, stream, "flamia_attention forward")
        return o, lse, ws


def run_backward(flamia, recipe, do, o, lse, ws, cu_seqlens, heads_kv, max_seqlen, causal, softmax_scale,
                 check_finite=False, host=None):
    """the backward from run_forward's O, lse and workspace on o's device (host: the same as
    run_forward's): dQ, dK, dV"""
    with torch.cuda.device(o.device):  # autograd's thread may have another current device
        T, Hq, D = o.shape
        do = do.to(torch.bfloat16).contiguous()
        dq = torch.empty_like(o)
        dk = torch.empty(T, heads_kv, D, dtype=torch.bfloat16, device=o.device)
        dv = torch.empty_like(dk)
        s = shape_of(o, dk, cu_seqlens, max_seqlen, causal, softmax_scale, host=host)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        flamia.check(flamia.lib.flamia_cuda_backward(recipe, ctypes.byref(s), ptr(ws), ctypes.c_size_t(ws.numel()),
                                                     ptr(o), ptr(lse), ptr(do), ptr(dq), ptr(dk), ptr(dv), stream),
                     "flamia_cuda_backward")
        if check_finite:
            flamia.check_finite(ws, stream, "flamia_attention backward")
        return dq, dk, dv


class FlamiaAttention(torch.autograd.Function):
    """packed attention (causal or not inside each document): quantize + forward, and the backward
    from the same workspace"""

    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens, max_seqlen, flamia, recipe, check_finite=False, causal=True,
                softmax_scale=0.0, host=None):
        check_inputs(q, k, v, cu_seqlens)
        o, lse, ws = run_forward(flamia, recipe, q, k, v, cu_seqlens, max_seqlen, causal, softmax_scale, check_finite,
                                 host)
        ctx.save_for_backward(o, lse, ws, cu_seqlens)
        ctx.meta = (flamia, recipe, k.shape[1], max_seqlen, causal, softmax_scale, check_finite, host)
        return o

    @staticmethod
    def backward(ctx, do):
        o, lse, ws, cu_seqlens = ctx.saved_tensors
        flamia, recipe, heads_kv, max_seqlen, causal, softmax_scale, check_finite, host = ctx.meta
        dq, dk, dv = run_backward(flamia, recipe, do, o, lse, ws, cu_seqlens, heads_kv, max_seqlen, causal,
                                  softmax_scale, check_finite, host)
        return dq, dk, dv, None, None, None, None, None, None, None, None


_LOADED = {}  # library path -> (Flamia, {recipe name: recipe buffer})


def lib_path(lib=None):
    """the library a call loads: lib, else FLAMIA_LIB, else build/kernels/libflamia.so"""
    return lib or os.environ.get("FLAMIA_LIB") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                                "build", "kernels", "libflamia.so")


def _loaded(lib):
    path = lib_path(lib)
    if path not in _LOADED:
        _LOADED[path] = (Flamia(path), {})
    return _LOADED[path]


def _recipe(lib, name):
    """the library at lib_path(lib) and its recipe buffer of preset name, both made once"""
    fl, recipes = _loaded(lib)
    if name not in recipes:
        recipes[name] = fl.recipe(name)
    return fl, recipes[name]


def scale_arg(softmax_scale):
    """softmax_scale as the C API takes it (0: 1/sqrt(D)); ValueError unless None or finite and > 0"""
    if softmax_scale is not None and not (0.0 < softmax_scale < float("inf")):
        raise ValueError("softmax_scale: a finite number > 0 is needed (None: 1/sqrt(D)), not %r" % (softmax_scale,))
    return float(softmax_scale or 0.0)


def flamia_attention(q, k, v, cu_seqlens, max_seqlen, recipe="mxfp8", lib=None, check_finite=False, causal=True,
                     softmax_scale=None, cu_seqlens_host=None):
    """what a model calls per attention layer: O of the packed attention, differentiable;
    the library is loaded once per path (default: FLAMIA_LIB, else build/kernels/libflamia.so).
    recipe: "mxfp8", "mxfp8-exact" or "bf16", or any of them as "PRESET-lsum" (the row sum l over
    P's rounded values, so each row of P / l sums to one: docs/numerics.md 3.4 on why training
    may want it).
    causal: inside each document (never across documents either way); softmax_scale: the
    factor on Q K^T (None: 1/sqrt(D)).
    check_finite: raise FloatingPointError when Q, K, V (forward) or dO (backward) hold a NaN or
    Inf (the E4M3 recipes' kernels record them; each check synchronizes the stream, so use it
    when hunting a divergence, not in every step).
    cu_seqlens_host: the same offsets on the host (a list or a CPU tensor), where the data loader
    has them: the backward then sizes its split dQ by the documents, so packed batches take that
    faster path (docs/cuda-api.md; flamia_attention_op has no such argument)"""
    softmax_scale = scale_arg(softmax_scale)
    host = host_offsets(cu_seqlens_host, cu_seqlens.numel() - 1) if cu_seqlens_host is not None else None
    fl, rec = _recipe(lib, recipe)
    return FlamiaAttention.apply(q, k, v, cu_seqlens, max_seqlen, fl, rec, check_finite, bool(causal),
                                 softmax_scale, host)


def flamia_set_deterministic(on, lib=None):
    """dQ summed in a fixed order from now on (bit-identical run to run). The FP8 recipes' backward
    is then faster than the default, for a larger workspace (the split dQ: ~2.3 GB more at 16x4096,
    16 heads; docs/cuda-api.md, paper_tables/table_d_deterministic_cost); process-wide, read when a
    call is enqueued and when the workspace is sized"""
    fl, _ = _loaded(lib)
    fl.check(fl.lib.flamia_cuda_set_deterministic(1 if on else 0), "flamia_cuda_set_deterministic")


def flamia_set_o_sum_interval(key_tiles, lib=None):
    """the FP8 forward adds its O accumulator into an FP32 sum every key_tiles key tiles (default 4;
    0 never: the tensor core's accumulation biases O low on long rows, docs/numerics.md 8;
    2, 8, 16, 32 or 64 otherwise);
    process-wide, read when a call is enqueued"""
    fl, _ = _loaded(lib)
    fl.check(fl.lib.flamia_cuda_set_o_sum_interval(int(key_tiles)), "flamia_cuda_set_o_sum_interval")


# ---------------------------------------------------------------- torch.compile
# Dynamo cannot trace an autograd.Function that calls ctypes, so a compiled model breaks its graph
# at every flamia_attention. The same calls as custom operators (torch.library) stay in the graph:
# torch.ops.flamia.attention_fwd / attention_bwd, with fake implementations that give the output
# shapes (the workspace's size from flamia_cuda_workspace_size) and the autograd formula.
_OPS = []


def register_torch_ops():
    """registers torch.ops.flamia.attention_fwd and attention_bwd (PyTorch >= 2.4's
    torch.library.custom_op); done when this module is imported"""
    if _OPS:
        return
    Tensor = torch.Tensor

    @torch.library.custom_op("flamia::attention_fwd", mutates_args=())
    def attention_fwd(q: Tensor, k: Tensor, v: Tensor, cu_seqlens: Tensor, max_seqlen: int, recipe: str,
                      causal: bool, softmax_scale: float, lib: str) -> tuple[Tensor, Tensor, Tensor]:
        check_inputs(q, k, v, cu_seqlens)
        fl, rec = _recipe(lib, recipe)
        return run_forward(fl, rec, q, k, v, cu_seqlens, max_seqlen, causal, softmax_scale)

    @attention_fwd.register_fake
    def _(q, k, v, cu_seqlens, max_seqlen, recipe, causal, softmax_scale, lib):
        fl, rec = _recipe(lib, recipe)
        # the workspace's size is a host-side number, so the shapes specialize (shape_of's int())
        nbytes = fl.workspace_bytes(rec, shape_of(q, k, cu_seqlens, max_seqlen, causal, softmax_scale, cu_address=16))
        return (torch.empty_like(q), q.new_empty(q.shape[:2], dtype=torch.float32),
                q.new_empty((nbytes,), dtype=torch.uint8))

    @torch.library.custom_op("flamia::attention_bwd", mutates_args=())
    def attention_bwd(do: Tensor, o: Tensor, lse: Tensor, ws: Tensor, cu_seqlens: Tensor, heads_kv: int,
                      max_seqlen: int, recipe: str, causal: bool, softmax_scale: float,
                      lib: str) -> tuple[Tensor, Tensor, Tensor]:
        fl, rec = _recipe(lib, recipe)
        return run_backward(fl, rec, do, o, lse, ws, cu_seqlens, heads_kv, max_seqlen, causal, softmax_scale)

    @attention_bwd.register_fake
    def _(do, o, lse, ws, cu_seqlens, heads_kv, max_seqlen, recipe, causal, softmax_scale, lib):
        kv = o.new_empty((o.shape[0], heads_kv, o.shape[2]))
        return torch.empty_like(o), kv, torch.empty_like(kv)

    def setup_context(ctx, inputs, output):
        q, k, v, cu_seqlens, max_seqlen, recipe, causal, softmax_scale, lib = inputs
        o, lse, ws = output
        ctx.mark_non_differentiable(lse, ws)
        ctx.save_for_backward(o, lse, ws, cu_seqlens)
        ctx.args = (k.shape[1], max_seqlen, recipe, causal, softmax_scale, lib)

    def backward(ctx, do, _dlse, _dws):
        o, lse, ws, cu_seqlens = ctx.saved_tensors
        dq, dk, dv = torch.ops.flamia.attention_bwd(do, o, lse, ws, cu_seqlens, *ctx.args)  # run_backward: dO to BF16
        return dq, dk, dv, None, None, None, None, None, None

    attention_fwd.register_autograd(backward, setup_context=setup_context)
    _OPS.append((attention_fwd, attention_bwd))


def flamia_attention_op(q, k, v, cu_seqlens, max_seqlen, recipe="mxfp8", lib=None, causal=True,
                        softmax_scale=None):
    """flamia_attention through the custom operators, for torch.compile (no graph break): the
    same kernels, the same results. No check_finite here (it synchronizes)."""
    softmax_scale = scale_arg(softmax_scale)
    if not _OPS:
        raise RuntimeError("torch.ops.flamia is not registered: %s" % (
            _OPS_ERROR[0] if _OPS_ERROR else "this PyTorch has no torch.library.custom_op (2.4 or later needed)"))
    o, _, _ = torch.ops.flamia.attention_fwd(q, k, v, cu_seqlens, int(max_seqlen), recipe, bool(causal),
                                             softmax_scale, lib_path(lib))
    return o


_OPS_ERROR = []  # why the operators could not be registered (flamia_attention does not need them)
if hasattr(getattr(torch, "library", None), "custom_op"):  # at import: the first call may be inside torch.compile
    try:
        register_torch_ops()
    except Exception as e:  # an older or newer torch.library: keep the rest of the module usable
        _OPS_ERROR.append("%s: %s" % (type(e).__name__, e))


def cosine(a, b):
    """cosine similarity of two tensors taken as flat FP32 vectors"""
    return torch.nn.functional.cosine_similarity(a.float().flatten(), b.float().flatten(), dim=0).item()


def reference(q, k, v, cu, causal=True, softmax_scale=None):
    """PyTorch's attention per document in FP32 (GQA by repeating kv heads)"""
    out = []
    g = q.shape[1] // k.shape[1]
    for a, b in zip(cu[:-1], cu[1:]):
        qq, kk, vv = (x[a:b].float().transpose(0, 1) for x in (q, k, v))
        kk, vv = kk.repeat_interleave(g, 0), vv.repeat_interleave(g, 0)
        out.append(torch.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=causal,
                                                                    scale=softmax_scale).transpose(0, 1))
    return torch.cat(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--lib", default=os.environ.get("FLAMIA_LIB", os.path.join(here, "..", "build", "kernels",
                                                                              "libflamia.so")))
    ap.add_argument("--recipe", default="mxfp8", help="bf16, mxfp8 or mxfp8-exact, or PRESET-lsum (l over P's rounded values)")
    ap.add_argument("--lengths", default="1000,1,333,2048,129", help="document lengths of the pack")
    ap.add_argument("--heads", default="16,4", help="query heads, kv heads")
    ap.add_argument("--deterministic", action="store_true",
                    help="deterministic dQ; checks that a second backward gives the same dQ bits")
    ap.add_argument("--o-sum-interval", type=int, default=None,
                    help="the FP8 forward's O sum interval in key tiles (0 never, 2..64 powers of two; default the library's, 4)")
    ap.add_argument("--non-causal", action="store_true", help="attend to the whole document (causal=False)")
    ap.add_argument("--softmax-scale", type=float, default=None, help="the factor on Q K^T (default 1/sqrt(D))")
    ap.add_argument("--op", action="store_true",
                    help="also run the custom operators under torch.compile(fullgraph=True) and compare")
    args = ap.parse_args()
    causal = not args.non_causal
    fl = Flamia(args.lib)
    _LOADED[args.lib] = (fl, {})
    if not torch.cuda.is_available() or not fl.lib.flamia_cuda_available():
        print("no sm_90 GPU visible (or libflamia built without CUDA): nothing to run")
        return 77
    lens = [int(x) for x in args.lengths.split(",")]
    hq, hkv = (int(x) for x in args.heads.split(","))
    cu_host = [0]
    for n in lens:
        cu_host.append(cu_host[-1] + n)
    T, D, dev = cu_host[-1], 128, "cuda"
    torch.manual_seed(1)
    q = torch.randn(T, hq, D, device=dev).bfloat16().requires_grad_()
    k = torch.randn(T, hkv, D, device=dev).bfloat16().requires_grad_()
    v = torch.randn(T, hkv, D, device=dev).bfloat16().requires_grad_()
    do = torch.randn(T, hq, D, device=dev).bfloat16()
    cu = torch.tensor(cu_host, dtype=torch.int32, device=dev)

    if args.deterministic:
        flamia_set_deterministic(True, lib=args.lib)
    if args.o_sum_interval is not None:
        flamia_set_o_sum_interval(args.o_sum_interval, lib=args.lib)
    opts = dict(lib=args.lib, causal=causal, softmax_scale=args.softmax_scale)
    o = flamia_attention(q, k, v, cu, max(lens), args.recipe, **opts)
    o.backward(do)
    grads = [x.grad.clone() for x in (q, k, v)]
    for x in (q, k, v):
        x.grad = None
    same = True
    if args.deterministic:  # the same step again: every gradient bit-identical
        flamia_attention(q, k, v, cu, max(lens), args.recipe, **opts).backward(do)
        same = all(torch.equal(g, x.grad) for g, x in zip(grads, (q, k, v)))
        print("deterministic: a second step's dQ, dK, dV %s" % ("bit-identical" if same else "DIFFER"))
        for x in (q, k, v):
            x.grad = None
    op_ok = op_path_matches(q, k, v, do, cu, max(lens), args.recipe, o, grads, opts) if args.op else True
    host_ok = host_copy_matches(q, k, v, do, cu, cu_host, max(lens), args.recipe, o, grads, opts)
    o_ref = reference(q, k, v, cu_host, causal, args.softmax_scale)
    o_ref.backward(do.float())
    res = [("O", o, o_ref)] + [(n, g, x.grad) for n, g, x in zip(("dQ", "dK", "dV"), grads, (q, k, v))]
    print("%s, pack %s (T = %d), heads %d/%d, d = %d, %s, softmax scale %s: cosine vs PyTorch FP32 attention" % (
        args.recipe, args.lengths, T, hq, hkv, D, "causal" if causal else "non-causal",
        args.softmax_scale or "1/sqrt(d)"))
    worst = 1.0
    for n, a, b in res:
        finite = bool(torch.isfinite(a.float()).all())
        c = cosine(a, b) if finite else float("nan")
        worst = min(worst, c) if finite else -1.0
        print("  %-2s %.5f%s" % (n, c, "" if finite else "  (non-finite values)"))
    # the recipes' accuracy on plain randn (docs/numerics.md): bf16 ~1.0, mxfp8 >= 0.997
    need = 0.999 if args.recipe.removesuffix("-lsum") == "bf16" else 0.99
    found = nonfinite_found(q, k, v, do, cu, max(lens), args.recipe, args.lib)
    ok = worst >= need and same and found and op_ok and host_ok
    print("ok" if ok else "FAIL: %s" % ("a cosine below %.3f" % need if worst < need else
                                        "the deterministic runs differ" if not same else
                                        "the compiled operators differ" if not op_ok else
                                        "the host copy of cu_seqlens changes the results" if not host_ok else
                                        "a NaN went unreported"))
    return 0 if ok else 1


def same_step(o2, do, inputs, o, grads):
    """a second path's step (its O, then its backward from do) against the first's O and gradients:
    (O, dK and dV bit-identical, dQ's cosine); the inputs' grads cleared after"""
    o2.backward(do)
    g2 = [x.grad.clone() for x in inputs]
    for x in inputs:
        x.grad = None
    same = torch.equal(o2, o) and torch.equal(g2[1], grads[1]) and torch.equal(g2[2], grads[2])
    return same, cosine(g2[0], grads[0])


def op_path_matches(q, k, v, do, cu, max_seqlen, recipe, o, grads, opts):
    """the custom operators under torch.compile(fullgraph=True: a graph break fails it) against
    flamia_attention's results: O, dK and dV bit-identical (the same kernels on the same inputs, their
    sums in a fixed order), dQ up to the order of its reduce-adds (cosine >= 0.9999)"""
    f = torch.compile(lambda q, k, v, cu: flamia_attention_op(q, k, v, cu, max_seqlen, recipe, **opts),
                      fullgraph=True, backend="aot_eager")
    same, dq_cos = same_step(f(q, k, v, cu), do, (q, k, v), o, grads)
    print("compiled operators (torch.compile, fullgraph): O, dK, dV %s; dQ cosine %.6f against flamia_attention" % (
        "bit-identical" if same else "DIFFER", dq_cos))
    return same and dq_cos >= 0.9999


def host_copy_matches(q, k, v, do, cu, cu_host, max_seqlen, recipe, o, grads, opts):
    """flamia_attention with cu_seqlens_host= against without: O, dK and dV bit-identical (the same
    kernels), dQ up to its summation order (cosine >= 0.9999; the split dQ where the copy lets the
    backward take it)"""
    o2 = flamia_attention(q, k, v, cu, max_seqlen, recipe, cu_seqlens_host=cu_host, **opts)
    same, dq_cos = same_step(o2, do, (q, k, v), o, grads)
    print("cu_seqlens_host given: O, dK, dV %s; dQ cosine %.6f against without it" % (
        "bit-identical" if same else "DIFFER", dq_cos))
    return same and dq_cos >= 0.9999


def nonfinite_found(q, k, v, do, cu, max_seqlen, recipe, lib):
    """check_finite=True reports a NaN in K (forward) and in dO (backward) for the E4M3 recipes;
    bf16 lets non-finite values propagate instead"""
    if recipe.removesuffix("-lsum") == "bf16":
        return True
    k_nan = k.detach().clone()
    k_nan[k.shape[0] // 2, 0, 3] = float("nan")
    messages = []
    for kk, dd in ((k_nan, do), (k.detach(), do.clone().index_fill_(0, torch.tensor([1], device=do.device),
                                                                      float("nan")))):
        qq, kk, vv = q.detach().clone().requires_grad_(), kk.clone().requires_grad_(), v.detach().clone().requires_grad_()
        try:
            flamia_attention(qq, kk, vv, cu, max_seqlen, recipe, lib=lib, check_finite=True).backward(dd)
            messages.append(None)
        except FloatingPointError as e:
            messages.append(str(e))
    found = messages[0] is not None and "elements in K:" in messages[0] and \
        messages[1] is not None and "elements in dO:" in messages[1]
    for m in messages:
        print("check_finite: %s" % (m or "NOT RAISED"))
    return found


if __name__ == "__main__":
    sys.exit(main())
