"""cudnn_fp8.py - the cuDNN FP8 attention peer of peers.py (system cudnn-fp8).

cuDNN's FP8 scaled-dot-product attention, forward and backward, through cudnn-frontend's Python
graphs (sdpa_fp8, sdpa_fp8_backward; PyPI nvidia-cudnn-frontend, which loads the cuDNN that
PyTorch ships). Its scaling is per tensor, as Transformer Engine uses it: Q, K, V and dO are E4M3
with one FP32 descale factor each, S and dP are rescaled by per-tensor factors. O, dQ, dK, dV
come out in BF16 where cuDNN accepts it, else FP16, else E4M3 (`out_dtype` says which). On the
H200 with cuDNN 9.19 the forward refuses 16-bit O ("only supported on Blackwell"), so there they
are E4M3 with per-tensor scales of their own.

Quantization is "current scaling": amax of the whole tensor, scale = 448 / amax, one cast,
compiled by torch.compile; it is timed where a pass includes it (see peers.py). The dP and output
factors are "delayed": taken from the amaxes that an untimed first execution reports, as a
training framework takes them from the previous step; S (the probabilities) is scaled by 256.

Layout: the packed [T, H, D] tensors of peers.py, as cuDNN's BSHD (B documents of L tokens).
Documents of unequal length go through cuDNN's ragged offsets (THD). Where cuDNN has no engine
for the forward the constructor raises; where it has none for the backward (ragged documents on
the H200) the forward stays usable and `bwd_error` holds cuDNN's exception. peers.py records either as the
rows' note.
"""
import math

E4M3_MAX = 448.0


def _pow2_at_most(x):
    """the largest power of two <= x (x > 0): exact scale factors for the S / dP tensors"""
    return 2.0 ** math.floor(math.log2(x))


