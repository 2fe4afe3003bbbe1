"""Rank-side checks of the myriad backend: every collective, dtype and op, compared element-wise with the
same call on a gloo group of the same processes and with a reference computed here from every rank's
input (inputs are a known function of rank and salt, so each rank can compute anyone's). Where gloo lacks
the call or dtype (PREMUL_SUM, AVG, float8, list all_to_all ...) the local reference alone decides.
"""

import os
import sys
import traceback
import warnings

import torch
import torch.distributed as dist

import torch_myriad  # noqa: F401  registers the backend

SUM, PRODUCT, MIN, MAX, AVG = (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX,
                               dist.ReduceOp.AVG)
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.uint8, torch.int32, torch.int64]
UINTS = [torch.uint32, torch.uint64]
FP8 = [torch.float8_e4m3fn, torch.float8_e5m2]
PREMUL = "PREMUL_SUM(0.5)"
TRACE = bool(os.environ.get("MYRIAD_TORCH_TRACE"))  # print each check's name as it starts
warnings.filterwarnings("ignore", category=FutureWarning)  # torch's renames of collectives

# dtype -> the ops Myriad reduces it with through the plugin.
REDUCTIONS = {}
for _d in FLOATS:
    REDUCTIONS[_d] = [SUM, PRODUCT, MIN, MAX, AVG, PREMUL]
for _d in INTS:
    REDUCTIONS[_d] = [SUM, PRODUCT, MIN, MAX, AVG]
for _d in UINTS:
    REDUCTIONS[_d] = [SUM, PRODUCT, MIN, MAX]
REDUCTIONS[torch.bool] = [SUM, PRODUCT, MIN, MAX]
REDUCTIONS[torch.complex64] = [SUM, AVG, PREMUL]
for _d in FP8:
    REDUCTIONS[_d] = [MIN, MAX]
MOVEMENT = list(REDUCTIONS) + [torch.int16, torch.complex128]


def op_name(op):
    return op if isinstance(op, str) else str(op).split(".")[-1]


def make_op(op):
    return dist._make_nccl_premul_sum(0.5) if op == PREMUL else op


def inp(rank, salt, shape, dtype, op=None):
    """The input rank `rank` contributes, exact in every dtype (small integers, products stay small)."""
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    if op == PRODUCT:
        v = (i * 7 + rank * 3 + salt) % 3 + 1
    else:
        v = (i * 7 + rank * 13 + salt * 5) % 11 - 5
    if dtype == torch.bool:
        return (v % 2 == 0).reshape(shape)
    if dtype in (torch.uint8, torch.uint32, torch.uint64) or (dtype in FP8 and op is None):
        v = v.abs()
    if dtype.is_complex:
        im = (i * 3 + rank + salt) % 5 - 2
        return torch.complex(v.double(), im.double()).to(dtype).reshape(shape)
    return v.double().to(dtype).reshape(shape)


def wide(t):
    """A copy in a dtype torch computes with everywhere (float64, int64, complex128)."""
    if t.dtype.is_complex:
        return t.to(torch.complex128)
    if t.dtype.is_floating_point:
        return t.to(torch.float64)
    return t.to(torch.int64)


def reduce_local(tensors, op, dtype, world):
    x = torch.stack([wide(t) for t in tensors])
    if dtype == torch.bool:
        r = x.amax(0) if op in (SUM, MAX) else x.amin(0)
        return r.to(torch.bool)
    if op in (SUM, AVG, PREMUL):
        r = x.sum(0)
        if op == PREMUL:
            r = r * 0.5
        if op == AVG:
            r = r / world if (dtype.is_floating_point or dtype.is_complex) else torch.div(r, world, rounding_mode="trunc")
    elif op == PRODUCT:
        r = x.prod(0)
    elif op == MIN:
        r = x.amin(0)
    else:
        r = x.amax(0)
    return r.to(dtype)


def expect_same(got, want, what, loose=False):
    if isinstance(got, (list, tuple)):
        if len(got) != len(want):
            raise AssertionError(f"{what}: {len(got)} tensors, expected {len(want)}")
        for k, (g, w) in enumerate(zip(got, want)):
            expect_same(g, w, f"{what}[{k}]", loose)
        return
    if got.dtype != want.dtype or got.shape != want.shape:
        raise AssertionError(f"{what}: got {got.dtype} {tuple(got.shape)}, expected {want.dtype} {tuple(want.shape)}")
    g, w = wide(got), wide(want)
    ok = torch.allclose(g, w, rtol=1e-2, atol=1e-2) if loose else torch.equal(g, w)
    if not ok:
        raise AssertionError(f"{what}: got {g.flatten()[:12].tolist()}, expected {w.flatten()[:12].tolist()}")


