#!/usr/bin/env python3
"""test_torch_ops.py - examples/torch_attention.py's custom operators (torch.ops.flamia.attention_fwd
and attention_bwd) without a GPU: the kernels' two calls (run_forward, run_backward) are replaced by
CPU stand-ins with the same output shapes, and the workspace's size by a stand-in that records the
flamia_shape the fake implementation built. Checked: the operators' schemas, fake implementations
and autograd registration (torch.library.opcheck), the gradients reaching q, k and v through the
registered backward, and torch.compile(fullgraph=True) over forward and backward (no graph break)
giving the eager results. Needs PyTorch (exit 77, skipped, without it); the real kernels through the
operators are checked by `examples/torch_attention.py --op` on a GPU.
    test_torch_ops.py EXAMPLE_PY LIBFLAMIA_SO"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from py_checks import check, finish, load  # noqa: E402

try:
    import torch
except ImportError:
    print("PyTorch not installed: skipped")
    sys.exit(77)

example_py, lib_path = sys.argv[1:3]
ta = load("torch_attention", example_py)  # registered by name: Dynamo looks traced functions' modules up

shapes_seen = []


def workspace_bytes(self, recipe, shape):
    """stand-in for flamia_cuda_workspace_size (it needs a GPU): a size from the shape's numbers"""
    fields = tuple(getattr(shape, n) for n, _ in ta.Shape._fields_ if n != "cu_seqlens")
    shapes_seen.append(fields)
    return 64 * shape.total_tokens * shape.heads_q + 8 * shape.num_docs


def run_forward(flamia, recipe, q, k, v, cu_seqlens, max_seqlen, causal, softmax_scale, check_finite=False):
    s = ta.shape_of(q, k, cu_seqlens, max_seqlen, causal, softmax_scale)
    o = (q.float() * 2 + softmax_scale).to(torch.bfloat16)
    return o, q.float().sum(-1), torch.zeros(flamia.workspace_bytes(recipe, s), dtype=torch.uint8)


def run_backward(flamia, recipe, do, o, lse, ws, cu_seqlens, heads_kv, max_seqlen, causal, softmax_scale,
                 check_finite=False):
    T, _, D = o.shape
    dk = torch.full((T, heads_kv, D), float(causal) + 1, dtype=torch.bfloat16)
    return (do * 3).to(torch.bfloat16), dk, dk * 2


ta.Flamia.workspace_bytes = workspace_bytes
ta.run_forward, ta.run_backward = run_forward, run_backward
ta.check_inputs = lambda *args: None  # CPU tensors here; the real check is test_torch_example's
ops = torch.ops.flamia  # registered when the module was imported
check(hasattr(ops, "attention_fwd") and hasattr(ops, "attention_bwd"), "importing the example registers the operators")

torch.manual_seed(1)
T, Hq, Hkv, D = 77, 4, 2, 128
cu = torch.tensor([0, 30, 31, 77], dtype=torch.int32)
mk = lambda h: torch.randn(T, h, D).bfloat16().requires_grad_()
q, k, v = mk(Hq), mk(Hkv), mk(Hkv)
do = torch.randn(T, Hq, D).bfloat16()
args = (q, k, v, cu, 46, "mxfp8", True, 0.25, lib_path)

# torch's own checks of the registration: schema, fake against real outputs, autograd formula
for util in ("test_schema", "test_faketensor", "test_autograd_registration"):
    try:
        torch.library.opcheck(ops.attention_fwd.default, args, test_utils=(util,))
        check(True, "opcheck %s (attention_fwd)" % util)
    except Exception as e:  # opcheck raises OpCheckError naming what failed
        check(False, "opcheck %s (attention_fwd): %s" % (util, str(e).splitlines()[0][:300]))
o, lse, ws = ops.attention_fwd(*args)
bwd_args = (do, o.detach(), lse, ws, cu, Hkv, 46, "mxfp8", True, 0.25, lib_path)
for util in ("test_schema", "test_faketensor"):
    try:
        torch.library.opcheck(ops.attention_bwd.default, bwd_args, test_utils=(util,))
        check(True, "opcheck %s (attention_bwd)" % util)
    except Exception as e:
        check(False, "opcheck %s (attention_bwd): %s" % (util, str(e).splitlines()[0][:300]))
check(shapes_seen and shapes_seen[-1] == (T, 3, Hq, Hkv, D, 1, 0.25, 46, None),
      "the fake implementation's flamia_shape: tokens, documents, GQA 4/2, d, causal, scale, max_seqlen, no host "
      "copy of cu_seqlens %s"
      % (shapes_seen[-1:],))
check(tuple(ws.shape) == (64 * T * Hq + 24,) and ws.dtype == torch.uint8 and lse.shape == (T, Hq),
      "outputs: the workspace sized by flamia_cuda_workspace_size, lse [T][Hq] float32")


def step(fn):
    for x in (q, k, v):
        x.grad = None
    out = fn(q, k, v, cu)
    out.backward(do)
    return out.detach(), [x.grad.clone() for x in (q, k, v)]


attention = lambda q, k, v, cu: ta.flamia_attention_op(q, k, v, cu, 46, "mxfp8", lib=lib_path, softmax_scale=0.25)
o_e, g_e = step(attention)
check(torch.equal(o_e, (q.detach().float() * 2 + 0.25).bfloat16()), "flamia_attention_op: O from the forward call")
check(torch.equal(g_e[0], (do * 3).bfloat16()) and bool((g_e[1] == 2).all()) and bool((g_e[2] == 4).all()),
      "gradients: dQ, dK, dV from the backward call (through register_autograd)")
check(o.requires_grad and not lse.requires_grad and not ws.requires_grad,
      "lse and the workspace are outputs without gradients")

torch._dynamo.reset()
compiled = torch.compile(attention, fullgraph=True, backend="aot_eager")
try:
    o_c, g_c = step(compiled)
    same = torch.equal(o_c, o_e) and all(torch.equal(a, b) for a, b in zip(g_c, g_e))
    check(same, "torch.compile(fullgraph=True): no graph break, forward and backward as eager")
except Exception as e:
    check(False, "torch.compile(fullgraph=True): %s: %s" % (type(e).__name__, str(e).splitlines()[0][:300]))
try:
    ta.flamia_attention_op(q, k, v, cu, 46, "mxfp8", lib=lib_path, softmax_scale=float("nan"))
    check(False, "softmax_scale NaN refused")
except ValueError:
    check(True, "softmax_scale NaN refused before the operator runs")

finish()