class CudnnFp8Attention:
    """Forward and backward graphs of one shape; run closures for peers.py's timing loop.

    lens: document lengths (all equal: batched BSHD; otherwise ragged THD, padded to max(lens));
    q, k, v, do: BF16 packed [T, Hq|Hkv, D] CUDA tensors; causal (top-left diagonal) always."""

    def __init__(self, torch, lens, q, k, v, do, softmax_scale):
        import cudnn

        self.torch, self.cudnn = torch, cudnn
        self.B, self.L = len(lens), max(lens)
        self.ragged = len(set(lens)) != 1
        self.Hq, self.Hkv, self.D = q.shape[1], k.shape[1], q.shape[2]
        self.scale = softmax_scale
        self.handle = cudnn.create_handle()
        cudnn.set_stream(handle=self.handle, stream=torch.cuda.current_stream().cuda_stream)
        dev = q.device
        T = q.shape[0]
        self.T_alloc = T if not self.ragged else ((T + 63) // 64) * 64  # cuDNN's tiles read up to 64 past T
        pad = lambda x: x if x.shape[0] == self.T_alloc else torch.cat(
            [x, x.new_zeros((self.T_alloc - x.shape[0],) + tuple(x.shape[1:]))])
        self.bf16 = dict(q=pad(q), k=pad(k), v=pad(v), do=pad(do))

        # current scaling, fused by torch.compile (amax, scale, cast: what a framework pays per call)
        def quant(x):
            amax = x.abs().amax().float().clamp(min=1e-12)
            s = E4M3_MAX / amax
            return (x.float() * s).to(torch.float8_e4m3fn), (1.0 / s).reshape(1, 1, 1, 1)

        self.quant = torch.compile(quant, dynamic=False)
        self.fp8, self.descale = {}, {}
        self.quantize(("q", "k", "v", "do"))

        self.seq = None
        if self.ragged:
            ls = torch.tensor(lens, dtype=torch.int32, device=dev)
            self.seq = ls.view(-1, 1, 1, 1)
            self.cu = torch.cat([ls.new_zeros(1), torch.cumsum(ls, 0)]).to(torch.int64).view(-1, 1, 1, 1)

        one = lambda: torch.ones((1, 1, 1, 1), dtype=torch.float32, device=dev)
        # S (cuDNN's name for P, in [0, 1]) scaled to E4M3's range by an exact power of two
        self.s_scale, self.s_descale = one() * 256.0, one() / 256.0
        self.dp_scale, self.dp_descale = one(), one()
        # output scales (1 for 16-bit outputs): O, dQ, dK, dV, each with its descale
        self.out_scale = [(one(), one()) for _ in range(4)]
        self.gb = None
        self.bwd_error = None

        # BF16 outputs where cuDNN has them (Blackwell), else FP16, else E4M3 (Hopper: cuDNN 9.19
        # refuses 16-bit O in the FP8 forward) with delayed per-tensor scales
        self.out_dtype, err = None, None
        for od in (torch.bfloat16, torch.float16, torch.float8_e4m3fn):
            try:
                self._build_forward(od)
                self.out_dtype = od
                break
            except Exception as e:  # no engine for this output type: try the next
                err = e
        if self.out_dtype is None:
            raise err
        try:  # a backward cuDNN cannot build (ragged on Hopper) leaves the forward usable
            self._build_backward(self.out_dtype)
        except Exception as e:
            self.gb = None
            self.bwd_error = e
        self._calibrate()

    # ---------------------------------------------------------------- quantization
    def quantize(self, names):
        """codes and descale factors of the named BF16 tensors, fresh buffers (the packs follow)"""
        for n in names:
            self.fp8[n], self.descale[n] = self.quant(self.bf16[n])

    # ---------------------------------------------------------------- graphs
    def _dims(self, H):
        B, L, D = self.B, self.L, self.D
        return (B, H, L, D), (L * H * D, D, H * D, 1)

    def _ragged(self, g, t, name, per):
        """ragged documents: t's offsets, the cumulative token counts times `per` elements a token"""
        if self.ragged:
            off = g.tensor(name=name + "_off", dim=(self.B + 1, 1, 1, 1), stride=(1, 1, 1, 1),
                           data_type=self.cudnn.data_type.INT64)
            t.set_ragged_offset(off)
            self._offsets[off] = per

    def _tensor(self, g, name, H, dtype):
        dim, stride = self._dims(H)
        t = g.tensor(name=name, dim=dim, stride=stride, data_type=dtype)
        self._ragged(g, t, name, H * self.D)
        return t

    def _output(self, g, t, name, H, dtype):
        """a [T, H, D] output of the graph"""
        dim, stride = self._dims(H)
        t.set_output(True).set_dim(dim).set_stride(stride).set_data_type(dtype)
        self._ragged(g, t, name, H * self.D)

    def _stats_layout(self):
        """the softmax stats, [B, Hq, L, 1]: token-major when ragged (THD), else head-major"""
        B, H, L = self.B, self.Hq, self.L
        return (B, H, L, 1), ((L * H, 1, H, 1) if self.ragged else (L * H, L, 1, 1))

    def _scalar(self, g, name):
        return g.tensor(name=name, dim=(1, 1, 1, 1), stride=(1, 1, 1, 1), data_type=self.cudnn.data_type.FLOAT)

    def _finish(self, g):
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([self.cudnn.heur_mode.A, self.cudnn.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()

    def _common(self, od):
        """types, sizes and the causal mask both graphs share"""
        torch, cudnn = self.torch, self.cudnn
        E4M3, F32 = cudnn.data_type.FP8_E4M3, cudnn.data_type.FLOAT
        odt = {torch.bfloat16: cudnn.data_type.BFLOAT16, torch.float16: cudnn.data_type.HALF}.get(od, E4M3)
        mask = dict(diagonal_alignment=cudnn.diagonal_alignment.TOP_LEFT, right_bound=0)
        self._offsets, self._seqs = {}, []
        return torch, cudnn, E4M3, F32, odt, self.fp8["q"].device, self.Hq, self.Hkv, self.D, mask

    def _seqlens(self, g):
        if not self.ragged:
            return {}
        INT32 = self.cudnn.data_type.INT32
        sq = g.tensor(name="seq_q", dim=(self.B, 1, 1, 1), stride=(1, 1, 1, 1), data_type=INT32)
        sk = g.tensor(name="seq_kv", dim=(self.B, 1, 1, 1), stride=(1, 1, 1, 1), data_type=INT32)
        self._seqs += [sq, sk]
        return dict(use_padding_mask=True, seq_len_q=sq, seq_len_kv=sk)

    def _build_forward(self, od):
        """O (od) and the softmax stats for the backward"""
        torch, cudnn, E4M3, F32, odt, dev, Hq, Hkv, D, mask = self._common(od)
        gf = cudnn.pygraph(io_data_type=E4M3, intermediate_data_type=F32, compute_data_type=F32)
        q, k, v = (self._tensor(gf, n, h, E4M3) for n, h in (("q", Hq), ("k", Hkv), ("v", Hkv)))
        sc = {n: self._scalar(gf, n) for n in ("dq_", "dk_", "dv_", "ds_", "ss_", "so_")}
        o, stats, amax_s, amax_o = gf.sdpa_fp8(
            q=q, k=k, v=v, descale_q=sc["dq_"], descale_k=sc["dk_"], descale_v=sc["dv_"],
            descale_s=sc["ds_"], scale_s=sc["ss_"], scale_o=sc["so_"], generate_stats=True,
            attn_scale=self.scale, **mask, **self._seqlens(gf))
        self._output(gf, o, "o", Hq, odt)
        dim, stride = self._stats_layout()
        stats.set_output(True).set_dim(dim).set_stride(stride).set_data_type(F32)
        self._ragged(gf, stats, "st", Hq)
        for a in (amax_s, amax_o):
            a.set_output(True).set_dim((1, 1, 1, 1)).set_stride((1, 1, 1, 1)).set_data_type(F32)
        self._finish(gf)

        T = self.T_alloc
        self.o = torch.zeros((T, Hq, D), dtype=od, device=dev)
        self.stats = torch.zeros((T if self.ragged else self.B * Hq * self.L,) + ((Hq, 1) if self.ragged else ()),
                                 dtype=torch.float32, device=dev)
        self.amax_s, self.amax_o = (torch.zeros(1, dtype=torch.float32, device=dev) for _ in range(2))
        pack = {q: self.fp8["q"], k: self.fp8["k"], v: self.fp8["v"], o: self.o, stats: self.stats,
                amax_s: self.amax_s, amax_o: self.amax_o,
                sc["dq_"]: self.descale["q"], sc["dk_"]: self.descale["k"], sc["dv_"]: self.descale["v"],
                sc["ds_"]: self.s_descale, sc["ss_"]: self.s_scale, sc["so_"]: self.out_scale[0][0]}
        pack.update(self._ragged_pack())
        self.gf, self.pack_f = gf, pack
        self.in_f = {"q": (q, sc["dq_"]), "k": (k, sc["dk_"]), "v": (v, sc["dv_"])}
        self.ws_f = torch.empty(gf.get_workspace_size(), dtype=torch.uint8, device=dev)

    def _build_backward(self, od):
        """dQ, dK, dV (od) from the forward's O and stats"""
        torch, cudnn, E4M3, F32, odt, dev, Hq, Hkv, D, mask = self._common(od)
        T = self.T_alloc
        gb = cudnn.pygraph(io_data_type=E4M3, intermediate_data_type=F32, compute_data_type=F32)
        q, k, v = (self._tensor(gb, n, h, E4M3) for n, h in (("q", Hq), ("k", Hkv), ("v", Hkv)))
        ob = self._tensor(gb, "o", Hq, odt)
        dob = self._tensor(gb, "do", Hq, E4M3)
        dim, stride = self._stats_layout()
        st = gb.tensor(name="stats", dim=dim, stride=stride, data_type=F32)
        self._ragged(gb, st, "st", Hq)
        names = ("dsq", "dsk", "dsv", "dso", "dsdo", "dss", "dsdp", "ss", "sdq", "sdk", "sdv", "sdp")
        b = {n: self._scalar(gb, n) for n in names}
        dq, dk, dv, amax_dq, amax_dk, amax_dv, amax_dp = gb.sdpa_fp8_backward(
            q=q, k=k, v=v, o=ob, dO=dob, stats=st,
            descale_q=b["dsq"], descale_k=b["dsk"], descale_v=b["dsv"], descale_o=b["dso"],
            descale_dO=b["dsdo"], descale_s=b["dss"], descale_dP=b["dsdp"], scale_s=b["ss"],
            scale_dQ=b["sdq"], scale_dK=b["sdk"], scale_dV=b["sdv"], scale_dP=b["sdp"],
            attn_scale=self.scale, **mask, **self._seqlens(gb))
        outs = {}
        for t, n, H in ((dq, "dq", Hq), (dk, "dk", Hkv), (dv, "dv", Hkv)):
            self._output(gb, t, n, H, odt)
            outs[t] = torch.zeros((T, H, D), dtype=od, device=dev)
        amaxes = {}
        for a in (amax_dq, amax_dk, amax_dv, amax_dp):
            a.set_output(True).set_dim((1, 1, 1, 1)).set_stride((1, 1, 1, 1)).set_data_type(F32)
            amaxes[a] = torch.zeros(1, dtype=torch.float32, device=dev)
        self._finish(gb)
        pack = {q: self.fp8["q"], k: self.fp8["k"], v: self.fp8["v"], ob: self.o, dob: self.fp8["do"], st: self.stats,
                b["dsq"]: self.descale["q"], b["dsk"]: self.descale["k"], b["dsv"]: self.descale["v"],
                b["dso"]: self.out_scale[0][1], b["dsdo"]: self.descale["do"], b["dss"]: self.s_descale,
                b["dsdp"]: self.dp_descale, b["ss"]: self.s_scale, b["sdq"]: self.out_scale[1][0],
                b["sdk"]: self.out_scale[2][0], b["sdv"]: self.out_scale[3][0], b["sdp"]: self.dp_scale}
        pack.update(outs)
        pack.update(amaxes)
        pack.update(self._ragged_pack())
        self.gb, self.pack_b = gb, pack
        self.in_b = {"q": (q, b["dsq"]), "k": (k, b["dsk"]), "v": (v, b["dsv"]), "do": (dob, b["dsdo"])}
        self.grads = list(outs.values())
        self.ws_b = torch.empty(gb.get_workspace_size(), dtype=torch.uint8, device=dev)
        self.amax_back = [amaxes[x] for x in (amax_dq, amax_dk, amax_dv, amax_dp)]

    def _calibrate(self):
        """delayed scaling of dP (and of E4M3 outputs): from the amaxes of an untimed forward and
        backward run with every such scale 1 (so the amaxes are of the unscaled values whichever
        side of the scale cuDNN measures them), as a framework takes them from the previous step"""
        pairs = []
        if self.gb is not None:
            pairs.append((self.dp_scale, self.dp_descale, self.amax_back[3]))
        if self.out_dtype == self.torch.float8_e4m3fn:
            pairs.append(self.out_scale[0] + (self.amax_o,))
            if self.gb is not None:
                pairs += [sd + (a,) for sd, a in zip(self.out_scale[1:], self.amax_back[:3])]
        self.fwd()
        if self.gb is not None:
            self.bwd()
        self.torch.cuda.synchronize()
        for scale, descale, amax in pairs:
            a = float(amax.item())
            if a > 0 and math.isfinite(a):
                f = _pow2_at_most(E4M3_MAX / a)
                scale.fill_(f)
                descale.fill_(1.0 / f)

    def _ragged_pack(self):
        if not self.ragged:
            return {}
        pack = {t: (self.cu * per).contiguous() for t, per in self._offsets.items()}
        for t in self._seqs:
            pack[t] = self.seq
        return pack

    # ---------------------------------------------------------------- calls
    @staticmethod
    def _refresh(pack, inputs, fp8, descale):
        for n, (t, d) in inputs.items():  # quantize() made new buffers
            pack[t], pack[d] = fp8[n], descale[n]

    def fwd(self):
        self._refresh(self.pack_f, self.in_f, self.fp8, self.descale)
        self.gf.execute(self.pack_f, self.ws_f, handle=self.handle)

    def bwd(self):
        self._refresh(self.pack_b, self.in_b, self.fp8, self.descale)
        self.gb.execute(self.pack_b, self.ws_b, handle=self.handle)

    def outputs(self):
        """O (and dQ, dK, dV when the backward was built) of the last calls, [T, H, D] in FP32,
        descaled, padding rows cut off"""
        T = self.bf16["q"].shape[0]
        outs = [self.o] + (self.grads if self.gb is not None else [])
        return [x[:T].float() * d for x, (_, d) in zip(outs, self.out_scale)]