class Checks:
    def __init__(self, rank, world, group, gloo, ranks=None, dtypes=None):
        self.rank = rank  # global rank
        self.dtypes = dtypes  # None: every dtype
        self.group, self.gloo = group, gloo
        self.ranks = ranks or list(range(world))  # global ranks of the group
        self.world = len(self.ranks)
        self.me = self.ranks.index(rank)  # rank in the group
        self.failures = []
        self.count = 0
        self.gloo_compared = 0

    def check(self, name, fn):
        self.count += 1
        if TRACE:
            print(f"rank {self.rank}: {name}", flush=True)
        try:
            fn()
        except Exception as e:  # noqa: BLE001  every failure is reported with its name
            self.failures.append(f"rank {self.rank}: {name}: {type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}")
            # at once: a rank that then hangs (its peers out of step with it) is killed before it reports
            print(self.failures[-1], file=sys.stderr, flush=True)

    def case(self, name, call, ref, loose=False, gloo=True):
        """call(group) -> this rank's outputs; ref() -> what they must be. Also run on gloo when it can
        (gloo=False where trying would leave gloo in a bad state, as a coalescing manager does)."""

        def body():
            out = call(self.group)
            expect_same(out, ref(), f"{name} vs reference", loose)
            if TRACE:
                print(f"rank {self.rank}: {name}: myriad done", flush=True)
            if not gloo:
                return
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    g = call(self.gloo)
            except (RuntimeError, ValueError, TypeError, NotImplementedError):
                return  # gloo lacks this call, dtype or op
            self.gloo_compared += 1
            expect_same(out, g, f"{name} vs gloo", loose)

        self.check(name, body)

    # ---- reductions ----
    def reductions(self, shape=(2, 5)):
        w, me = self.world, self.me
        for dtype, ops in REDUCTIONS.items():
            if self.dtypes is not None and dtype not in self.dtypes:
                continue
            for op in ops:
                loose = op in (AVG, PREMUL)
                tag = f"{dtype}/{op_name(op)}/n{w}"
                opr = op if op != PREMUL else None

                def all_reduce(g, dtype=dtype, op=op, opr=opr):
                    t = inp(me, 0, shape, dtype, opr)
                    dist.all_reduce(t, op=make_op(op), group=g)
                    return [t]

                self.case(f"all_reduce {tag}", all_reduce,
                          lambda dtype=dtype, op=op, opr=opr: [reduce_local(
                              [inp(r, 0, shape, dtype, opr) for r in range(w)], op, dtype, w)], loose)
                root = (w - 1) if dtype in (torch.float32, torch.int32) else 0

                def reduce(g, dtype=dtype, op=op, opr=opr, root=root):
                    t = inp(me, 1, shape, dtype, opr)
                    dist.reduce(t, dst=self.ranks[root], op=make_op(op), group=g)
                    return [t] if me == root else []

                self.case(f"reduce root {root} {tag}", reduce,
                          lambda dtype=dtype, op=op, opr=opr, root=root: [reduce_local(
                              [inp(r, 1, shape, dtype, opr) for r in range(w)], op, dtype, w)] if me == root else [],
                          loose)

                def rs_ref(dtype=dtype, op=op, opr=opr):
                    return [reduce_local([inp(r, 10 + me, shape, dtype, opr) for r in range(w)], op, dtype, w)]

                def reduce_scatter(g, dtype=dtype, op=op, opr=opr):
                    out = torch.empty(shape, dtype=dtype)
                    dist.reduce_scatter(out, [inp(me, 10 + p, shape, dtype, opr) for p in range(w)],
                                        op=make_op(op), group=g)
                    return [out]

                def reduce_scatter_tensor(g, dtype=dtype, op=op, opr=opr):
                    out = torch.empty(shape, dtype=dtype)
                    src = torch.cat([inp(me, 10 + p, shape, dtype, opr) for p in range(w)])
                    dist.reduce_scatter_tensor(out, src, op=make_op(op), group=g)
                    return [out]

                self.case(f"reduce_scatter {tag}", reduce_scatter, rs_ref, loose)
                self.case(f"reduce_scatter_tensor {tag}", reduce_scatter_tensor, rs_ref, loose)
            if SUM in ops:
                self.case(f"all_reduce_coalesced {dtype}/n{w}", lambda g, dtype=dtype: self._coalesced(g, dtype),
                          lambda dtype=dtype: [reduce_local([inp(r, 20 + k, (k + 1, 3), dtype) for r in range(w)],
                                                            SUM, dtype, w) for k in range(3)], gloo=False)

    def _coalesced(self, g, dtype):
        ts = [inp(self.me, 20 + k, (k + 1, 3), dtype) for k in range(3)]
        with dist._coalescing_manager(group=g, device=torch.device("cpu")):
            for t in ts:
                dist.all_reduce(t, group=g)
        return ts

    # ---- data movement ----
    def movement(self, shape=(2, 3)):
        w, me, R = self.world, self.me, self.ranks
        rows = lambda a, b: (a + 2 * b) % 3  # noqa: E731  rows a sends to b; some are 0
        for dtype in MOVEMENT:
            if self.dtypes is not None and dtype not in self.dtypes:
                continue
            tag = f"{dtype}/n{w}"
            for root in sorted({0, w - 1}):
                def broadcast(g, dtype=dtype, root=root):
                    t = inp(me, 30, shape, dtype)
                    dist.broadcast(t, src=R[root], group=g)
                    return [t]

                self.case(f"broadcast root {root} {tag}", broadcast,
                          lambda dtype=dtype, root=root: [inp(root, 30, shape, dtype)])

                def gather(g, dtype=dtype, root=root):
                    outs = [torch.empty(shape, dtype=dtype) for _ in range(w)] if me == root else None
                    dist.gather(inp(me, 31, shape, dtype), outs, dst=R[root], group=g)
                    return outs or []

                self.case(f"gather root {root} {tag}", gather,
                          lambda dtype=dtype, root=root: [inp(r, 31, shape, dtype) for r in range(w)]
                          if me == root else [])

                def scatter(g, dtype=dtype, root=root):
                    out = torch.empty(shape, dtype=dtype)
                    src = [inp(root, 40 + p, shape, dtype) for p in range(w)] if me == root else None
                    dist.scatter(out, src, src=R[root], group=g)
                    return [out]

                self.case(f"scatter root {root} {tag}", scatter,
                          lambda dtype=dtype, root=root: [inp(root, 40 + me, shape, dtype)])

            def all_gather(g, dtype=dtype):
                outs = [torch.empty(shape, dtype=dtype) for _ in range(w)]
                dist.all_gather(outs, inp(me, 32, shape, dtype), group=g)
                return outs

            self.case(f"all_gather {tag}", all_gather, lambda dtype=dtype: [inp(r, 32, shape, dtype) for r in range(w)])

            def all_gather_into_tensor(g, dtype=dtype):
                out = torch.empty((w * shape[0],) + shape[1:], dtype=dtype)
                dist.all_gather_into_tensor(out, inp(me, 33, shape, dtype), group=g)
                return [out]

            self.case(f"all_gather_into_tensor {tag}", all_gather_into_tensor,
                      lambda dtype=dtype: [torch.cat([inp(r, 33, shape, dtype) for r in range(w)])])

            def a2a_equal(g, dtype=dtype):
                out = torch.empty((w * 2, 3), dtype=dtype)
                dist.all_to_all_single(out, torch.cat([inp(me, 50 + p, (2, 3), dtype) for p in range(w)]), group=g)
                return [out]

            self.case(f"all_to_all_single {tag}", a2a_equal,
                      lambda dtype=dtype: [torch.cat([inp(p, 50 + me, (2, 3), dtype) for p in range(w)])])

            def a2a_splits(g, dtype=dtype):
                send = [rows(me, p) for p in range(w)]
                recv = [rows(p, me) for p in range(w)]
                src = torch.cat([inp(me, 60 + p, (send[p], 3), dtype) for p in range(w)])
                out = torch.empty((sum(recv), 3), dtype=dtype)
                dist.all_to_all_single(out, src, output_split_sizes=recv, input_split_sizes=send, group=g)
                return [out]

            self.case(f"all_to_all_single splits {tag}", a2a_splits,
                      lambda dtype=dtype: [torch.cat([inp(p, 60 + me, (rows(p, me), 3), dtype) for p in range(w)])])

            def a2a_list(g, dtype=dtype):
                outs = [torch.empty((rows(p, me) + 1,), dtype=dtype) for p in range(w)]
                dist.all_to_all(outs, [inp(me, 70 + p, (rows(me, p) + 1,), dtype) for p in range(w)], group=g)
                return outs

            self.case(f"all_to_all {tag}", a2a_list,
                      lambda dtype=dtype: [inp(p, 70 + me, (rows(p, me) + 1,), dtype) for p in range(w)])

            if w < 2:
                continue  # no peer for point-to-point

            def ring(g, dtype=dtype):
                out = torch.empty(shape, dtype=dtype)
                ops = [dist.P2POp(dist.isend, inp(me, 80, shape, dtype), R[(me + 1) % w], g),
                       dist.P2POp(dist.irecv, out, R[(me - 1) % w], g)]
                for work in dist.batch_isend_irecv(ops):
                    work.wait()
                return [out]

            self.case(f"batch_isend_irecv ring {tag}", ring, lambda dtype=dtype: [inp((me - 1) % w, 80, shape, dtype)])

            def send_recv(g, dtype=dtype):
                if me == 0:
                    dist.send(inp(0, 90, shape, dtype), dst=R[w - 1], group=g)
                    return []
                if me == w - 1:
                    out = torch.empty(shape, dtype=dtype)
                    dist.recv(out, src=R[0], group=g)
                    return [out]
                return []

            self.case(f"send/recv {tag}", send_recv,
                      lambda dtype=dtype: [inp(0, 90, shape, dtype)] if me == w - 1 else [])
        self.case(f"barrier n{w}", lambda g: dist.barrier(group=g) or [], lambda: [])

    # ---- non-contiguous tensors: results land in the view, the rest of the base stays untouched. Gloo is
    # not compared here: it reduces and writes the whole storage under a strided view. ----
    def noncontiguous(self):
        w, me = self.world, self.me

        def strided(values):
            base = torch.full((values.shape[0], 2 * values.shape[1]), -7.0)
            view = base[:, ::2]
            view.copy_(values)
            return base, view

        def all_reduce(g):
            base, view = strided(inp(me, 100, (3, 4), torch.float32))
            dist.all_reduce(view, group=g)
            return [base]

        def ar_ref():
            base, view = strided(reduce_local([inp(r, 100, (3, 4), torch.float32) for r in range(w)], SUM,
                                              torch.float32, w))
            return [base]

        self.case(f"all_reduce non-contiguous n{w}", all_reduce, ar_ref, gloo=False)

        def broadcast(g):
            base, view = strided(inp(me, 101, (3, 4), torch.float32))
            dist.broadcast(view, src=self.ranks[0], group=g)
            return [base]

        self.case(f"broadcast non-contiguous n{w}", broadcast,
                  lambda: [strided(inp(0, 101, (3, 4), torch.float32))[0]], gloo=False)

        def all_gather(g):
            src = inp(me, 102, (4, 3), torch.float32).t()  # transposed: not contiguous
            outs = [strided(torch.zeros(3, 4))[1] for _ in range(w)]
            dist.all_gather(outs, src, group=g)
            return [o.contiguous() for o in outs]

        self.case(f"all_gather non-contiguous n{w}", all_gather,
                  lambda: [inp(r, 102, (4, 3), torch.float32).t().contiguous() for r in range(w)], gloo=False)

        def reduce_scatter_tensor(g):
            blocks = torch.cat([inp(me, 110 + p, (3, 4), torch.float32) for p in range(w)])
            src = strided(blocks)[1]  # every other column of a wider base
            base, view = strided(torch.zeros(3, 4))
            dist.reduce_scatter_tensor(view, src, group=g)
            return [base]

        def rst_ref():
            mine = reduce_local([inp(r, 110 + me, (3, 4), torch.float32) for r in range(w)], SUM, torch.float32, w)
            return [strided(mine)[0]]

        self.case(f"reduce_scatter_tensor non-contiguous n{w}", reduce_scatter_tensor, rst_ref, gloo=False)

        if w < 2:
            return

        def recv_into_view(g):
            base, view = strided(torch.zeros(3, 4))
            ops = [dist.P2POp(dist.isend, inp(me, 120, (3, 4), torch.float32), self.ranks[(me + 1) % w], g),
                   dist.P2POp(dist.irecv, view, self.ranks[(me - 1) % w], g)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
            return [base]

        self.case(f"irecv non-contiguous n{w}", recv_into_view,
                  lambda: [strided(inp((me - 1) % w, 120, (3, 4), torch.float32))[0]], gloo=False)
